"""What stands between a paste and the first screen: no typing debounce for a paste or `set_text`,
and a loaded tiktoken tokenizer's one-time tables built by an earlier request, not by the paste."""

from __future__ import annotations

import pytest

from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.text.split import O200K_SPLIT_PATTERN
from tokviz.engine.step_model import StepModel
from tokviz.engine.token_view.token_view_engine import QUICK_DELAY_MS, TYPING_DELAY_MS
from tokviz.panels.token_view.panel import TokenViewPanel

WAIT = 30_000


@pytest.fixture
def panel(qtbot):
    p = TokenViewPanel(StepModel(), corpus_text=lambda: "")
    qtbot.addWidget(p)
    p.resize(900, 700)
    p.show()
    yield p
    p.shutdown()


def _delays(panel, monkeypatch) -> list[int]:
    """The delay of every request the panel makes from now on."""
    seen: list[int] = []
    request = panel.engine.request

    def spy(req, *, delay_ms=QUICK_DELAY_MS):
        seen.append(delay_ms)
        request(req, delay_ms=delay_ms)

    monkeypatch.setattr(panel.engine, "request", spy)
    return seen


def test_set_text_is_encoded_without_the_typing_delay(panel, monkeypatch):
    delays = _delays(panel, monkeypatch)
    panel.set_text("hello there")
    assert delays and delays[-1] == QUICK_DELAY_MS  # the last request wins
    delays.clear()
    panel.editor.insertPlainText("!")  # typing still waits for a pause
    assert delays == [TYPING_DELAY_MS]


def test_a_paste_is_encoded_without_the_typing_delay(panel, qtbot, monkeypatch):
    from PySide6.QtGui import QGuiApplication

    from tokviz.panels.token_view.editor import CHUNK_CHARS

    delays = _delays(panel, monkeypatch)
    for text in ("a small paste", "x y z\n" * CHUNK_CHARS):
        delays.clear()
        QGuiApplication.clipboard().setText(text)
        with qtbot.waitSignal(panel.editor.paste_finished, timeout=WAIT):
            panel.editor.paste()
        assert delays and delays[-1] == QUICK_DELAY_MS


def test_the_first_request_warms_a_loaded_tiktoken_tokenizer_up(panel, qtbot, monkeypatch):
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257})
    tok = RankBpeTokenizer(ranks, pattern=O200K_SPLIT_PATTERN, name="tiny")
    warmed = []  # tokenizers whose first-encode tables were built (on the worker thread)
    warm_up = RankBpeTokenizer.warm_up

    def recorded(self):
        warmed.append(self)
        warm_up(self)

    monkeypatch.setattr(RankBpeTokenizer, "warm_up", recorded)
    panel.set_text("")
    panel.add_tokenizer(tok)
    qtbot.waitUntil(lambda: not panel.engine.is_pending, timeout=WAIT)
    panel.wait_idle()
    assert warmed == [tok]  # built before any long text came


def test_laying_out_below_the_window_repaints_nothing(qtbot):
    """A long text is laid out in slices after its first screen; those lines are off screen, so
    the slices cost no repaint of the window (a repaint per slice took most of the GUI thread)."""
    from PySide6.QtCore import QEvent, QObject

    from tokviz.core import TrainSettings, train

    class PaintCounter(QObject):
        paints = 0

        def eventFilter(self, watched, event):
            if event.type() == QEvent.Type.Paint:
                self.paints += 1
            return False

    text = "hello world, the lowest newest\n" * 4_000
    sm = StepModel()
    panel = TokenViewPanel(sm, corpus_text=lambda: text)
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    view = panel.view
    counter = PaintCounter()
    view.viewport().installEventFilter(counter)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        panel.set_text(text)
        sm.set_timeline(train(TrainSettings(vocab_size=270), texts=[text[:2_000]]))
    qtbot.waitUntil(lambda: view.is_laid_out, timeout=WAIT)
    panel.wait_idle()
    view.viewport().removeEventFilter(counter)
    panel.shutdown()
    assert view.content_height() > 20 * view.viewport().height()  # many slices were needed
    assert 1 <= counter.paints <= 10, counter.paints  # 4 here; 108 when every slice repainted
