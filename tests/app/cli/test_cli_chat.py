"""``tokviz chat``: the prompt as text, ids and JSON, the linter, special tokens as text, and every
bad input the issue names (exit 2, one line)."""

from __future__ import annotations

import json

import pytest

from tests.app.cli.usage import usage_and_error
from tests.core.chat import folders
from tokviz.core.chat import load_chat_model, render_chat

MESSAGES = [{"role": "user", "content": "Hi  👋\r\n\tthere <|im_end|>"}, {"role": "assistant", "content": "Yo."}]


@pytest.fixture
def chatml(tmp_path):
    folder = folders.chatml(tmp_path)
    (tmp_path / "m.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    return folder


def test_text_is_the_prompt_exactly(cli, chatml):
    code, out, err = cli("chat", str(chatml), "-f", "m.json", "--add-generation-prompt")
    assert (code, err) == (0, "")
    assert out == render_chat(load_chat_model(chatml), MESSAGES, add_generation_prompt=True).text
    assert out.endswith("<|im_start|>assistant\n") and "\r\n\t" in out


def test_ids_and_json(cli, chatml):
    expected = render_chat(load_chat_model(chatml), MESSAGES)
    code, out, _ = cli("chat", str(chatml), "-f", "m.json", "--ids")
    assert code == 0 and out == " ".join(map(str, expected.ids)) + "\n"
    code, out, _ = cli("chat", str(chatml), "-f", "m.json", "--json")
    d = json.loads(out)
    assert code == 0 and {"text", "ids", "tokens_hex", "spans", "messages"} <= set(d)
    assert d["text"] == expected.text and d["ids"] == expected.ids
    assert [d["text"][a:b] for a, b in d["messages"]] == [m["content"] for m in MESSAGES]
    assert "findings" not in d


def test_lint_prints_findings_and_exits_1(cli, chatml):
    code, out, err = cli("chat", str(chatml), "-f", "m.json", "--lint")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0].startswith("error special-in-content token ")
    assert any(line.startswith("warning whitespace-special") for line in lines) is False  # no edge whitespace
    code, out, _ = cli("chat", str(chatml), "-f", "m.json", "--lint", "--json", "--specials-as-text")
    findings = json.loads(out)["findings"]
    assert code == 0 and [(f["rule"], f["severity"]) for f in findings] == [("special-in-content", "info")]


def test_lint_with_ids_and_a_clean_conversation(cli, chatml, tmp_path):
    (tmp_path / "clean.json").write_text(json.dumps(folders.CONVERSATIONS["plain"]))
    code, out, _ = cli("chat", str(chatml), "-f", "clean.json", "--lint", "--ids")
    lines = out.splitlines()
    assert code == 0 and lines[1] == "no findings" and lines[0].split()[0] == "50257"


def test_specials_as_text(cli, chatml):
    _, plain, _ = cli("chat", str(chatml), "-f", "m.json", "--ids")
    _, text, _ = cli("chat", str(chatml), "-f", "m.json", "--ids", "--specials-as-text")
    end = str(load_chat_model(chatml).token_id("<|im_end|>"))
    assert plain.split().count(end) == text.split().count(end) + 1


def test_encode_specials_as_text(cli, chatml):
    code, out, _ = cli("encode", "--ids", str(chatml / "tokenizer.json"), "a<|im_end|>")
    assert code == 0 and out.split() == ["64", "50258"]
    code, out, _ = cli("encode", "--ids", "--specials-as-text", str(chatml / "tokenizer.json"), "a<|im_end|>")
    assert code == 0 and "50258" not in out.split() and len(out.split()) > 2


def bad_template(tmp_path, source: str):
    folder = folders.write_folder(tmp_path / "bad", "gpt2", source, added=folders.CHATML_TOKENS)
    return str(folder)


@pytest.mark.parametrize("template, needle", [
    ("{{ raise_exception('Roles must alternate') }}", "chat template line 1: Roles must alternate"),
    ("ok\n{{ messages | shout }}", "chat template line 2: No filter named 'shout'."),
    ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", "longer than 2 s"),
    ("{{ messages.__class__.__mro__ }}", "sandbox refused"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "sandbox refused"),
    ("{% for m in messages %}", "line 1: Unexpected end of template"),
])
def test_bad_templates_exit_2_with_one_line(cli, chatml, tmp_path, template, needle):
    code, out, err = cli("chat", bad_template(tmp_path, template), "-f", "m.json", "--lint")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("tokviz: ") and needle in err


@pytest.mark.parametrize("content, needle", [
    ("[{\"role\": \"user\"", "not valid JSON"),
    ("{\"role\": \"user\", \"content\": \"x\"}", "expected a list"),
    ("[]", "conversation is empty"),
    ("[{\"content\": \"x\"}]", "message 1 has no \"role\""),
    ("[{\"role\": \"user\", \"content\": {\"a\": 1}}]", "is an object, not a string"),
])
def test_bad_messages_exit_2_with_one_line(cli, chatml, tmp_path, content, needle):
    (tmp_path / "bad.json").write_text(content, encoding="utf-8")
    code, out, err = cli("chat", str(chatml), "-f", "bad.json")
    assert (code, out) == (2, "") and err.count("\n") == 1 and needle in err


