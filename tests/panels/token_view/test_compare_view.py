"""The Compare tab compares: rows stacked under one scroll bar, a new row scrolled into view and
flashed, the view given room when a comparison begins, a summary line per row."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea

from tokviz.core import TrainSettings, train
from tokviz.core.baselines import WordTokenizer
from tokviz.engine.step_model import StepModel
from tokviz.panels.token_view.panel import TokenViewPanel

CORPUS = "low lower lowest newer newest wider widest " * 40
WAIT = 30_000
LONG = ("the lowest newer widest " * 400).strip()


@pytest.fixture
def panel(qtbot):
    sm = StepModel()
    p = TokenViewPanel(sm, corpus_text=lambda: CORPUS)
    qtbot.addWidget(p)
    p.resize(900, 700)
    p.show()
    qtbot.waitExposed(p)
    with qtbot.waitSignal(p.result_shown, timeout=WAIT):
        p.set_text(LONG)
        sm.set_timeline(train(TrainSettings(vocab_size=300), texts=[CORPUS]))
    p.wait_idle()
    yield p
    p.shutdown()


def test_rows_stack_under_one_scroll_bar(panel):
    views = panel.compare.views
    assert len(panel.result.rows) >= 3
    for view in views[: len(panel.result.rows)]:
        assert view.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        assert view.height() >= view.content_height()  # drawn whole: nothing to scroll inside
        assert view.verticalScrollBar().maximum() == 0
    nested = [w for w in panel.compare.widget().findChildren(QAbstractScrollArea)
              if w.verticalScrollBar().isVisible()]
    assert nested == []
    assert panel.compare.verticalScrollBar().maximum() > 0  # the one scroll bar: the rows are taller than it


def test_a_new_row_is_scrolled_into_view_and_flashed(panel, qtbot):
    compare = panel.compare
    compare.verticalScrollBar().setValue(0)
    n = len(panel.result.rows)
    with qtbot.waitSignal(compare.row_flashed, timeout=WAIT) as flashed:
        panel.add_tokenizer(WordTokenizer.from_texts(["the lowest newer widest"]))
    assert flashed.args == [n] and compare.flashing == n  # lit now: the flash is short, waiting may end it
    panel.wait_idle()
    view = compare.views[n]
    top = view.mapTo(compare.widget(), view.rect().topLeft()).y()
    shown = compare.verticalScrollBar().value()
    assert shown <= top <= shown + compare.viewport().height()  # the new row is on screen
    assert compare.header_text(n)
    qtbot.waitUntil(lambda: compare.flashing == -1, timeout=WAIT)  # the flash ends by itself


def test_a_flash_can_be_ended_at_once(panel, qtbot):
    compare = panel.compare
    with qtbot.waitSignal(compare.row_flashed, timeout=WAIT):
        panel.add_tokenizer(WordTokenizer.from_texts(["the lowest newer widest"]))
    assert compare.flashing >= 0
    compare.end_flash()  # a picture taken straight away shows no lit header
    assert compare.flashing == -1


def test_each_row_has_a_summary_line(panel):
    rows = panel.result.rows
    assert "the reference" in panel.compare.header_text(0)
    for r in range(1, len(rows)):
        header = panel.compare.header_text(r)
        st = rows[r].stats
        assert f"{st.tokens:,} tokens" in header and f"{st.chars_per_token:.2f} chars/token" in header
        assert f"{sum(rows[r].differs):,} of {len(rows[r].differs):,} shown tokens cut differently" in header


def test_a_comparison_gets_the_room(panel):
    sizes = panel.splitter.sizes()
    assert panel.tabs.currentWidget() is panel.compare
    assert sizes[2] >= sum(sizes) // 2  # the compare tabs hold at least half the height


def test_a_large_paste_goes_in_piece_by_piece_as_one_undo_step(panel, qtbot):
    from PySide6.QtGui import QGuiApplication

    from tokviz.panels.token_view.editor import CHUNK_CHARS

    text = ("To be, or not to be, that is the question:\n" * 6000)[: 8 * CHUNK_CHARS + 123]
    panel.set_text("")
    panel.wait_idle()
    QGuiApplication.clipboard().setText(text)
    with qtbot.waitSignal(panel.editor.paste_finished, timeout=WAIT):
        panel.editor.paste()
        assert panel.editor.is_pasting and len(panel.editor.toPlainText()) == CHUNK_CHARS  # the rest follows
    assert panel.editor.toPlainText() == text and not panel.editor.is_pasting
    qtbot.waitUntil(lambda: panel.result is not None and len(panel.result.request.text) == len(text), timeout=WAIT)
    panel.editor.undo()
    assert panel.editor.toPlainText() == ""  # the whole paste was one step


def test_the_editors_text_is_read_once_per_change_and_never_stale(qtbot):
    from tokviz.panels.token_view.editor import TokenTextEdit

    edit = TokenTextEdit()
    qtbot.addWidget(edit)
    reads = []
    real = edit.toPlainText

    def counting():
        reads.append(1)
        return real()

    edit.toPlainText = counting  # the text() cache asks the document only after a change
    edit.setPlainText("low lower")
    assert edit.text() == edit.text() == "low lower" and len(reads) == 1
    edit.moveCursor(edit.textCursor().MoveOperation.End)
    qtbot.keyClicks(edit, " lowest")
    assert edit.text() == real() == "low lower lowest"
    edit.undo()
    assert edit.text() == real()
    edit.selectAll()
    edit.cut()
    assert edit.text() == "" == real()


def test_a_row_paints_only_the_strip_the_scroll_area_shows(panel):
    """A row is drawn at its full height inside one scroll area, which often shows only a strip of
    it: painting that strip draws the tokens of the lines in it, not all of the row's tokens."""
    view = panel.compare.views[0]
    vp = view.viewport()
    line = view.token_rect(0).height()
    vp.repaint(0, 0, vp.width(), vp.height())
    whole = view.painted
    assert view.content_height() > 4 * line and len(whole) > 20
    tops = sorted({view.token_rect(i).top() for i in whole})
    for k in (0, 2):  # a strip of one pixel row in the middle of the first line, then of the third
        vp.repaint(0, tops[k] + line // 2, vp.width(), 1)
        assert {view.token_rect(i).top() for i in view.painted} == {tops[k]}
