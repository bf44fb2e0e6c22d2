"""`Workspace`: the corpus and the current text, shared through one object with signals."""

from __future__ import annotations

from tokviz.engine.workspace import Workspace
from tokviz.panels.corpus.panel import CorpusPanel
from tokviz.panels.token_view.panel import TokenViewPanel


def test_current_text_falls_back_to_the_corpus_start(qtbot):
    ws = Workspace()
    assert ws.corpus_sample(10) == "" and ws.current_text(10) == ""
    ws.set_corpus_reader(lambda n: ("the corpus " * 10)[:n])
    assert ws.corpus_sample(7) == "the cor"
    assert ws.current_text(7) == "the cor"  # no token view text: the corpus start
    ws.set_current_text_reader(lambda: "typed text")
    assert ws.current_text(7) == "typed text"  # up to ten times the corpus sample
    ws.set_current_text_reader(lambda: "   ")
    assert ws.current_text(3) == "the"  # blank text counts as none


def test_panels_publish_through_the_workspace(qtbot):
    ws = Workspace()
    corpus, view = CorpusPanel(), TokenViewPanel(ws.step_model)
    qtbot.addWidget(corpus)
    qtbot.addWidget(view)
    corpus.bind_workspace(ws)
    view.bind_workspace(ws)
    with qtbot.waitSignal(ws.corpus_changed, timeout=10_000):
        corpus.set_text("low lower lowest", title="t")
    assert ws.corpus_sample(9) == "low lower"
    with qtbot.waitSignal(ws.current_text_changed, timeout=10_000):
        view.set_text("newest")
    assert ws.current_text() == "newest"
    view.shutdown()
