"""Tokens the timeline declares superwords (`superword_ids`: SuperBPE's tokens with a space inside,
BoundlessBPE's supermerges) get a bar under them in the token view and in its comparison rows;
other tokens do not."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from tokviz.core import TrainSettings, train
from tokviz.core.boundless.timeline import BoundlessSettings, train_boundless
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTraining, is_superword
from tokviz.engine.step_model import StepModel
from tokviz.panels.token_view.flow_view import MARK_COLOR
from tokviz.panels.token_view.panel import TokenViewPanel

CORPUS = "of the people, by the people, for the people. " * 30
TEXT = "for the people, by the people"
WAIT = 10_000


def mark_pixels(panel, view=None) -> int:
    img = (view or panel.view).viewport().grab().toImage()
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


def test_supermerges_are_marked_in_the_view_and_the_comparison_rows(show):
    tl = train_boundless(BoundlessSettings(merges=40), texts=[CORPUS])
    panel = show(tl)
    supers = tl.superword_ids()
    rows = panel.result.rows
    assert [r.spec.key for r in rows[:2]] == ["step", "final"]
    for row in rows[:2]:  # marked exactly where the encoding has a supermerge's id
        ids = row.encoding.ids[: row.shown]
        assert row.marked == [i in supers for i in ids] and any(row.marked)
    assert mark_pixels(panel) > 0
    first, plain = rows[0].marked.index(True), rows[0].marked.index(False)
    assert "superword" in panel.tooltip_for(first) and "superword" not in panel.tooltip_for(plain)
    panel.tabs.setCurrentWidget(panel.compare)
    final = panel.compare.views[1]
    final.resize(600, 200)
    assert mark_pixels(panel, final) > 0


def test_a_timeline_declaring_no_superwords_marks_nothing_in_comparison_rows(show):
    tl = train_boundless(BoundlessSettings(merges=40, supermerges="off"), texts=[CORPUS])
    panel = show(tl)
    assert not tl.superword_ids()
    assert not any(any(r.marked) for r in panel.result.rows)
    assert all(mark_pixels(panel, v) == 0 for v in panel.compare.views[:2])
