"""Corpus editor and training options panels on their own."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontInfo, QTextCursor
from PySide6.QtWidgets import QApplication

from tokviz.core import TokvizError, TrainSettings
from tokviz.engine.corpus_files import load_file
from tokviz.panels.corpus.panel import FEED_CHARS, CorpusPanel, format_stats
from tokviz.panels.training.panel import TrainingPanel


@pytest.fixture
def corpus(qtbot):
    panel = CorpusPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 400)
    panel.show()
    yield panel
    panel.shutdown()


@pytest.fixture
def training(qtbot):
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    panel.show()
    return panel


def type_text(qtbot, panel: CorpusPanel, text: str) -> None:
    panel.editor.setFocus()
    panel.editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(panel.editor, text)


def test_typing_marks_modified_and_updates_stats(corpus, qtbot):
    corpus.set_text("low lower", title="t")
    assert corpus.is_modified is False
    assert corpus.stats.words == 2
    with qtbot.waitSignal(corpus.stats_changed, timeout=10_000) as blocker:
        type_text(qtbot, corpus, " lowest low")
    assert corpus.is_modified is True
    assert corpus.text() == "low lower lowest low"
    s = blocker.args[0]
    assert (s.words, s.unique_words, s.chars) == (4, 3, 20)
    assert "modified" in corpus.findChild(type(corpus.stats_label), "corpus_name").text()


def test_undo_and_redo(corpus, qtbot):
    corpus.set_text("abc", title="t")
    type_text(qtbot, corpus, "def")
    corpus.editor.undo()
    assert corpus.text() == "abc"
    assert corpus.is_modified is False  # back at the saved state
    corpus.editor.redo()
    assert corpus.text() == "abcdef"
    corpus.set_text("new document")
    assert corpus.editor.document().isUndoAvailable() is False  # a new document has no history


def test_big_text_is_fed_in_slices(corpus, qtbot):
    text = "the quick brown fox\n" * (3 * FEED_CHARS // 20)
    with qtbot.waitSignal(corpus.text_loaded, timeout=10_000):
        corpus.set_text(text, title="big")
        assert corpus.is_loading is True
        assert corpus.editor.isReadOnly() is True
    assert corpus.is_loading is False
    assert corpus.editor.isReadOnly() is False
    assert corpus.editor.toPlainText() == text
    assert corpus.is_modified is False
    assert corpus.editor.document().isUndoAvailable() is False


def test_word_frequency_mode(corpus, qtbot):
    corpus.set_text("low 5\nlower 2\n", word_counts=True)
    assert corpus.word_counts_box.isChecked()
    assert corpus.stats.table_entries == 2 and corpus.stats.table_total == 7
    assert "2 table entries · total count 7" in corpus.stats_label.text()
    with qtbot.waitSignal(corpus.word_counts_changed):
        corpus.word_counts_box.setChecked(False)
    assert corpus.word_counts is False
    assert "4 words" in corpus.stats_label.text()
    corpus.set_text("this is prose\n")
    corpus.set_word_counts(True)
    assert "Not a word-frequency table" in corpus.stats_label.text()
    assert "expected 'word count'" in corpus.stats_label.text()


def test_large_file_read_only_view(corpus, tmp_path):
    p = tmp_path / "big.txt"
    p.write_text("".join(f"line {i}\n" for i in range(5000)), encoding="utf-8")
    corpus.show_loaded(load_file(p, edit_limit=1000))
    assert corpus.is_read_only and not corpus.is_modified
    assert "Read-only view" in corpus.banner.text() and corpus.banner.isVisible()
    assert corpus.large_view.line_count == 5001
    assert corpus.large_view.line(4999) == "line 4999"
    corpus.large_view.scroll_to_line(4000)
    assert corpus.large_view.first_visible_line() == 4000
    assert corpus.large_view.copy_visible().startswith("line 4000\nline 4001")
    assert QApplication.clipboard().text().startswith("line 4000")
    inp = corpus.corpus_input()
    assert inp.pieces is not None and inp.joined() == p.read_text()
    assert corpus.is_blank() is False
    corpus.set_text("editable again")
    assert corpus.is_read_only is False and corpus.banner.isHidden()


def test_stats_format():
    from tokviz.engine.corpus_files import CorpusStats

    s = CorpusStats(1, 1, 1, 1, 1, 1)
    assert format_stats(s, word_counts=False) == (
        "1 character · 1 byte · 1 line · 1 word · 1 unique word · 1 distinct character"
    )


def test_fonts_follow_the_application_font(corpus, qtbot):
    app = QApplication.instance()
    old = QFont(app.font())
    try:
        bigger = QFont(old)
        bigger.setPointSizeF(old.pointSizeF() * 2)
        app.setFont(bigger)
        qtbot.waitUntil(lambda: corpus.editor.font().pointSizeF() == pytest.approx(bigger.pointSizeF()))
        info = QFontInfo(corpus.editor.font())  # the bundled font, whatever "monospace" is here
        assert info.family() == "DejaVu Sans Mono" and info.fixedPitch()
    finally:
        app.setFont(old)


def test_training_settings_round_trip(training):
    cases = [
        TrainSettings(vocab_size=512),
        TrainSettings(units="chars", split="whitespace", merges=30, min_count=3, end_of_word="</w>"),
        TrainSettings(split="regex:\\w+|\\s+", special_tokens=("<s>", "</s>"), vocab_size=400),
        TrainSettings(split="none", min_count=5),
    ]
    for s in cases:
        training.set_settings(s)
        assert training.settings() == s
        assert training.is_valid


def test_regex_is_validated_as_you_type(training, qtbot):
    training.split_box.setCurrentIndex(training.split_box.findData("custom"))
    assert not training.pattern_edit.isReadOnly()
    training.pattern_edit.clear()
    qtbot.keyClicks(training.pattern_edit, "(ab")
    assert not training.is_valid
    assert not training.train_button.isEnabled()
    assert "invalid split regex" in training.validation_message.lower()
    training.pattern_edit.clear()
    qtbot.keyClicks(training.pattern_edit, "(a)b")
    assert "capturing groups" in training.validation_message
    training.pattern_edit.clear()
    qtbot.keyClicks(training.pattern_edit, "(?:a)b|\\w+")
    assert training.is_valid and training.train_button.isEnabled()
    assert training.settings().split == "regex:(?:a)b|\\w+"


def test_impossible_settings_are_explained(training):
    training.set_settings(TrainSettings(vocab_size=100))
    assert not training.is_valid
    assert "vocabulary size 100 is too small" in training.validation_message.lower()
    with pytest.raises(TokvizError):
        training.settings()
    training.specials_edit.setText("<s> <s>")
    training.budget_box.setCurrentIndex(training.budget_box.findData("none"))
    assert "distinct" in training.validation_message
    assert not training.budget_spin.isEnabled()
    training.specials_edit.setText("<s>")
    assert training.is_valid and training.settings().vocab_size is None


def test_preset_patterns_are_shown_read_only(training):
    training.split_box.setCurrentIndex(training.split_box.findData("gpt2"))
    assert training.pattern_edit.isReadOnly()
    assert training.pattern_edit.text().startswith("'(?:[sdmt]|ll|ve|re)")
    training.split_box.setCurrentIndex(training.split_box.findData("none"))
    assert training.pattern_edit.text() == ""


def test_buttons_follow_the_running_state(training, qtbot):
    training.set_running(True)
    assert training.cancel_button.isEnabled() and training.train_button.text() == "Restart"
    with qtbot.waitSignal(training.cancel_requested):
        qtbot.mouseClick(training.cancel_button, Qt.MouseButton.LeftButton)
    training.set_running(False)
    assert not training.cancel_button.isEnabled() and training.train_button.text() == "Train"
    with qtbot.waitSignal(training.train_requested):
        qtbot.mouseClick(training.train_button, Qt.MouseButton.LeftButton)


def test_custom_regex_starts_from_the_preset(training):
    training.split_box.setCurrentIndex(training.split_box.findData("gpt2"))
    gpt2 = training.pattern_edit.text()
    training.split_box.setCurrentIndex(training.split_box.findData("custom"))
    assert training.pattern_edit.text() == gpt2
    assert training.settings().split == "regex:" + gpt2


def test_word_frequency_tables_are_detected(corpus):
    corpus.set_text("low 5\nlower 2\nnewest 6\n")
    assert corpus.word_counts is True
    corpus.set_text("low lower newest\n")
    assert corpus.word_counts is False
    corpus.set_text("low 5\n", word_counts=False)  # an explicit choice wins
    assert corpus.word_counts is False


def test_vocabulary_table_never_shows_fewer_than_five_rows(qtbot):
    from tokviz.engine.tables.vocab_model import VocabModel
    from tokviz.panels.vocab_panel import VocabPanel

    panel = VocabPanel(VocabModel())
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.resize(500, 60)  # squeezed: the panel keeps the table's five rows
    QApplication.processEvents()
    table = panel.table
    assert table.viewport().height() >= 5 * table.verticalHeader().defaultSectionSize()
    font = QFont(panel.font())
    font.setPointSizeF(font.pointSizeF() * 2)  # a larger font: still five (larger) rows
    panel.setFont(font)
    QApplication.processEvents()
    assert table.minimumHeight() >= 5 * table.verticalHeader().defaultSectionSize()


def test_training_form_scrolls_and_keeps_train_in_sight(qtbot):
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.resize(520, panel.minimumSizeHint().height())
    QApplication.processEvents()
    assert panel.minimumSizeHint().height() < panel.options_scroll.widget().sizeHint().height()
    assert panel.train_button.isVisible() and panel.rect().contains(panel.train_button.geometry())
    group = panel.summary.parentWidget()  # the result stands beside the form: a third of the width
    assert group.geometry().left() > panel.options_scroll.geometry().right()
    assert group.width() <= panel.width() // 2
