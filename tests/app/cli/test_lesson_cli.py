"""``tokviz lesson``: --list prints the 18 lessons; an unknown name exits 2 with one line; a known
one opens the app on it (the GUI entry point is replaced here, so no window opens)."""

from __future__ import annotations

import pytest

from tokviz.app.cli import main as cli


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_every_lesson_in_order(capsys):
    code, out, err = run(capsys, "lesson", "--list")
    lines = out.splitlines()
    assert code == 0 and not err and len(lines) == 18
    assert lines[0].split()[:2] == ["1", "chars-words-subwords"]
    assert lines[2].split()[:2] == ["3", "bpe-steps"] and lines[2].endswith("BPE step by step")


@pytest.mark.parametrize("argv, message", [
    (("lesson", "nope"), "tokviz: unknown lesson 'nope'; choose one of chars-words-subwords, "),
    (("lesson",), "tokviz lesson: give a lesson NAME or number"),
])
def test_bad_lesson_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and not out
    assert err.startswith(message) and err.count("\n") == 1


@pytest.mark.parametrize("key", ["bpe-steps", "3"])
def test_known_lesson_opens_the_app_on_it(capsys, monkeypatch, key):
    import tokviz.app.gui as gui

    calls = []
    monkeypatch.setattr(gui, "run_gui", lambda file=None, *, lesson=None: calls.append((file, lesson)) or 0)
    assert run(capsys, "lesson", key)[0] == 0
    assert calls == [(None, "bpe-steps")]
