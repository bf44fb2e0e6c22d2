"""The token view's Numbers tab: 1-1000 and the user's number as each tokenizer of the comparison
cuts them, cut off the GUI thread only while the tab shows."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint

from tests.conftest import shared_file
from tokviz.core.lessons.files import TABS
from tokviz.core.loading import open_timeline
from tokviz.engine.step_model import StepModel
from tokviz.panels.token_view.number_lens import NumberLens
from tokviz.panels.token_view.panel import TokenViewPanel

WAIT = 20_000


@pytest.fixture(scope="module")
def tokenizers():
    return [("GPT-2", open_timeline(str(shared_file("vocab", "gpt2-data-gym", "vocab.bpe"))).tokenizer(), None),
            ("cl100k", open_timeline(str(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))).tokenizer(), None)]


def test_every_tokenizer_gets_a_grid_and_a_cut_of_the_users_number(qtbot, tokenizers):
    lens = NumberLens()
    qtbot.addWidget(lens)
    lens.resize(1000, 700)
    lens.show()
    with qtbot.waitSignal(lens.rows_shown, timeout=WAIT):
        lens.set_sources(tokenizers)
    rows = lens.canvas.rows
    assert [r.title for r in rows] == ["GPT-2", "cl100k"]
    assert [r.split.pieces for r in rows] == [("123", "45", "67"), ("123", "456", "7")]
    assert lens.canvas.describe(847) == "847 — GPT-2: 8|47 · cl100k: 847"
    with qtbot.waitSignal(lens.rows_shown, timeout=WAIT):
        lens.number_edit.setText("1000000")
    assert [r.split.pieces for r in lens.canvas.rows] == [("1", "000000"), ("100", "000", "0")]
    assert rows[0].grid is lens.canvas.rows[0].grid  # the grids were kept: only the number was cut again


def test_hovering_a_cell_names_the_number_and_its_cuts(qtbot, tokenizers):
    lens = NumberLens()
    qtbot.addWidget(lens)
    lens.resize(1000, 700)
    lens.show()
    with qtbot.waitSignal(lens.rows_shown, timeout=WAIT):
        lens.set_sources(tokenizers)
    lens.canvas.repaint()  # lays the heatmaps out
    found = None
    for y in range(lens.canvas.height()):
        for x in range(0, lens.canvas.width(), 3):
            if lens.canvas.number_at(QPoint(x, y)) == 847:
                found = QPoint(x, y)
                break
        if found:
            break
    assert found is not None
    qtbot.mouseMove(lens.canvas, found)
    qtbot.waitUntil(lambda: lens.readout.text().startswith("847 — GPT-2: 8|47"), timeout=WAIT)


def test_nothing_is_cut_while_the_tab_is_hidden(qtbot, tokenizers):
    lens = NumberLens()
    qtbot.addWidget(lens)
    lens.set_sources(tokenizers)
    assert not lens.engine.is_busy and lens.canvas.rows == []
    with qtbot.waitSignal(lens.rows_shown, timeout=WAIT):
        lens.show()


def test_the_token_view_has_the_tab_and_lessons_name_the_tabs_in_order(qtbot):
    p = TokenViewPanel(StepModel(), corpus_text=lambda: "")
    qtbot.addWidget(p)
    names = [p.tabs.tabText(i).lower() for i in range(p.tabs.count())]
    assert names == list(TABS)
    assert p.tabs.widget(TABS.index("numbers")) is p.numbers


def test_the_tab_follows_the_comparison_rows(qtbot):
    sm = StepModel()
    p = TokenViewPanel(sm, corpus_text=lambda: "")
    qtbot.addWidget(p)
    p.resize(1000, 800)
    p.show()
    with qtbot.waitSignal(p.result_shown, timeout=WAIT):
        p.set_text("2024")
        sm.set_timeline(open_timeline(str(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))))
    p.tabs.setCurrentWidget(p.numbers)  # the rows are cut when the tab shows
    qtbot.waitUntil(lambda: len(p.numbers.canvas.rows) == 1, timeout=WAIT)
    assert p.numbers.canvas.rows[0].split.pieces == ("123", "456", "7")  # step 100,000 of 100,000 = all merges
