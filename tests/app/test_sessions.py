"""Sessions: save/open round trips of the screen, big corpora by path + hash, bad files,
atomic saves, autosave and crash recovery."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import shared_file
from tests.qt_fixtures import drain_events
from tokviz.app.docks import layout_summary
from tokviz.core import TrainSettings

TEXT = "low lower lowest newer newest wider widest " * 30


def _trained(window, merges: int = 20):
    window.script.set_corpus_text(TEXT, word_counts=False, title="lesson corpus")
    assert window.script.start_training(TrainSettings(merges=merges, split="gpt2"))
    assert window.script.wait_for_training(60_000) == "finished"
    return window


def _dress(window):
    """Change the view in many ways a session must restore."""
    window.step_model.set_step(7)
    tv = window.token_view_panel
    tv.set_text("the newest lowest")
    tv.set_mode("both")
    tv.set_show_whitespace(True)
    tv.tabs.setCurrentIndex(2)
    window.timeline_panel.tabs.setCurrentIndex(1)
    window.timeline_panel.log_box.setChecked(True)
    window.script.select_panel("timeline")
    window.script.set_theme("dark")
    window.appearance.set_font_scale(1.2)


def _same_layout(got: dict, want: dict) -> None:
    """Same docks shown, floating, areas and tab groups; the docks in front within 2 px (Qt rounds
    dock splits when a saved layout is applied to a window that got its size after the save)."""
    assert {k: v[:4] for k, v in got.items()} == {k: v[:4] for k, v in want.items()}
    for pid, (*_, rect) in want.items():
        other = got[pid][4]
        assert (rect is None) == (other is None), pid
        if rect is not None:
            assert max(abs(x - y) for x, y in zip(rect, other)) <= 2, (pid, rect, other)


def test_round_trip_restores_the_screen(make_window, tmp_path, qtbot, dialogs):
    a = _trained(make_window())
    _dress(a)
    drain_events()
    path = tmp_path / "lesson.tokviz"
    assert a.script.save_session(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "tokviz-session" and data["version"] == 1
    assert data["corpus"]["text"] == TEXT and data["step"] == 7 and data["model"]["format"] == "tokviz-model"
    before = a.sessions.state_dict()
    assert "timeline" in before["view"]["raised"]

    b = make_window(load_default_sample=False)
    b.script.set_theme("light")
    b.appearance.set_font_scale(1.0)
    assert b.sessions.state_dict() != before
    assert b.script.open_path(path)  # .tokviz files open through open_path (and so drag and drop)
    drain_events()
    after = b.sessions.state_dict()
    # the geometry and layout blobs hold the screen they were saved on and stale sizes of hidden
    # tabs; the window size and every dock as seen on screen must come back exactly
    for key in ("geometry", "layout"):
        assert after["view"].pop(key) and before["view"].pop(key)
    assert after == before
    _same_layout(layout_summary(b), layout_summary(a))
    assert b.step_model.step == 7 and b.script.timeline.n_steps == a.script.timeline.n_steps >= 10
    assert b.corpus_panel.text() == TEXT and b.corpus_panel.title == "lesson corpus"
    assert b.token_view_panel.text() == "the newest lowest" and b.token_view_panel.view.mode == "both"
    assert b.appearance.theme == "dark" and b.appearance.font_scale == pytest.approx(1.2)
    assert dialogs.errors == []


def test_save_session_dialog_and_save_again(window, tmp_path, dialogs):
    dialogs.save_path_answer = str(tmp_path / "picked")
    assert window.sessions.save_as()
    assert (tmp_path / "picked.tokviz").exists()
    window.token_view_panel.set_text("changed")
    assert window.script.save_session()  # File > Save Session: same file, no dialog
    assert json.loads((tmp_path / "picked.tokviz").read_text())["view"]["panels"]["token_view"]["text"] == "changed"


def test_big_corpus_by_path_and_changed_file(make_window, tmp_path, qtbot, dialogs, monkeypatch):
    monkeypatch.setattr("tokviz.app.session_ops.EMBED_LIMIT", 100)
    corpus = tmp_path / "big.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    a = make_window(load_default_sample=False)
    assert a.script.open_path(corpus)
    assert a.script.wait_for_file() == "opened"
    assert a.script.start_training(TrainSettings(merges=10, split="gpt2"))
    assert a.script.wait_for_training(60_000) == "finished"
    path = tmp_path / "big.tokviz"
    assert a.script.save_session(path)
    ref = json.loads(path.read_text())["corpus"]
    assert "text" not in ref and ref["path"] == str(corpus.resolve()) and ref["size"] == len(TEXT)

    b = make_window(load_default_sample=False)
    assert b.script.open_session(path)
    assert b.corpus_panel.text() == TEXT and b.corpus_panel.path == corpus.resolve()
    assert dialogs.errors == []

    corpus.write_text(TEXT.replace("low", "LOW"), encoding="utf-8")
    c = make_window(load_default_sample=False)
    c.script.set_corpus_text("keep me", word_counts=False)
    assert c.script.open_session(path)
    assert len(dialogs.errors) == 1 and "has changed since the session was saved" in dialogs.errors[0][1]
    assert c.script.timeline is not None and c.script.timeline.n_steps == 10  # the rest was restored
    assert c.corpus_panel.text() == "keep me"


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8 JSON"),
    (b"{\"format\": \"tokviz-session\", \"version\": 1, \"corp", "JSON error"),
    (b"{\"format\": \"tokviz-session\", \"version\": 7}", "newer than this tokviz reads"),
])
def test_bad_session_files_keep_the_current_work(window, tmp_path, dialogs, content, message):
    _trained(window, merges=5)
    window.token_view_panel.set_text("my work")
    path = tmp_path / "bad.tokviz"
    path.write_bytes(content)
    assert not window.script.open_path(path)
    assert dialogs.errors and dialogs.errors[-1][0] == "Could not open the session"
    assert message in dialogs.errors[-1][1]
    assert window.corpus_panel.text() == TEXT and window.script.timeline.n_steps == 5
    assert window.token_view_panel.text() == "my work"


def test_interrupted_save_never_corrupts_the_previous_file(window, tmp_path, dialogs, monkeypatch):
    path = tmp_path / "s.tokviz"
    window.token_view_panel.set_text("first version")
    assert window.script.save_session(path)
    before = path.read_bytes()
    window.token_view_panel.set_text("second version")

    def fail(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", fail)
    assert not window.script.save_session(path)
    assert dialogs.errors[-1][0] == "Could not save the session" and "cannot write" in dialogs.errors[-1][1]
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.tokviz"]


def test_autosave_timer_and_crash_recovery(make_window, settings_store, qtbot, dialogs):
    settings_store.set_autosave_seconds(1)
    a = make_window(load_default_sample=False)
    assert not a.sessions.crashed and dialogs.asked_yes_no == []
    a.script.set_corpus_text("unsaved classroom notes", word_counts=False)
    a.token_view_panel.set_text("crash me")
    with qtbot.waitSignal(a.sessions.autosaved, timeout=10_000) as blocker:
        pass
    autosave = a.sessions.autosave_path
    assert blocker.args == [str(autosave)] and autosave.exists()
    assert not a.sessions.dirty
    a.shutdown()  # "crash": no clean close, so no clean-exit marker
    assert not a.sessions.marker_path.exists()

    dialogs.yes_no_answer = True
    b = make_window(load_default_sample=False)
    assert b.sessions.crashed
    qtbot.waitUntil(lambda: len(dialogs.asked_yes_no) == 1, timeout=10_000)
    assert "did not close normally" in dialogs.asked_yes_no[0][1]
    qtbot.waitUntil(lambda: b.corpus_panel.text() == "unsaved classroom notes", timeout=10_000)
    assert b.token_view_panel.text() == "crash me"

    b.close()  # a clean exit: the next start offers nothing
    assert b.sessions.marker_path.exists()
    c = make_window(load_default_sample=False)
    drain_events()
    assert not c.sessions.crashed and len(dialogs.asked_yes_no) == 1


def test_recovery_declined_keeps_the_fresh_window(make_window, qtbot, dialogs):
    a = make_window(load_default_sample=False)
    a.script.set_corpus_text("old notes", word_counts=False)
    assert a.sessions.autosave(force=True)
    assert a.sessions.wait_autosaved() == "done"
    a.shutdown()
    dialogs.yes_no_answer = False
    b = make_window(load_default_sample=False)
    qtbot.waitUntil(lambda: len(dialogs.asked_yes_no) == 1, timeout=10_000)
    drain_events()
    assert b.corpus_panel.text() == ""


def test_nothing_changed_means_no_autosave(window):
    window.sessions.dirty = False
    assert not window.sessions.autosave()
    window.token_view_panel.set_text("x")
    assert window.sessions.dirty


def test_comparison_rows_and_loaded_tokenizer_by_path(make_window, tmp_path, qtbot, dialogs):
    from tokviz.core import save_timeline, train

    models = []
    for n in (4, 6):
        m = tmp_path / f"m{n}.json"
        save_timeline(train(TrainSettings(merges=n, split="gpt2"), texts=[TEXT]), m)
        models.append(m)
    a = _trained(make_window(), merges=5)
    tv = a.token_view_panel
    for m in models:
        with qtbot.waitSignal(tv.loader.loaded, timeout=10_000):
            assert tv.add_tokenizer_file(m)
    assert tv.compare_paths() == [str(m) for m in models]
    path = tmp_path / "cmp.tokviz"
    assert a.script.save_session(path)
    assert json.loads(path.read_text())["compare_tokenizers"] == [str(m) for m in models]

    b = make_window(load_default_sample=False)
    assert b.script.open_session(path)
    qtbot.waitUntil(lambda: b.token_view_panel.compare_paths() == [str(m) for m in models], timeout=10_000)
    assert dialogs.errors == []


def test_pretrained_tokenizer_by_path(make_window, qtbot, tmp_path, dialogs):
    source = shared_file("vocab", "tiktoken", "r50k_base.tiktoken")
    a = make_window(load_default_sample=False)
    assert a.script.open_tokenizer(source)
    assert a.script.wait_for_tokenizer(60_000) == "opened"
    a.step_model.set_step(1000)
    path = tmp_path / "gpt2.tokviz"
    assert a.script.save_session(path)
    data = json.loads(path.read_text())
    assert data["model"] is None and data["tokenizers"] == [str(source)] and data["step"] == 1000
    assert path.stat().st_size < 100_000  # by path, not embedded

    b = make_window(load_default_sample=False)
    assert b.script.open_session(path)
    assert b.script.timeline.algorithm == "pretrained" and b.script.timeline.settings.source == str(source)
    assert b.step_model.step == 1000 and dialogs.errors == []
