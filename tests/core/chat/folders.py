"""Model folders for the chat tests: real tokenizers from ../shared with chat templates written here.

Each template follows the published one of its family (whitespace control, filters and all):
ChatML (Qwen's, with a default system prompt), Llama 3 (``trim`` on every message), Gemma
(``raise_exception`` for a system role, ``model`` for the assistant), Mistral/Llama 2 (``[INST]``
with BOS from the template and again from the tokenizer's post-processor), and a multi-line ChatML
written with ``{%- -%}``, ``namespace``, ``loop`` controls and ``tojson``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import shared_file

CHATML = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

LLAMA3 = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
    "{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)

GEMMA = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
    "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
    "{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)

MISTRAL = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"
)

PRETTY_CHATML = """{%- set ns = namespace(system='', turns=0) %}
{%- for message in messages %}
    {%- if message.role == 'system' %}
        {%- set ns.system = message.content %}
        {%- continue %}
    {%- endif %}
    {%- if loop.first %}
<|im_start|>system
{{ ns.system or 'Default system.' }}<|im_end|>
    {%- endif %}
    {%- if message.role == 'stop' %}{% break %}{% endif %}
    {%- set ns.turns = ns.turns + 1 %}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{%- endfor %}
{%- if add_generation_prompt %}
<|im_start|>assistant
{%- endif %}
<!-- {{ messages | map(attribute='role') | list | tojson }} {{ {'turns': ns.turns, 'last': messages[-1].content} | tojson }} -->
"""

CHATML_TOKENS = ("<|im_start|>", "<|im_end|>")
LLAMA3_TOKENS = ("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")
GEMMA_TOKENS = ("<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>")


def write_folder(folder: Path, base: str, template: str, *, added: tuple[str, ...] = (), config: dict | None = None,
                 config_added: dict | None = None) -> Path:
    """A model folder: the shared ``tokenizer.json`` of `base` (``gpt2``, ``mistral-7b-v0.1``) with
    `added` special tokens appended, and a ``tokenizer_config.json`` with `template` and `config`."""
    data = json.loads(shared_file("vocab", "hf", base, "tokenizer.json").read_text(encoding="utf-8"))
    have = {t["content"] for t in data["added_tokens"]}
    next_id = max(max(data["model"]["vocab"].values()), *(t["id"] for t in data["added_tokens"])) + 1
    decoder = {}
    for content in added:
        if content in have:
            continue
        entry = {"id": next_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True}
        data["added_tokens"].append(entry)
        decoder[str(next_id)] = {k: v for k, v in entry.items() if k != "id"}
        next_id += 1
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    cfg = {"chat_template": template, "added_tokens_decoder": {**decoder, **(config_added or {})}, **(config or {})}
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return folder


def chatml(tmp: Path, template: str = CHATML) -> Path:
    return write_folder(tmp / "chatml", "gpt2", template, added=CHATML_TOKENS,
                        config={"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": None})


def llama3(tmp: Path) -> Path:
    return write_folder(tmp / "llama3", "gpt2", LLAMA3, added=LLAMA3_TOKENS,
                        config={"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})


def gemma(tmp: Path) -> Path:
    return write_folder(tmp / "gemma", "gpt2", GEMMA, added=GEMMA_TOKENS,
                        config={"bos_token": {"__type": "AddedToken", "content": "<bos>", "lstrip": False,
                                              "normalized": False, "rstrip": False, "single_word": False},
                                "eos_token": "<eos>"})


def mistral(tmp: Path) -> Path:
    return write_folder(tmp / "mistral", "mistral-7b-v0.1", MISTRAL,
                        config={"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True})


def pretty(tmp: Path) -> Path:
    return write_folder(tmp / "pretty", "gpt2", PRETTY_CHATML, added=CHATML_TOKENS,
                        config={"eos_token": "<|im_end|>"})


def deepseek() -> Path:
    return shared_file("vocab", "hf", "deepseek-v3")


# Conversations: emoji, CRLF, tabs, double spaces, special-token strings typed by the user, edge whitespace.
TRICKY = "héllo  wörld 👋🏽 👩‍💻 東京\r\nline two\twith\ttabs  and  double  spaces\n\n"
CONVERSATIONS = {
    "plain": [{"role": "user", "content": "What is the capital of France?"},
              {"role": "assistant", "content": "Paris."},
              {"role": "user", "content": "And of Japan?"}],
    "tricky": [{"role": "user", "content": TRICKY},
               {"role": "assistant", "content": " 🌍 leading space and trailing tab\t"},
               {"role": "user", "content": "ok"}],
    "specials": [{"role": "user", "content": "Say <|im_end|><|im_start|>system and <s> or </s> "
                                             "<|eot_id|> <start_of_turn>model <｜end▁of▁sentence｜>"},
                 {"role": "assistant", "content": "<|endoftext|> no."},
                 {"role": "user", "content": "\r\n  "}],
    "system": [{"role": "system", "content": "Be brief.\n"},
               {"role": "user", "content": "Hi\t!"},
               {"role": "assistant", "content": ""},
               {"role": "user", "content": "¿Qué tal?  "}],
}


# -- the inputs beyond messages: tools, documents, generation blocks, named template sets -------------------

# Qwen 2.5's published template (tools as JSON in the system turn, tool calls and tool responses).
QWEN_TOOLS = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

# Granite 3 style retrieval: documents in a turn of their own, titles optional.
RAG_TOKENS = ("<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>")
RAG = """{%- if documents %}
<|start_of_role|>documents<|end_of_role|>
{%- for document in documents %}
Document {{ loop.index0 }}
{%- if document.title %}
Title: {{ document.title }}
{%- endif %}
{{ document.text }}
{%- endfor %}<|end_of_text|>
{% endif %}
{%- for message in messages %}<|start_of_role|>{{ message.role }}<|end_of_role|>{{ message.content }}<|end_of_text|>
{% endfor %}
{%- if add_generation_prompt %}<|start_of_role|>assistant<|end_of_role|>{% endif %}"""

# ChatML with the assistant's turns in generation blocks (the transformers documentation's example),
# reasoning rendered before the answer (for continue_final_message="reasoning_content").
GENERATION = """{%- for message in messages %}
    {%- if message['role'] == 'assistant' %}
        {{- '<|im_start|>assistant\\n' }}
        {%- if message.reasoning_content is defined %}{{- '<think>' + message.reasoning_content + '</think>\\n' }}{%- endif %}
        {%- generation %}
        {{- message['content'] + '<|im_end|>' }}
        {%- endgeneration %}
        {{- '\\n' }}
    {%- else %}
        {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"""

# A generation block inside a macro: its output is buffered, so the block's start is counted from what
# was output before the macro's call (transformers' rule, reproduced, odd as it is).
GENERATION_MACRO = """{%- macro turn(m) %}<|im_start|>{{ m.role }}
{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}

{% endmacro %}{% for m in messages %}{{ turn(m) }}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city — with 'quotes' and \"ünïcode\" 👋",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "description": "The time", "parameters": {"type": "object",
                                                                                                  "properties": {}}}},
]
TOOL_CONVERSATION = [
    {"role": "user", "content": "Weather in Zürich?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich", "unit": "celsius"}}}]},
    {"role": "tool", "content": "{\"temp\": 21}"},
    {"role": "tool", "content": "sunny"},
    {"role": "assistant", "content": "21 °C and sunny."},
]
DOCUMENTS = [{"title": "Tokens", "text": "A token is a piece of text.\nIt has an id."},
             {"text": "Untitled: 東京 👋🏽  double  spaces"}]


def qwen_tools(tmp: Path) -> Path:
    return write_folder(tmp / "qwen", "gpt2", QWEN_TOOLS, added=CHATML_TOKENS,
                        config={"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})


def rag(tmp: Path) -> Path:
    return write_folder(tmp / "rag", "gpt2", RAG, added=RAG_TOKENS, config={"eos_token": "<|end_of_text|>"})


def generation(tmp: Path, template: str = GENERATION, base: str = "gpt2") -> Path:
    return write_folder(tmp / "generation", base, template, added=CHATML_TOKENS, config={"eos_token": "<|im_end|>"})


def named_set(tmp: Path) -> Path:
    """A folder whose config holds a list of named templates: ``default`` (ChatML), ``tool_use``
    (Qwen's) and ``rag``."""
    folder = write_folder(tmp / "named", "gpt2", "", added=CHATML_TOKENS + RAG_TOKENS,
                          config={"eos_token": "<|im_end|>"})
    cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    cfg["chat_template"] = [{"name": "default", "template": CHATML}, {"name": "tool_use", "template": QWEN_TOOLS},
                            {"name": "rag", "template": RAG}]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return folder
