"""Tokens with a space inside (SuperBPE's superwords) get a bar under them in the token view; other
tokens do not."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from tokviz.core import TrainSettings, train
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTraining, is_superword
from tokviz.engine.step_model import StepModel
from tokviz.panels.token_view.flow_view import MARK_COLOR
from tokviz.panels.token_view.panel import TokenViewPanel

CORPUS = "of the people, by the people, for the people. " * 30
TEXT = "for the people, by the people"
WAIT = 10_000


def mark_pixels(panel) -> int:
    img = panel.view.viewport().grab().toImage()
    mark = QColor(MARK_COLOR).rgb()
    return sum(img.pixel(x, y) == mark for x in range(img.width()) for y in range(img.height()))


@pytest.fixture
def show(qtbot):
    panels = []

    def make(timeline):
        panel = TokenViewPanel(StepModel(), corpus_text=lambda: CORPUS)
        qtbot.addWidget(panel)
        panel.resize(700, 400)
        panel.show()
        with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
            panel.set_text(TEXT)
            panel.step_model.set_timeline(timeline)
        panel.wait_idle()
        qtbot.waitUntil(lambda: panel.view.is_laid_out, timeout=WAIT)
        panels.append(panel)
        return panel

    yield make
    for p in panels:
        p.shutdown()


def test_superwords_are_marked(show):
    sb = SuperBpeTraining(SuperBpeSettings(merges=40, transition=15), texts=[CORPUS]).run()
    panel = show(sb)
    enc = panel.result.reference.encoding
    assert enc.ids == sb.tokenizer().encode(TEXT).ids  # the model's own stage-2 chunks, not plain BPE's
    assert any(is_superword(t) for t in enc.tokens)
    assert mark_pixels(panel) > 0


def test_plain_bpe_tokens_are_not(show):
    panel = show(train(TrainSettings(merges=40), texts=[CORPUS]))
    assert not any(is_superword(t) for t in panel.result.reference.encoding.tokens)
    assert mark_pixels(panel) == 0
