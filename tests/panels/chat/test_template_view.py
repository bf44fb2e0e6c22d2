"""The chat template's source as code: wrapped (no sideways scrolling), numbered by template line
(the numbers the linter and Jinja's errors give, however a line wraps), Jinja highlighted."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QTextCharFormat, QTextOption

from tests.core.chat import folders
from tokviz.panels.chat.panel import ChatPanel
from tokviz.panels.chat.template_view import COMMENT, EXPRESSION, STATEMENT, TemplateView

WAIT = 15_000
# line 1 is long: wrapped, it takes several rows, and the numbers beside them still count template lines
FAILING = ("{#- " + "a long comment that wraps " * 12 + "-#}\n"
           "{% for m in messages %}{{ m.content }}\n"
           "{% if m.role == 'tool' %}{{ raise_exception('no tools here') }}{% endif %}"
           "{% endfor %}")


@pytest.fixture
def view(qtbot):
    v = TemplateView()
    qtbot.addWidget(v)
    v.resize(360, 400)
    v.show()
    qtbot.waitExposed(v)
    return v


def _formats(view, line: int) -> dict[int, object]:
    """Position in template line `line` (1-based) -> the highlighter's format there."""
    block = view.document().findBlockByNumber(line - 1)
    ranges = block.layout().formats()  # kept alive: the formats belong to these ranges
    return {i: QTextCharFormat(r.format) for r in ranges for i in range(r.start, r.start + r.length)}


def test_jinja_is_highlighted_statements_expressions_comments_strings(view):
    view.set_template("{# a comment\nover two lines #}\n{% for m in messages %}{{ m['content'] }}{% endfor %}\n"
                      "plain text")
    h = view.highlighter.formats
    first, second, third = _formats(view, 1), _formats(view, 2), _formats(view, 3)
    assert first[0].fontItalic() and first[0].foreground().color() == h[COMMENT].foreground().color()
    assert second[0].fontItalic()  # the comment goes on in the next line
    line = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    assert third[0].foreground().color() == h[STATEMENT].foreground().color()
    assert third[line.index("for")].fontWeight() == QFont.Weight.Bold  # a keyword
    assert third[line.index("{{")].foreground().color() == h[EXPRESSION].foreground().color()
    assert third[line.index("'content'")].foreground().color() == h["string"].foreground().color()
    assert _formats(view, 4) == {}  # text outside tags keeps the editor's colours
    assert len({h[k].foreground().color().name() for k in (COMMENT, STATEMENT, EXPRESSION, "string")}) == 4


def test_long_lines_wrap_and_the_numbers_count_template_lines(view, qtbot):
    view.set_template(FAILING)
    first = view.document().findBlockByNumber(0)
    assert first.layout().lineCount() > 2  # wrapped into rows
    assert view.horizontalScrollBar().maximum() == 0  # nothing to scroll sideways
    view.grab()  # paint, gutter included
    numbers = [n for n, _top in view.gutter.painted]
    assert numbers[:3] == [1, 2, 3]  # one number per template line, not per row
    tops = dict(view.gutter.painted)
    block3 = view.document().findBlockByNumber(2)
    assert tops[3] == round(view.blockBoundingGeometry(block3).translated(view.contentOffset()).top())


def test_the_linter_line_is_the_marked_and_numbered_line(qtbot, tmp_path):
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 600)
    panel.show()
    folder = folders.write_folder(tmp_path / "bad", "gpt2", FAILING, added=folders.CHATML_TOKENS)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        panel.open_folder(folder)
    panel.wait_idle()
    combo = panel.messages_view.rows[2].role_box
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        combo.setCurrentText("tool")
    panel.wait_idle()
    finding = panel.result.findings[0]
    assert (finding.rule, finding.line) == ("template-error", 3)
    view = panel.template_view
    assert view.marked_line() == 3
    marks = view.extraSelections()
    assert marks[0].cursor.block().text() == FAILING.split("\n")[2]  # the line the error is on, though line 1 wraps
    view.mark_line(None)
    panel.findings.setCurrentRow(-1)
    panel.findings.setCurrentRow(0)  # clicking the finding shows its line again
    assert view.marked_line() == 3
    view.grab()
    assert 3 in dict(view.gutter.painted)  # scrolled to it, its number beside it
    assert view.lineWrapMode() == view.LineWrapMode.WidgetWidth
    assert view.wordWrapMode() == QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere
    panel.shutdown()
