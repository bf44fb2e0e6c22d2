"""Chat templates: a conversation rendered exactly as the model sees it, and the classic prompt bugs.

`load_chat_model(folder)` reads a Hugging Face model folder (``tokenizer.json``,
``tokenizer_config.json`` with its Jinja ``chat_template``, named special tokens and added tokens);
`render_chat(model, messages, add_generation_prompt=...)` renders it in a time-limited sandbox as
transformers' ``apply_chat_template`` does, encodes it with tokviz's own tokenizer and locates every
message (`ChatRender`: text, `Encoding`, `MessageSpan` per message); `lint_chat` lists what is
likely wrong with the prompt (`Finding`, each pointing at token indices).

Core: no Qt. What this leaves out: drawing (``tokviz.panels.chat``), the command line
(``tokviz.app.cli.chat``).
"""

from .folder import ChatFolderError, ChatModel, load_chat_model, model_folder
from .lint import RULES, Finding, lint_chat
from .messages import MessagesError, check_messages, read_messages, template_messages
from .render import (
    CHANGED,
    DROPPED,
    FOUND,
    NOT_TEXT,
    STRIPPED,
    VERBATIM,
    ChatRender,
    MessageSpan,
    locate_messages,
    render_chat,
    render_text,
    token_range,
)
from .sandbox import DEFAULT_TIMEOUT, TemplateError, TemplateTimeout, render_template

__all__ = [name for name in dir() if not name.startswith("_")]
