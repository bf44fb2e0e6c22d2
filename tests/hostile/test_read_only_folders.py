"""A data folder tokviz cannot write (read-only, or a file where the folder should be): autosave
says so once in the status bar, with no traceback anywhere, keeps trying quietly, keeps the
user's text, and says when it works again."""

from __future__ import annotations

import logging
import os
import shutil

import pytest

from tokviz.core import TokvizError

TEXT = "the user's own words, typed before the folder went read-only"


def _failed_autosave(window, qtbot) -> None:
    sessions = window.sessions
    with qtbot.waitSignal(sessions.writer.failed, timeout=30_000):
        assert sessions.autosave(force=True)


def _status(window) -> str:
    return window.statusBar().currentMessage()


def _blocked_data_dir(settings_store):
    """The data folder's place taken by a file: no one, root included, can write into it."""
    folder = settings_store.data_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("not a folder", encoding="utf-8")
    return folder


def test_autosave_into_a_folder_that_cannot_be_made(make_window, settings_store, qtbot, caplog, capfd):
    folder = _blocked_data_dir(settings_store)
    window = make_window()
    window.script.set_corpus_text(TEXT)
    with caplog.at_level(logging.WARNING):
        _failed_autosave(window, qtbot)
    message = _status(window)
    assert message.startswith("Automatic saving failed:") and str(folder) in message and "cannot write" in message
    assert "\n" not in message
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "Traceback" not in capfd.readouterr().err
    assert window.script.parts.corpus_panel.text() == TEXT
    assert window.sessions.dirty  # still unsaved: the next tick tries again

    window.statusBar().clearMessage()  # a second failure in a row says nothing new
    _failed_autosave(window, qtbot)
    assert _status(window) == ""

    folder.unlink()  # the folder can be made again
    with qtbot.waitSignal(window.sessions.autosaved, timeout=30_000):
        assert window.sessions.autosave(force=True)
    assert (folder / "autosave.tokviz").is_file()
    assert _status(window) == "Automatic saving works again"
    os.remove(folder / "autosave.tokviz")
    shutil.rmtree(folder)
    folder.write_text("not a folder", encoding="utf-8")  # a new run of failures is reported again
    _failed_autosave(window, qtbot)
    assert _status(window).startswith("Automatic saving failed:")


def test_autosave_over_a_file_that_cannot_be_replaced(make_window, settings_store, qtbot, caplog):
    """The folder exists, the autosave's name is taken by a folder: the rename fails."""
    folder = settings_store.data_dir()
    (folder / "autosave.tokviz").mkdir(parents=True)
    window = make_window()
    window.script.set_corpus_text(TEXT)
    with caplog.at_level(logging.WARNING):
        _failed_autosave(window, qtbot)
    assert _status(window).startswith("Automatic saving failed:") and "autosave.tokviz" in _status(window)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert window.script.parts.corpus_panel.text() == TEXT
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]  # nothing half-written left


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="permissions do not stop root; the tests above block the folder for everyone")
def test_autosave_into_a_read_only_folder(make_window, settings_store, qtbot, caplog):
    parent = settings_store.data_dir().parent
    window = make_window()
    window.script.set_corpus_text(TEXT)
    shutil.rmtree(settings_store.data_dir(), ignore_errors=True)
    os.chmod(parent, 0o555)
    try:
        with caplog.at_level(logging.WARNING):
            _failed_autosave(window, qtbot)
        assert _status(window).startswith("Automatic saving failed:") and "ermission denied" in _status(window)
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert window.script.parts.corpus_panel.text() == TEXT
    finally:
        os.chmod(parent, 0o755)


def test_the_autosave_writer_says_why_in_one_line(tmp_path, monkeypatch):
    from tokviz.app.autosave_files import path_exists, write_autosave, write_marker
    from tokviz.core.saved.session import CorpusRef, Session

    blocked = tmp_path / "data"
    blocked.write_text("", encoding="utf-8")
    session = Session(CorpusRef("t", text="x"))
    with pytest.raises(TokvizError, match=r"data: cannot write \(") as err:
        write_autosave(session, blocked / "autosave.tokviz")
    assert "\n" not in str(err.value)
    assert not write_marker(blocked / "clean-exit")
    assert not path_exists(blocked / "clean-exit")

    def denied(self, *args, **kwargs):  # what a read-only parent answers (root is never refused)
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(tmp_path), "mkdir", denied)
    with pytest.raises(TokvizError, match=r"ro: cannot write \(Permission denied\)$"):
        write_autosave(session, tmp_path / "ro" / "autosave.tokviz")
