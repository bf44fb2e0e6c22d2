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
