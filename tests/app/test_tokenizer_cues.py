"""Several tokenizers side by side: the token view, the vocabulary and the Chat view each name the
tokenizer and step they show, and the Chat view warns when its tokenizer is not theirs; a lesson
replaces the token view's text; clicking the dock tabs keeps the columns' widths."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QTabBar

from tests.core.chat import folders
from tests.qt_fixtures import drain_events
from tokviz.core.lessons.files import builtin_lessons
from tokviz.core.lessons.view_text import DEFAULT_TEXT, lesson_view_text
from tokviz.engine.samples import sample

WAIT = 60_000


def _open_in_window(window, qtbot, folder):
    chat = window.script.panel("chat")
    with qtbot.waitSignal(chat.result_shown, timeout=WAIT):  # the Chat view follows the window
        assert window.script.open_tokenizer(folder / "tokenizer.json")
        assert window.script.wait_for_tokenizer(WAIT) == "opened"
    chat.wait_idle()
    return chat


def test_each_view_names_its_tokenizer_and_step_and_the_chat_view_warns_when_it_differs(window, qtbot, tmp_path):
    chat = _open_in_window(window, qtbot, folders.chatml(tmp_path))
    sm = window.step_model
    n, name = sm.n_steps, sm.timeline.title
    views, chat_cue = (window.token_view_panel.model_cue, window.vocab_panel.model_cue), chat.model_label
    for cue in views:
        assert cue.isVisible() and name in cue.text() and f"step {n:,} of {n:,}" in cue.text() and not cue.differs
    assert "chatml" in chat_cue.text() and "whole vocabulary" in chat_cue.text()
    assert chat.shows_window_tokenizer() and not chat_cue.differs and chat_cue.styleSheet() == ""

    sm.set_step(n // 2)  # the token view and vocabulary at half the merges: not what the chat uses
    for cue in views:
        assert f"step {n // 2:,} of {n:,}" in cue.text()
    assert chat_cue.differs and chat_cue.styleSheet() != ""
    assert "⚠" in chat_cue.text() and f"step {n // 2:,} of {n:,}" in chat_cue.text()
    sm.set_step(n)
    assert not chat_cue.differs and chat_cue.styleSheet() == ""

    other = folders.write_folder(tmp_path / "another-model", "gpt2", folders.CHATML, added=folders.CHATML_TOKENS)
    with qtbot.waitSignal(chat.result_shown, timeout=WAIT):
        chat.open_folder(other)  # the Chat view's own folder: the window keeps its tokenizer
    chat.wait_idle()
    assert "another-model" in chat_cue.text() and chat_cue.differs and name in chat_cue.text()
    window.appearance.set_theme("dark", save=False)  # the warning keeps readable colours
    drain_events()
    assert chat_cue.differs and chat_cue.styleSheet() != ""


def test_a_lesson_replaces_the_token_view_text(window):
    window.token_view_panel.set_text("my own paste, not the lesson's")
    window.token_view_panel.wait_idle()
    no_text = next(lesson for lesson in builtin_lessons() if lesson.text is None and lesson.corpus is not None)
    assert window.script.start_lesson(no_text.name) and window.script.wait_for_lesson_step(WAIT) == "shown"
    corpus = sample(no_text.corpus.value).read() if no_text.corpus.kind == "sample" else no_text.corpus.read()
    shown = window.token_view_panel.text()
    assert shown == lesson_view_text(None, corpus) and shown and "my own paste" not in shown
    with_text = next(lesson for lesson in builtin_lessons() if lesson.text is not None)
    assert window.script.start_lesson(with_text.name) and window.script.wait_for_lesson_step(WAIT) == "shown"
    assert window.token_view_panel.text() == with_text.text
    no_corpus = next(lesson for lesson in builtin_lessons() if lesson.text is None and lesson.corpus is None)
    assert window.script.start_lesson(no_corpus.name) and window.script.wait_for_lesson_step(WAIT) == "shown"
    assert window.token_view_panel.text() == DEFAULT_TEXT != with_text.text


@pytest.mark.parametrize("key", ["inspect", "chat"])
def test_clicking_the_dock_tabs_keeps_the_columns_widths(make_window, qtbot, key):
    window = make_window(defer_panels=True)  # a tab clicked first builds its panel then
    window.resize(1920, 1050)
    qtbot.waitUntil(lambda: window.width() == 1920)
    window.workspaces.choose(key)
    drain_events()

    def column_widths() -> list[int]:
        return sorted({d.geometry().x(): d.width() for d in window.findChildren(QDockWidget)
                       if d.isVisible() and not d.visibleRegion().isEmpty()}.items())

    before = column_widths()
    assert len(before) >= 2
    for bar in [b for b in window.findChildren(QTabBar) if b.parent() is window and b.isVisible()]:
        for i in range(bar.count()):
            qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
            drain_events()
            assert column_widths() == before, bar.tabText(i)


def test_the_cue_names_the_tokenizer_a_lesson_shows_without_a_model(window):
    from tokviz.core.lessons.files import PRETRAINED, find_lesson, pretrained_file

    lesson = find_lesson("numbers")  # three real tokenizers compared, nothing trained or opened
    missing = [PRETRAINED[t][0] for t in lesson.tokenizers if pretrained_file(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (../shared/vocab/tiktoken or tiktoken's cache)")
    assert window.script.start_lesson(lesson.name)
    assert window.script.wait_for_lesson_step(WAIT) == "shown"
    window.lessons.go(lesson.screenshot_step)
    assert window.script.wait_for_lesson_step(WAIT) == "shown"
    view = window.token_view_panel
    assert view.wait_idle()
    assert window.step_model.timeline is None
    shown = view.result.reference.spec.title
    assert shown == PRETRAINED["gpt2"][1]  # GPT-2 (r50k_base): the view's tokens and the first row
    cue = view.model_cue.text()
    assert shown in cue and "no tokenizer" not in cue, cue
    window.script.stop_lesson()
