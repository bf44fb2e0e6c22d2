"""Nothing lost in the window: a file the save dialog did not ask about (tiktoken's sidecar, a
session name with ``.tokviz`` added, PNG frames already in a folder) is only replaced after a
question, and a file that is not an older sidecar is never replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from tokviz.app.classroom.animation_dialog import AnimationDialog, run_export_dialog

from .classroom.test_animation import trained  # noqa: F401 - the fixture: a window with a small trained BPE


@pytest.fixture
def out(tmp_path) -> Path:
    (tmp_path / "out").mkdir()
    return tmp_path / "out"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_tiktoken_sidecar_is_replaced_only_after_asking(trained, qtbot, dialogs, out):
    w = trained
    assert w.script.export_tokenizer(out / "mine", "tiktoken", step=3)
    assert sorted(_files(out)) == ["mine", "mine.tiktoken.json"]
    before = _files(out)

    dialogs.save_path_answer = str(out / "other")  # a new ranks file, but its sidecar name is taken...
    (out / "other.tiktoken.json").write_bytes(before["mine.tiktoken.json"])
    dialogs.overwrite_answer = False
    assert not w.exporter.export_dialog("tiktoken")  # ...so the window asks; "No" writes nothing
    assert dialogs.asked_overwrite == [[str(out / "other.tiktoken.json")]]
    assert not w.exporter.is_running and not (out / "other").exists()

    dialogs.overwrite_answer = True
    with qtbot.waitSignal(w.exporter.exported, timeout=30_000):
        assert w.exporter.export_dialog("tiktoken")
    assert json.loads((out / "other.tiktoken.json").read_text(encoding="utf-8"))["name"] == "other"
    assert _files(out)["mine"] == before["mine"]


def test_a_file_that_is_not_a_sidecar_is_never_replaced(trained, dialogs, out):
    notes = out / "mine.tiktoken.json"
    notes.write_text("my notes, not a sidecar", encoding="utf-8")
    dialogs.save_path_answer = str(out / "mine.tiktoken")
    dialogs.overwrite_answer = True
    assert not trained.exporter.export_dialog("tiktoken")
    assert dialogs.asked_overwrite == []
    assert dialogs.errors[-1][0] == "Cannot export there" and "is not a tiktoken sidecar" in dialogs.errors[-1][1]
    assert not trained.script.export_tokenizer(out / "mine.tiktoken", "tiktoken")  # scripts too
    assert _files(out) == {"mine.tiktoken.json": b"my notes, not a sidecar"}


def test_session_name_with_the_suffix_added_asks_first(window, dialogs, tmp_path):
    existing = tmp_path / "lesson.tokviz"
    existing.write_text("the lesson I prepared", encoding="utf-8")
    dialogs.save_path_answer = str(tmp_path / "lesson")  # the dialog confirmed "lesson", not "lesson.tokviz"
    dialogs.overwrite_answer = False
    assert not window.sessions.save_as()
    assert dialogs.asked_overwrite == [[str(existing)]]
    assert existing.read_text(encoding="utf-8") == "the lesson I prepared"
    dialogs.overwrite_answer = True
    assert window.sessions.save_as()
    assert json.loads(existing.read_text(encoding="utf-8"))["format"] == "tokviz-session"
    dialogs.save_path_answer = str(tmp_path / "new")  # nothing there: no question
    assert window.sessions.save_as() and len(dialogs.asked_overwrite) == 2


def test_png_frames_already_in_the_folder_ask_first(trained, qtbot, dialogs, tmp_path, monkeypatch):
    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "frame_0002.png").write_bytes(b"last week's frame")

    def accepted(dialog):
        dialog.format.setCurrentIndex(dialog.format.findData("png"))
        dialog.first.setValue(0)
        dialog.last.setValue(3)
        dialog.every.setValue(1)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(AnimationDialog, "exec", accepted)
    dialogs.save_path_answer = str(folder)
    dialogs.overwrite_answer = False
    assert not run_export_dialog(trained.animation, trained)
    assert dialogs.asked_overwrite == [[str(folder / "frame_0002.png")]]
    assert (folder / "frame_0002.png").read_bytes() == b"last week's frame"

    dialogs.overwrite_answer = True
    with qtbot.waitSignal(trained.animation.finished, timeout=60_000):
        assert run_export_dialog(trained.animation, trained)
    assert sorted(p.name for p in folder.iterdir()) == [f"frame_000{i}.png" for i in range(1, 5)]
    assert (folder / "frame_0002.png").read_bytes().startswith(b"\x89PNG")
