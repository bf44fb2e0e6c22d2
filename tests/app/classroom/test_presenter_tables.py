"""Tables follow presenter mode: Unigram's round table resizes its columns to the presenter's font
(and back on leaving) so no header or number is cut, and a lesson's table is drawn at the
presenter's size and fills the panel instead of leaving half of it empty."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontInfo

from tests.qt_fixtures import drain_events
from tokviz.core.unigram.timeline import UnigramSettings

from .conftest import TEXT

FULL_HD = QSize(1920, 1080)


def _present(window, qtbot, panels, scale=2.0) -> None:
    window.presenter.screen_size = FULL_HD
    window.script.enter_presenter(panels, scale=scale)
    window.setWindowState(Qt.WindowState.WindowNoState)
    window.resize(FULL_HD)
    qtbot.waitUntil(lambda: window.size() == FULL_HD, timeout=10_000)
    drain_events()


def _cut(table) -> list[str]:
    """Header and cell texts wider than their column (at the font they are drawn in)."""
    fm, out = table.fontMetrics(), []
    header = table.horizontalHeader()
    for c in range(table.columnCount()):
        width = table.columnWidth(c)
        texts = [table.horizontalHeaderItem(c).text()] + [
            table.item(r, c).text() for r in range(table.rowCount()) if table.item(r, c) is not None]
        hfm = header.fontMetrics()
        for i, text in enumerate(texts):
            need = (hfm if i == 0 else fm).horizontalAdvance(text)
            if need > width:
                out.append(f"{text!r}: {need} > {width}")
    return out


def test_unigram_rounds_fit_their_columns_in_and_after_presenter_mode(window, qtbot):
    window.script.set_corpus_text(TEXT, word_counts=False)
    assert window.script.start_training(UnigramSettings(vocab_size=40, seed_min_count=1))
    assert window.script.wait_for_training(60_000) == "finished"
    drain_events()
    rounds = window.timeline_panel.unigram.rounds.rounds
    assert rounds.rowCount() > 1 and _cut(rounds) == []
    normal = [rounds.columnWidth(c) for c in range(rounds.columnCount() - 1)]  # the last one stretches
    _present(window, qtbot, ["timeline"])
    assert rounds.isVisible() and _cut(rounds) == []
    assert rounds.columnWidth(2) > 1.4 * normal[2]  # "Log-likelihood" at the presenter's font
    window.script.leave_presenter()
    drain_events()
    assert _cut(rounds) == [] and [rounds.columnWidth(c) for c in range(rounds.columnCount() - 1)] == normal


def _table_px(window) -> int:
    return QFontInfo(window.lesson_panel.table.document().defaultFont()).pixelSize()


def test_a_lesson_table_is_drawn_big_and_fills_the_panel_in_presenter_mode(window, qtbot):
    assert window.script.start_lesson("bpe-steps")
    assert window.script.wait_for_lesson_step(60_000) == "shown"
    window.lessons.go(2)  # the corpus as word / count / tokens
    assert window.script.wait_for_lesson_step(60_000) == "shown"
    panel = window.lesson_panel
    assert panel.figure is not None and panel.figure.labels == ("word", "count", "tokens")
    normal_px = _table_px(window)
    _present(window, qtbot, None)  # the lesson's panels
    assert "lesson" in window.presenter.panel_ids
    table = panel.table
    assert table.isVisible()
    assert _table_px(window) >= 1.8 * normal_px  # the presenter's 2x, not less
    doc_width = table.document().size().width()
    assert doc_width >= 0.9 * table.viewport().width()  # the table spans the panel
    window.script.leave_presenter()
    drain_events()
    assert _table_px(window) == normal_px
    window.script.stop_lesson()
