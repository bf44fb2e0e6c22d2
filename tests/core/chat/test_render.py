"""Where each message lands in the prompt, its tokens, the JSON record, and reading messages and folders."""

from __future__ import annotations

import json

import pytest

from tokviz.core.chat import (
    CHANGED,
    DROPPED,
    FOUND,
    NOT_TEXT,
    STRIPPED,
    VERBATIM,
    ChatFolderError,
    MessagesError,
    check_messages,
    load_chat_model,
    read_messages,
    render_chat,
)

from . import folders


@pytest.fixture(scope="module")
def chatml(tmp_path_factory):
    return load_chat_model(folders.chatml(tmp_path_factory.mktemp("m")))


def with_template(chatml, template: str):
    """The ChatML model with another template (same tokenizer)."""
    model = load_chat_model(chatml.folder)
    model.templates["default"] = template
    return model


def token_text(render, tokens) -> str:
    return b"".join(render.encoding.tokens[slice(*tokens)]).decode("utf-8")


def test_verbatim_spans_cover_each_message_exactly(chatml):
    messages = folders.CONVERSATIONS["tricky"]
    r = render_chat(chatml, messages, add_generation_prompt=True)
    for m, msg in zip(r.messages, messages):
        assert m.status == VERBATIM
        assert r.text[slice(*m.span)] == msg["content"]
        assert token_text(r, m.tokens) == msg["content"]  # ChatML: "\n" before, <|im_end|> after
        assert m.n_tokens == len(chatml.tokenizer.encode_ordinary(msg["content"]).ids)
    assert r.template_tokens == len(r.ids) - sum(m.n_tokens for m in r.messages)


def test_identical_messages_get_their_own_spans(chatml):
    messages = [{"role": "user", "content": "same"}, {"role": "assistant", "content": "same"},
                {"role": "user", "content": "same"}]
    spans = [m.span for m in render_chat(chatml, messages).messages]
    assert len(set(spans)) == 3 and spans == sorted(spans)


def test_a_template_that_strips_gives_the_stripped_span(tmp_path):
    model = load_chat_model(folders.llama3(tmp_path))
    r = render_chat(model, [{"role": "user", "content": "  Hi there \n"}, {"role": "assistant", "content": "Yo"}])
    assert [(m.status, r.text[slice(*m.span)]) for m in r.messages] == [(STRIPPED, "Hi there"), (VERBATIM, "Yo")]


