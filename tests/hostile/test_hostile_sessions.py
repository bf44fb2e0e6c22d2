"""Shared session files cannot crash the window: sizes, types and shapes are checked before
anything is applied, and what cannot be used is reported while the rest is restored."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core import TrainSettings
from tokviz.core.saved.session import MAX_WINDOW_SIDE, clean_view

TEXT = "low lower lowest newer newest " * 20


def _session(window, tmp_path, view: dict):
    path = tmp_path / "shared.tokviz"
    window.script.save_session(path)
    d = json.loads(path.read_text(encoding="utf-8"))
    d["view"].update(view)
    path.write_text(json.dumps(d), encoding="utf-8")
    return path


def test_a_huge_window_size_is_clamped_to_the_screen(window, tmp_path, dialogs):
    window.script.set_corpus_text(TEXT)
    path = _session(window, tmp_path, {"size": [100_000, 100_000]})
    assert window.script.open_session(path)
    screen = window.screen().availableGeometry()
    assert window.width() <= max(2 * screen.width(), 4096) and window.height() <= max(2 * screen.height(), 4096)
    assert not window.grab().isNull()  # painting at the saved size is what crashed


def test_values_of_the_wrong_type_are_reported_and_the_rest_restored(window, tmp_path, dialogs):
    window.script.set_corpus_text(TEXT)
    assert window.script.start_training(TrainSettings(merges=5, split="whitespace"))
    assert window.script.wait_for_training() == "finished"
    path = _session(window, tmp_path, {"raised": 5, "panels": [1, 2], "vocab_selection": "x",
                                       "font_scale": 1e9, "theme": "dark"})
    assert window.script.open_session(path)
    assert dialogs.errors and dialogs.errors[-1][0] == "Session partly restored"
    message = dialogs.errors[-1][1].lower()
    assert "raised panels" in message and "panels must be an object" in message and "font_scale" in message
    assert window.appearance.theme == "dark"  # the good keys were applied
    assert window.script.timeline.n_steps == 5 and window.corpus_panel.text() == TEXT


def test_a_malformed_panel_state_does_not_stop_the_others(window, tmp_path, dialogs):
    window.script.set_corpus_text(TEXT)
    window.token_view_panel.set_text("kept")
    path = _session(window, tmp_path, {"panels": {"timeline": {"tab": "x", "position": [1]},
                                                  "token_view": {"text": 5, "mode": {"a": 1}}}})
    assert window.script.open_session(path)
    assert window.token_view_panel.text() == "kept"


VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=20),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                      max_leaves=12)
KEYS = st.sampled_from(["size", "geometry", "layout", "layout_version", "theme", "font_scale", "raised",
                        "vocab_selection", "pretrained_pattern", "panels", "other"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, VALUES, max_size=8))
def test_clean_view_keeps_only_well_typed_keys(view):
    out, problems = clean_view(view)
    assert set(out) <= set(view) - {"other"}
    if "size" in out:
        assert all(100 <= x <= MAX_WINDOW_SIDE for x in out["size"])
    if "raised" in out:
        assert all(isinstance(p, str) for p in out["raised"])
    if "panels" in out:
        assert all(isinstance(s, dict) for s in out["panels"].values())
    known = set(view) - {"other"}
    assert len(out) + len(problems) >= len(known)  # every known key was kept or reported


def test_big_corpus_files_are_hashed_off_the_gui_thread(make_window, tmp_path, qtbot, dialogs, monkeypatch):
    """Saving and opening a session with a big corpus file hash it on a worker thread: the window
    keeps processing events meanwhile."""
    import threading

    from tokviz.app import session_ops

    monkeypatch.setattr(session_ops, "EMBED_LIMIT", 100)
    threads = []
    real = session_ops.corpus_by_path

    def spy(path, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(path, **kw)

    monkeypatch.setattr(session_ops, "corpus_by_path", spy)
    corpus = tmp_path / "big.txt"
    corpus.write_text(TEXT * 10, encoding="utf-8")
    a = make_window(load_default_sample=False)
    assert a.script.open_path(corpus) and a.script.wait_for_file() == "opened"
    path = tmp_path / "s.tokviz"
    assert a.script.save_session(path)
    assert threads == [False]  # hashed, and not on the GUI thread
    b = make_window(load_default_sample=False)
    assert b.script.open_session(path)
    assert b.corpus_panel.text() == TEXT * 10
