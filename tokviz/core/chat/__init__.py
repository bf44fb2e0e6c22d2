"""Chat templates: a conversation rendered exactly as the model sees it, and the classic prompt bugs.

`load_chat_model(folder)` reads a Hugging Face model folder (``tokenizer.json``,
``tokenizer_config.json`` with its Jinja ``chat_template``, named special tokens and added tokens);
`render_chat(model, messages, add_generation_prompt=..., tools=..., documents=...,
continue_final_message=...)` renders it as transformers' ``apply_chat_template`` does (the checks of
those inputs: `tokviz.core.chat.inputs`; the assistant mask of ``{% generation %}`` blocks:
`ChatRender.assistant_mask`), in a sandbox inside a child process with hard limits
(`TemplateRunner`; a template that passes one raises `TemplateStopped`), encodes it with tokviz's
own tokenizer and locates every message (`ChatRender`: text, `Encoding`, `MessageSpan` per
message); `lint_chat` lists what is likely wrong with the prompt (`Finding`, each pointing at token
indices).

The names are imported from their modules when first used (PEP 562): the template child imports
the sandbox without the tokenizers. Core: no Qt. What this leaves out: drawing
(``tokviz.panels.chat``), the command line (``tokviz.app.cli.chat``).
"""

from __future__ import annotations

from tokviz.core.lazy_names import lazy_names

_WHERE = {  # name -> the module that defines it
    "ChatFolderError": ".folder",
    "ChatModel": ".folder",
    "load_chat_model": ".folder",
    "model_folder": ".folder",
    "RULES": ".lint",
    "Finding": ".lint",
    "lint_chat": ".lint",
    "check_objects": ".inputs",
    "read_objects": ".inputs",
    "MessagesError": ".messages",
    "check_messages": ".messages",
    "read_messages": ".messages",
    "template_messages": ".messages",
    "CHANGED": ".render",
    "DROPPED": ".render",
    "FOUND": ".render",
    "NOT_TEXT": ".render",
    "STRIPPED": ".render",
    "VERBATIM": ".render",
    "ChatRender": ".render",
    "MessageSpan": ".render",
    "locate_messages": ".render",
    "render_chat": ".render",
    "render_text": ".render",
    "token_range": ".render",
    "DEFAULT_TIMEOUT": ".sandbox",
    "TemplateError": ".sandbox",
    "TemplateOutOfMemory": ".sandbox",
    "TemplateTimeout": ".sandbox",
    "Rendered": ".sandbox",
    "has_generation_block": ".sandbox",
    "render_template": ".sandbox",
    "render_tracked": ".sandbox",
    "MEMORY_LIMIT_BYTES": ".contained",
    "TemplateRunner": ".contained",
    "TemplateStopped": ".contained",
    "default_runner": ".contained",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
