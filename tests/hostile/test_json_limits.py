"""Integers longer than Python converts (4,300 digits by default) in every JSON file tokviz reads:
tokenizer.json (WordLevel ids, Unigram ``unk_id``), tokenizer_config.json, messages files, model
files, sessions, GPT-2's encoder.json, tiktoken info files, lessons. Each is one line naming the
file (status 2 in the CLI, a message in the window), never a traceback."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tokviz.core.errors import TokvizError
from tokviz.core.io.safe_files import parse_json

HUGE = "1" * 5000  # past sys.get_int_max_str_digits() (4,300)
DIGITS = "4,300 digits"


def _tokenizer_json(model: str) -> str:
    return ('{"version": "1.0", "added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, '
            '"post_processor": null, "decoder": null, "model": %s}' % model)


WORD_LEVEL = _tokenizer_json('{"type": "WordLevel", "vocab": {"hello": 0, "world": %s, "[UNK]": 1}, '
                             '"unk_token": "[UNK]"}' % HUGE)
UNIGRAM = _tokenizer_json('{"type": "Unigram", "unk_id": %s, "vocab": [["hello", -1.0], ["world", -2.0]]}' % HUGE)
GOOD_TOKENIZER = _tokenizer_json('{"type": "WordLevel", "vocab": {"hello": 0, "world": 1, "[UNK]": 2}, '
                                 '"unk_token": "[UNK]"}')
CONFIG = '{"chat_template": "{{ messages[0][\'content\'] }}", "model_max_length": %s}'
MESSAGES = '[{"role": "user", "content": "hello"}]'


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _tiktoken_with_info(folder: Path) -> Path:
    """A small .tiktoken of no OpenAI encoding, whose pattern comes from its info file."""
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    _write(folder, {"mine.tiktoken": "\n".join(lines) + "\n",
                    "mine.tiktoken.json": '{"format": "tokviz-tiktoken-info", "pattern": "\\\\S+", "n": %s}' % HUGE})
    return folder / "mine.tiktoken"


def _case(kind: str, tmp_path: Path) -> tuple[list[str], Path]:
    """The command line for one JSON kind holding the huge integer, and the file it is in."""
    d = tmp_path / kind
    if kind == "tokenizer.json WordLevel id":
        return ["encode", "--ids", str(_write(d, {"tokenizer.json": WORD_LEVEL}) / "tokenizer.json"), "hello"], \
            d / "tokenizer.json"
    if kind == "tokenizer.json Unigram unk_id":
        return ["encode", "--ids", str(_write(d, {"tokenizer.json": UNIGRAM}) / "tokenizer.json"), "hello"], \
            d / "tokenizer.json"
    if kind == "tokenizer_config.json":
        _write(d, {"tokenizer.json": GOOD_TOKENIZER, "tokenizer_config.json": CONFIG % HUGE, "m.json": MESSAGES})
        return ["chat", str(d), "-f", str(d / "m.json")], d / "tokenizer_config.json"
    if kind == "messages":
        _write(d, {"tokenizer.json": GOOD_TOKENIZER, "tokenizer_config.json": CONFIG % 1,
                   "m.json": '[{"role": "user", "content": "hello", "n": %s}]' % HUGE})
        return ["chat", str(d), "-f", str(d / "m.json")], d / "m.json"
    if kind == "model file":
        _write(d, {"m.json": '{"format": "tokviz-model", "version": %s}' % HUGE})
        return ["encode", str(d / "m.json"), "hello"], d / "m.json"
    if kind == "encoder.json":
        _write(d, {"vocab.bpe": "#version: 0.2\n", "encoder.json": '{"h": %s}' % HUGE})
        return ["encode", "--ids", str(d), "hello"], d / "encoder.json"
    if kind == "tiktoken info":
        return ["encode", "--ids", str(_tiktoken_with_info(d)), "hello"], d / "mine.tiktoken.json"
    raise AssertionError(kind)


KINDS = ["tokenizer.json WordLevel id", "tokenizer.json Unigram unk_id", "tokenizer_config.json", "messages",
         "model file", "encoder.json", "tiktoken info"]


@pytest.mark.parametrize("kind", KINDS)
def test_cli_says_one_line_naming_the_file(cli, tmp_path, kind):
    argv, path = _case(kind, tmp_path)
    code, out, err = cli(*argv)
    assert code == 2 and out == "", (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert path.name in lines[0] and DIGITS in lines[0]
    assert len(lines[0]) < 400  # the number itself is not repeated


def test_sessions_and_lessons_are_one_line(tmp_path):
    from tokviz.core.lessons.files import LessonError, load_lesson_text
    from tokviz.core.saved.session import load_session

    session = tmp_path / "s.tokviz"
    session.write_text('{"format": "tokviz-session", "version": 1, "step": %s}' % HUGE, encoding="utf-8")
    with pytest.raises(TokvizError, match=DIGITS) as err:
        load_session(session)
    assert str(session) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(LessonError, match=f"lesson x.json: .*{DIGITS}"):
        load_lesson_text('{"number": %s}' % HUGE, "x.json")


def test_the_one_parser_keeps_what_python_reads():
    assert parse_json(b'\xef\xbb\xbf{"n": %s}' % ("9" * 4300).encode(), "x.json") == {"n": int("9" * 4300)}
    assert parse_json('[1e999, -0.0]', "x.json") == [float("inf"), -0.0]  # floats have no digit limit
    for data in (b"[%s]" % HUGE.encode(), "[-%s]" % HUGE, '{"a": [[%s]]}' % HUGE):
        with pytest.raises(TokvizError, match=f"^x.json: not valid JSON \\(a number of more than {DIGITS}"):
            parse_json(data, "x.json")


# -- the window ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tokenizer.json WordLevel id", "tokenizer.json Unigram unk_id", "encoder.json",
                                  "tiktoken info"])
def test_window_says_why_a_tokenizer_did_not_open(window, dialogs, tmp_path, kind):
    argv, path = _case(kind, tmp_path)
    window.script.set_corpus_text("the user's own text")
    assert window.script.open_tokenizer(argv[2])
    assert window.script.wait_for_tokenizer(60_000) == "failed"
    title, message = dialogs.errors[-1]
    assert str(path) in message and DIGITS in message and "\n" not in message
    assert window.script.parts.corpus_panel.text() == "the user's own text"


def test_window_says_why_a_session_did_not_open(window, dialogs, tmp_path):
    session = tmp_path / "s.tokviz"
    session.write_text('{"format": "tokviz-session", "version": 1, "step": %s}' % HUGE, encoding="utf-8")
    window.script.set_corpus_text("the user's own text")
    assert not window.script.open_session(session)
    assert DIGITS in dialogs.errors[-1][1] and "\n" not in dialogs.errors[-1][1]
    assert window.script.parts.corpus_panel.text() == "the user's own text"


def test_chat_view_says_why_messages_did_not_open(window, tmp_path):
    _, path = _case("messages", tmp_path)
    panel = window.script.select_panel("chat")
    before = panel.messages()
    assert not panel.load_messages(path)
    assert panel.banner.isVisible() and DIGITS in panel.banner.text()
    assert panel.messages() == before


def test_json_files_are_parsed_in_one_place():
    """Every JSON parse of a file goes through `parse_json` (so its limits hold everywhere)."""
    root = Path(__file__).parents[2] / "tokviz"
    direct = [str(p.relative_to(root)) for p in root.rglob("*.py")
              if p.name != "safe_files.py" and ("json.loads(" in p.read_text(encoding="utf-8")
                                                or "json.load(" in p.read_text(encoding="utf-8"))]
    assert direct == []
