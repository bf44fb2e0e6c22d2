"""The inputs beyond messages equal transformers' ``apply_chat_template``: tools, documents,
``continue_final_message``, ``{% generation %}`` blocks (the assistant mask), named template sets,
and the refusal of an empty conversation.

Reference: ``AutoTokenizer.from_pretrained(folder).apply_chat_template(...)`` (transformers 5,
offline on a local folder) with ``tokenize=False`` for the text, ``tokenize=True`` for the ids and
``return_assistant_tokens_mask=True`` for the mask. No shared model folder ships a template with
tools, documents or generation blocks, so the templates are written in `folders` after published
ones (Qwen 2.5's tools, Granite-style documents, the transformers documentation's generation blocks).
"""

from __future__ import annotations

import os

import pytest

from tokviz.core.chat import MessagesError, TemplateError, load_chat_model, render_chat, render_text
from tokviz.core.errors import TokvizError

from . import folders

SYSTEM = folders.CONVERSATIONS["system"]
PLAIN = folders.CONVERSATIONS["plain"]
TRICKY = folders.CONVERSATIONS["tricky"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory, transformers):
    """(tokviz's ChatModel, transformers' tokenizer) of a folder made by ``folders.NAME(tmp, *args)``."""
    cache: dict[tuple, tuple] = {}

    def get(name: str, *args):
        if (name, *args) not in cache:
            folder = folders.deepseek() if name == "deepseek" else getattr(folders, name)(
                tmp_path_factory.mktemp(name), *args)
            cache[(name, *args)] = (load_chat_model(folder),
                                    transformers.AutoTokenizer.from_pretrained(os.fspath(folder)))
        return cache[(name, *args)]

    return get


def reference(ref, messages, **kw):
    """(text, ids, assistant mask or None) from transformers, or the exception it raised."""
    try:
        text = ref.apply_chat_template(messages, tokenize=False, **kw)
        ids = list(ref.apply_chat_template(messages, tokenize=True, return_dict=False, **kw))
        mask = None
        if not kw.get("continue_final_message"):
            out = ref.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True,
                                          **kw)
            mask = list(out["assistant_masks"])
    except Exception as exc:  # noqa: BLE001 - compared with ours
        return exc
    return text, ids, mask


def check_equal(model, ref, messages, **kw):
    """tokviz's text, ids (and mask) equal transformers', or both refuse; returns the render or None."""
    expected = reference(ref, messages, **kw)
    if isinstance(expected, Exception):
        with pytest.raises(TokvizError):
            render_chat(model, messages, **kw)
        return None
    text, ids, mask = expected
    got = render_chat(model, messages, **kw)
    assert got.text == text
    assert got.ids == ids
    if mask is not None:
        assert got.assistant_mask == mask
    assert render_text(model, messages, **kw) == text
    return got


# -- tools ------------------------------------------------------------------------------------


@pytest.mark.parametrize("add_generation_prompt", [False, True])
@pytest.mark.parametrize("tools", ["none", "empty", "two"])
@pytest.mark.parametrize("conversation", ["tool_calls", "system", "plain"])
@pytest.mark.parametrize("name", ["qwen_tools", "deepseek"])
def test_tools_equal_apply_chat_template(pair, name, conversation, tools, add_generation_prompt):
    """Qwen 2.5's template lists the tools; DeepSeek V3's (shared, real) ignores them and refuses
    tool calls whose arguments are not a string, in both."""
    model, ref = pair(name)
    messages = {"tool_calls": folders.TOOL_CONVERSATION, "system": SYSTEM, "plain": PLAIN}[conversation]
    tool_list = {"none": None, "empty": [], "two": folders.TOOLS}[tools]
    got = check_equal(model, ref, messages, tools=tool_list, add_generation_prompt=add_generation_prompt)
    if name == "qwen_tools":
        assert got is not None and ("# Tools" in got.text) == (tools == "two")


def test_tool_call_messages_are_located(pair):
    """A message with tool calls and no content is not text; the tool responses are found."""
    model, _ = pair("qwen_tools")
    got = render_chat(model, folders.TOOL_CONVERSATION, tools=folders.TOOLS)
    assert [m.status for m in got.messages] == ["verbatim", "not text", "verbatim", "verbatim", "verbatim"]
    assert got.text[slice(*got.messages[3].span)] == "sunny"


