"""Panels in a tab behind another do no work while a run trains; brought to the front, they catch up."""

from __future__ import annotations

from tests.qt_fixtures import drain_events
from tokviz.core import TrainSettings


def test_the_embedding_view_behind_a_tab_waits_until_it_is_in_front(window, qtbot, monkeypatch):
    window.workspaces.choose("learn")  # embeddings: a tab behind the corpus
    window.docks.build_pending()
    panel = window.embedding_panel
    window.docks.select("corpus")
    qtbot.waitUntil(lambda: panel.visibleRegion().isEmpty())
    qtbot.waitUntil(lambda: not panel.sources.pending  # (asked for while it was built)
                    and not panel.sources.tokenizer_engine.is_running, timeout=30_000)
    assert not panel.sources.wanted, _where(window)
    starts = []
    engine = panel.sources.tokenizer_engine
    real_start = engine.start
    monkeypatch.setattr(engine, "start", lambda *a, **k: (starts.append(a[1]), real_start(*a, **k)))
    window.script.load_sample("english-prose")
    with qtbot.waitSignal(window.script.training_done, timeout=60_000):
        window.script.start_training(TrainSettings(vocab_size=400))
    window.step_model.set_step(10)
    drain_events()  # (no timer of the view may be pending: nothing was scheduled)
    assert starts == [] and not panel.sources.pending, _where(window)
    with qtbot.waitSignal(panel.corpus_tokenized, timeout=30_000) as got:
        window.docks.select("embeddings")
    assert len(starts) == 1 and got.args[0].step == 10 and got.args[0].n_vocab == 400


def test_a_panel_built_alone_keeps_up_as_before(qtbot):
    """Outside a shown window (scripts, tests, screenshots) the view follows every change."""
    from PySide6.QtWidgets import QWidget

    from tokviz.panels.widgets import wanted

    alone = QWidget()
    qtbot.addWidget(alone)
    assert wanted(alone)
    host = QWidget()
    qtbot.addWidget(host)
    child = QWidget(host)
    host.show()
    qtbot.waitExposed(host)
    assert wanted(child)
    child.hide()
    assert not wanted(child)



def _where(window) -> str:
    """Which panels are on screen (for a failure message)."""
    shown = [pid for pid in window.docks.panel_ids() if not window.docks.panel(pid).visibleRegion().isEmpty()]
    return f"workspace {window.workspaces.current}, {window.width()}x{window.height()}, on screen: {shown}"