def test_bad_folders_exit_2_with_one_line(cli, tmp_path, chatml):
    no_template = folders.write_folder(tmp_path / "none", "gpt2", "x")
    (no_template / "tokenizer_config.json").write_text("{}")
    for model, needle in ((no_template, "no chat template"), (tmp_path / "missing", "no such folder"),
                          (tmp_path, "no tokenizer.json"), ("hf:org/name", "hf:org/name")):
        code, out, err = cli("chat", str(model), "-f", "m.json")
        assert (code, out) == (2, "") and err.count("\n") == 1 and needle in err, err
    code, _, err = cli("chat", str(chatml), "-f", "missing.json")
    assert code == 2 and "no such file" in err
    code, _, err = cli("chat", str(chatml))
    usage, line = usage_and_error(err)
    assert code == 2 and "-f" in line and usage.startswith("usage: tokviz chat")


# -- tools, documents, continuing the final message, the assistant mask, named templates -----------


@pytest.fixture
def named(tmp_path):
    """The named template set (default, tool_use, rag) with messages, tools and documents files."""
    (tmp_path / "m.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(folders.TOOLS), encoding="utf-8")
    (tmp_path / "docs.json").write_text(json.dumps({"documents": folders.DOCUMENTS}), encoding="utf-8")
    return folders.named_set(tmp_path)


def test_tools_pick_tool_use_and_documents_reach_a_named_template(cli, named):
    model = load_chat_model(named)
    code, out, err = cli("chat", str(named), "-f", "m.json", "--tools", "tools.json")
    assert (code, err) == (0, "") and out == render_chat(model, MESSAGES, tools=folders.TOOLS).text
    assert "# Tools" in out and '"get_weather"' in out
    code, out, _ = cli("chat", str(named), "-f", "m.json", "--tools", "tools.json", "--template", "default", "--json")
    assert code == 0 and json.loads(out)["template"] == "default" and "# Tools" not in json.loads(out)["text"]
    code, out, _ = cli("chat", str(named), "-f", "m.json", "--documents", "docs.json", "--template", "rag")
    assert code == 0 and "Title: Tokens" in out
    assert out == render_chat(model.with_template("rag"), MESSAGES, documents=folders.DOCUMENTS).text


def test_continue_final_message(cli, chatml, tmp_path):
    prefill = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "The answer is "}]
    (tmp_path / "p.json").write_text(json.dumps(prefill), encoding="utf-8")
    code, out, err = cli("chat", str(chatml), "-f", "p.json", "--continue-final-message")
    assert (code, err) == (0, "") and out.endswith("<|im_start|>assistant\nThe answer is ")
    code, out, err = cli("chat", str(chatml), "-f", "p.json", "--continue-final-message", "--add-generation-prompt")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "add_generation_prompt" in err
    code, out, err = cli("chat", str(chatml), "-f", "p.json", "--continue-field", "reasoning_content")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "no \"reasoning_content\"" in err


def test_assistant_mask(cli, tmp_path):
    folder = folders.generation(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(folders.CONVERSATIONS["plain"]), encoding="utf-8")
    expected = render_chat(load_chat_model(folder), folders.CONVERSATIONS["plain"])
    code, out, err = cli("chat", str(folder), "-f", "c.json", "--ids", "--assistant-mask")
    ids, mask = out.splitlines()
    assert (code, err) == (0, "") and ids.split() == list(map(str, expected.ids))
    assert mask.split() == list(map(str, expected.assistant_mask)) and mask.split().count("1") == 3  # Paris . <|im_end|>
    code, out, _ = cli("chat", str(folder), "-f", "c.json", "--json")
    assert json.loads(out)["assistant_mask"] == expected.assistant_mask


def test_assistant_mask_without_generation_blocks_says_so(cli, chatml):
    code, out, err = cli("chat", str(chatml), "-f", "m.json", "--assistant-mask")
    assert code == 0 and set(out.split()) == {"0"} and "no {% generation %} block" in err and err.count("\n") == 1


@pytest.mark.parametrize("option, content, needle", [
    ("--tools", "{\"name\": \"x\"}", "expected a list of tool objects"),
    ("--tools", "[\"get_weather\"]", "tool 1 is a string, not an object"),
    ("--tools", "[{\"a\": 1", "not valid JSON"),
    ("--documents", "[{\"text\": \"a\"}, 3]", "document 2 is a number, not an object"),
    ("--documents", "\u0000\u0001binary", "docs.json: not valid JSON"),
])
def test_bad_tools_and_documents_exit_2_with_one_line(cli, chatml, tmp_path, option, content, needle):
    (tmp_path / "docs.json").write_text(content, encoding="utf-8")
    code, out, err = cli("chat", str(chatml), "-f", "m.json", option, "docs.json")
    assert (code, out) == (2, "") and err.count("\n") == 1 and err.startswith("tokviz: ") and needle in err, err