def test_tools_that_are_not_objects_are_refused_like_transformers(pair):
    model, ref = pair("qwen_tools")
    for bad in (["get_weather"], [folders.TOOLS[0], 3]):
        assert isinstance(reference(ref, PLAIN, tools=bad), ValueError)
        with pytest.raises(MessagesError, match="tool 1|tool 2"):
            render_chat(model, PLAIN, tools=bad)
    with pytest.raises(MessagesError, match="a list"):
        render_chat(model, PLAIN, tools={"name": "x"})


# -- documents --------------------------------------------------------------------------------


@pytest.mark.parametrize("add_generation_prompt", [False, True])
@pytest.mark.parametrize("documents", ["none", "empty", "two"])
def test_documents_equal_apply_chat_template(pair, documents, add_generation_prompt):
    model, ref = pair("rag")
    docs = {"none": None, "empty": [], "two": folders.DOCUMENTS}[documents]
    got = check_equal(model, ref, TRICKY, documents=docs, add_generation_prompt=add_generation_prompt)
    assert got is not None and ("Title: Tokens" in got.text) == (documents == "two")
    assert [m.status for m in got.messages] == ["verbatim"] * 3


def test_documents_that_are_not_objects_are_refused_like_transformers(pair):
    model, ref = pair("rag")
    assert isinstance(reference(ref, PLAIN, documents=["just text"]), TypeError)
    with pytest.raises(MessagesError, match="document 1"):
        render_chat(model, PLAIN, documents=["just text"])


# -- generation blocks: the assistant mask ----------------------------------------------------


@pytest.mark.parametrize("add_generation_prompt", [False, True])
@pytest.mark.parametrize("conversation", sorted(folders.CONVERSATIONS))
@pytest.mark.parametrize("template", ["GENERATION", "GENERATION_MACRO"])
@pytest.mark.parametrize("base", ["gpt2", "mistral-7b-v0.1"])
def test_assistant_mask_equals_return_assistant_tokens_mask(pair, base, template, conversation,
                                                            add_generation_prompt):
    """The tokens inside ``{% generation %}`` blocks, as transformers marks them (every token
    overlapping a block), on a byte-level BPE and a SentencePiece-style tokenizer; a block inside a
    macro is counted from what was output before the macro (transformers' rule)."""
    model, ref = pair("generation", getattr(folders, template), base)
    got = check_equal(model, ref, folders.CONVERSATIONS[conversation], add_generation_prompt=add_generation_prompt)
    assert got is not None and got.has_generation


def test_assistant_mask_marks_the_assistant_turns(pair):
    """A known answer: the mask covers exactly the assistant's content and its end token."""
    model, _ = pair("generation", folders.GENERATION, "gpt2")
    got = render_chat(model, PLAIN)
    (a, b), = got.generation
    assert got.text[a:b] == "Paris.<|im_end|>"
    masked = [i for i, m in enumerate(got.assistant_mask) if m]
    assert b"".join(got.encoding.tokens[i] for i in masked) == b"Paris.<|im_end|>"


def test_no_generation_block_gives_an_empty_mask(pair):
    model, ref = pair("qwen_tools")
    got = check_equal(model, ref, PLAIN)
    assert not got.has_generation and got.generation == [] and set(got.assistant_mask) == {0}


# -- continue_final_message -------------------------------------------------------------------

PREFILL = [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "The colour is "}]
PREFILL_BLOCKS = [{"role": "user", "content": "Hi"},
                  {"role": "assistant", "content": [{"type": "text", "text": "Hello"}, {"type": "image"},
                                                    {"type": "text", "text": " there, "}]}]
BLOCKS = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.content is string %}{{ m.content }}{% else %}"
          "{% for b in m.content %}{{ b.text if b.type == 'text' else '<image>' }}{% endfor %}{% endif %}<|im_end|>\n"
          "{% endfor %}")
CONTINUING = {"chatml": (), "llama3": (), "pretty": (), "generation": (), "blocks": (BLOCKS,), "deepseek": ()}
REASONING = [{"role": "user", "content": "2+2?"},
             {"role": "assistant", "content": "4", "reasoning_content": "Two and two "}]