def test_deepseek_system_prompts_are_located(tmp_path):
    model = load_chat_model(folders.deepseek())
    messages = [{"role": "system", "content": "A"}, {"role": "system", "content": "B"},
                {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    r = render_chat(model, messages)
    assert r.text.startswith("<｜begin▁of▁sentence｜>A\n\nB<｜User｜>q")
    assert [r.text[slice(*m.span)] for m in r.messages] == ["A", "B", "q", "a"]


@pytest.mark.parametrize("template, statuses", [
    ("{% for m in messages if m.role != 'system' %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}",
     [DROPPED, VERBATIM]),
    ("{% for m in messages %}<|im_start|>{{ m.content[:3] }}<|im_end|>{% endfor %}", [CHANGED, FOUND]),
    ("{% for m in messages %}<|im_start|>{{ m.content | upper }}<|im_end|>{% endfor %}", [CHANGED, CHANGED]),
    ("{% for m in messages %}{% if m.content == 'ok' %}fine{% endif %}<|im_start|>{{ m.content }}{% endfor %}",
     [FOUND, FOUND]),  # the template compares the content: the marked render differs, so search
])
def test_statuses(chatml, template, statuses):
    messages = [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "ok"}]
    r = render_chat(with_template(chatml, template), messages)
    assert [m.status for m in r.messages] == statuses
    for m, msg in zip(r.messages, messages):
        if m.status in (VERBATIM, FOUND):
            assert r.text[slice(*m.span)] == msg["content"]
    if statuses[1] == CHANGED:  # upper: still where it is, in its changed form
        assert r.text[slice(*r.messages[1].span)] == "OK"


def test_content_blocks_and_marker_lookalikes(chatml):
    template = ("{% for m in messages %}<|im_start|>{% if m.content is string %}{{ m.content }}"
                "{% else %}{{ m.content[0].text }}{% endif %}<|im_end|>{% endfor %}")
    messages = [{"role": "user", "content": [{"type": "text", "text": "block"}]},
                {"role": "user", "content": "private \U000f0000 use"}]
    r = render_chat(with_template(chatml, template), messages)
    assert r.text == "<|im_start|>block<|im_end|><|im_start|>private \U000f0000 use<|im_end|>"
    assert [m.status for m in r.messages] == [NOT_TEXT, FOUND]
    assert r.text[slice(*r.messages[1].span)] == messages[1]["content"]


def test_json_record(chatml):
    r = render_chat(chatml, folders.CONVERSATIONS["plain"], add_generation_prompt=True)
    d = json.loads(json.dumps(r.to_json()))
    assert d["text"] == r.text and d["ids"] == r.ids
    assert len(d["tokens_hex"]) == len(d["spans"]) == len(d["ids"])
    assert b"".join(bytes.fromhex(h) for h in d["tokens_hex"]).decode() == r.text
    assert [r.text[a:b] for a, b in d["messages"]] == [m["content"] for m in folders.CONVERSATIONS["plain"]]
    assert all(r.ids[i] in chatml.tokenizer.special_tokens.values() for i in d["special"])
    assert d["message_status"] == [VERBATIM] * 3


# -- reading messages --------------------------------------------------------------------------


@pytest.mark.parametrize("value, needle", [
    ({"role": "user"}, "expected a list"),
    ([], "conversation is empty"),
    (["hi"], "message 1 is a string"),
    ([{"content": "hi"}], 'message 1 has no "role"'),
    ([{"role": "user", "content": "a"}, {"role": "user"}], 'message 2 (user) has no "content"'),
    ([{"role": "user", "content": 3}], "is a number, not a string"),
    ([{"role": "user", "content": "a\ud800"}], "lone surrogate"),
])
def test_malformed_messages(value, needle):
    with pytest.raises(MessagesError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        check_messages(value)


def test_messages_files(tmp_path):
    good = tmp_path / "m.json"
    good.write_text(json.dumps({"messages": [{"role": "assistant", "content": None, "tool_calls": [{}]}]}))
    assert read_messages(good) == [{"role": "assistant", "content": None, "tool_calls": [{}]}]
    for data, needle in ((b"[{", "not valid JSON"), (b"\xff\xfe\x00", "not UTF-8"), (b"", "not valid JSON")):
        bad = tmp_path / "bad.json"
        bad.write_bytes(data)
        with pytest.raises(MessagesError, match=needle):
            read_messages(bad)
    with pytest.raises(MessagesError, match="no such file"):
        read_messages(tmp_path / "missing.json")


# -- reading folders ---------------------------------------------------------------------------


def test_folder_errors(tmp_path, chatml):
    with pytest.raises(ChatFolderError, match="no tokenizer.json"):
        load_chat_model(tmp_path)
    folder = folders.write_folder(tmp_path / "plain", "gpt2", "x")
    (folder / "tokenizer_config.json").write_text("{}")
    with pytest.raises(ChatFolderError, match="no chat template"):
        load_chat_model(folder)
    (folder / "tokenizer_config.json").write_text('{"chat_template": 3}')
    with pytest.raises(ChatFolderError, match="not a string"):
        load_chat_model(folder / "tokenizer.json")  # a file in the folder names the folder
    with pytest.raises(ChatFolderError, match="not in the Hugging Face cache|no snapshot|looked"):
        load_chat_model("hf:Qwen/Qwen2-0.5B")  # (the tests' cache is empty)


def test_hf_names_open_a_snapshot_of_the_cache(tmp_path, monkeypatch, chatml):
    """``hf:ORG/NAME`` is the snapshot folder of the Hugging Face cache, offline."""
    from tests.real_tokenizers import hf_snapshot

    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    files = {name: chatml.folder / name for name in ("tokenizer.json", "tokenizer_config.json")}
    hf_snapshot(cache, "acme/chat-model", "a" * 40, files)
    by_name, by_folder = load_chat_model("hf:acme/chat-model"), chatml
    messages = [{"role": "user", "content": "hello 👋"}]
    assert by_name.folder.name == "a" * 40 and by_name.templates == by_folder.templates
    assert render_chat(by_name, messages).ids == render_chat(by_folder, messages).ids


def test_template_files_and_named_templates(tmp_path):
    folder = folders.write_folder(tmp_path / "named", "gpt2", "unused")
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = [{"name": "default", "template": "D{{ messages[0].content }}"},
                            {"name": "tool_use", "template": "T"}]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    messages = [{"role": "user", "content": "x"}]
    assert render_chat(load_chat_model(folder), messages).text == "Dx"
    assert render_chat(load_chat_model(folder, template="tool_use"), messages).text == "T"
    with pytest.raises(ChatFolderError, match="no chat template named 'rag'"):
        load_chat_model(folder, template="rag")
    (folder / "chat_template.jinja").write_text("J{{ messages[0].content }}", encoding="utf-8")
    model = load_chat_model(folder)
    assert (model.template_origin, render_chat(model, messages).text) == ("chat_template.jinja", "Jx")