@pytest.mark.parametrize("conversation", ["prefill", "tricky", "plain", "blocks"])
@pytest.mark.parametrize("name", sorted(CONTINUING))
def test_continue_final_message_equals_transformers(pair, name, conversation):
    """The prompt stops inside the final message: spacing kept (ChatML), trimmed by the template
    (Llama 3's ``| trim``), content blocks (the last text block); or both refuse."""
    model, ref = pair("generation" if name == "blocks" else name, *CONTINUING[name])
    messages = {"prefill": PREFILL, "tricky": TRICKY, "plain": PLAIN, "blocks": PREFILL_BLOCKS}[conversation]
    got = check_equal(model, ref, messages, continue_final_message=True)
    if got is not None and conversation == "prefill":
        end = got.messages[-1]
        assert got.text.rstrip().endswith("The colour is") and end.span[1] <= len(got.text)
        assert not got.text.endswith("<|im_end|>\n")


def test_continue_final_message_keeps_trailing_space_when_the_template_does(pair):
    model, _ = pair("chatml")
    got = render_chat(model, PREFILL, continue_final_message=True)
    assert got.text.endswith("<|im_start|>assistant\nThe colour is ")
    assert got.text[slice(*got.messages[-1].span)] == "The colour is " and got.messages[-1].status == "verbatim"


def test_continue_a_named_field(pair):
    """``continue_final_message="reasoning_content"``: the prompt stops inside the reasoning; a
    field the template never reads is refused by both."""
    model, ref = pair("generation")
    got = check_equal(model, ref, REASONING, continue_final_message="reasoning_content")
    assert got.text.endswith("<think>Two and two ")
    assert isinstance(reference(ref, REASONING, continue_final_message="answer_draft"), ValueError)
    with pytest.raises(TokvizError, match="answer_draft"):
        render_chat(model, REASONING, continue_final_message="answer_draft")


def test_continue_is_refused_with_a_generation_prompt_and_when_the_template_drops_the_message(pair):
    model, ref = pair("chatml")
    assert isinstance(reference(ref, PREFILL, continue_final_message=True, add_generation_prompt=True), ValueError)
    with pytest.raises(MessagesError, match="add_generation_prompt"):
        render_chat(model, PREFILL, continue_final_message=True, add_generation_prompt=True)
    model, ref = pair("generation", "{% for m in messages if m.role == 'user' %}{{ m.content }}{% endfor %}")
    assert isinstance(reference(ref, PREFILL, continue_final_message=True), ValueError)
    with pytest.raises(TemplateError, match="does not appear"):
        render_chat(model, PREFILL, continue_final_message=True)


# -- named template sets ----------------------------------------------------------------------


@pytest.mark.parametrize(("template", "tools", "documents", "expected"), [
    (None, None, None, "default"),
    (None, folders.TOOLS, None, "tool_use"),
    (None, [], None, "tool_use"),  # tools given, even none: transformers picks tool_use
    (None, None, folders.DOCUMENTS, "default"),  # documents pick nothing: rag is chosen by name
    ("default", folders.TOOLS, None, "default"),
    ("rag", None, folders.DOCUMENTS, "rag"),
    ("tool_use", None, None, "tool_use"),
])
def test_named_templates_are_picked_like_transformers(pair, transformers, template, tools, documents, expected):
    model, ref = pair("named_set")
    if template is not None:
        model = model.with_template(template)
    kw = {"chat_template": template} if template else {}
    text = ref.apply_chat_template(PLAIN, tools=tools, documents=documents, tokenize=False, **kw)
    got = render_chat(model, PLAIN, tools=tools, documents=documents)
    assert (got.text, got.template_name) == (text, expected)
    assert got.ids == list(ref.apply_chat_template(PLAIN, tools=tools, documents=documents, return_dict=False, **kw))


def test_a_name_given_when_loading_is_kept_with_tools(pair):
    model, _ = pair("named_set")
    pinned = load_chat_model(model.folder, template="default")
    assert render_chat(pinned, PLAIN, tools=folders.TOOLS).template_name == "default"
    assert render_chat(model, PLAIN, tools=folders.TOOLS).template_name == "tool_use"


# -- the empty conversation -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["chatml", "deepseek"])
def test_an_empty_conversation_is_refused_like_transformers(pair, name):
    model, ref = pair(name)
    expected = reference(ref, [])
    assert isinstance(expected, ValueError) and "empty conversation" in str(expected)
    for render in (render_chat, render_text):
        with pytest.raises(MessagesError, match="empty conversation"):
            render(model, [])
