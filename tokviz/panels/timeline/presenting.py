"""The merge timeline in presenter mode: what reads from the back of the room.

Kept: the transport buttons and slider, the step box, the merge table with its key columns (Rank,
Left, Right, New token, Count; WordPiece keeps its Score; Unigram its rounds) and the corpus at
step k with the tokens of merge k lit. Hidden: the candidates, the Chart and Provenance tabs, the
speed box and the Loop, Follow and Clicker keys boxes (the presenter's own keys drive the
timeline). Columns get narrower at the presenter's big font; Unigram's rounds table keeps every
column as wide as its contents (the column gets that width, or the presenter a smaller font).
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QFontMetrics

from tokviz.engine.tables.merge_model import COL_COUNT, COL_ID, COL_LENGTH, COL_RANK, COLUMNS
from tokviz.panels.base import PresentingChanges

HIDDEN_COLUMNS = (COL_ID, COL_LENGTH)
CHARS = {COL_RANK: 7, COL_ID: 7, COL_COUNT: 10, COL_LENGTH: 12}  # column width in digits (else 10)
PRESENTING_CHARS = {COL_RANK: 5, COL_COUNT: 6}  # presenter mode (else 7)
NARROW_TABLE_SHARE = 0.4  # of the height for the merge table when the panel is in rows


def column_width(fm: QFontMetrics, col: int, presenting: bool = False) -> int:
    """Width of merge-table column `col` (at least its header) for the table's font metrics `fm`."""
    chars = PRESENTING_CHARS.get(col, 7) if presenting else CHARS.get(col, 10)
    return max(fm.horizontalAdvance(COLUMNS[col]) + 24, fm.horizontalAdvance("0") * chars)


def size_for_font(panel) -> None:
    """The merge table's column widths for its font; presenting, also its minimum width (all of
    its key columns: the presenter lowers the font scale rather than cut one) and transport
    buttons as tall as a line of text."""
    t, fm = panel.table, panel.table.fontMetrics()
    for col in range(len(COLUMNS)):
        t.setColumnWidth(col, column_width(fm, col, panel.presenting))
    if panel.presenting:
        t.setMinimumWidth(key_columns_width(panel))
        if panel.unigram.active:
            rounds = panel.unigram.rounds.rounds
            rounds.setMinimumWidth(contents_width(rounds))
        side = panel.transport.fontMetrics().height()
        for b in _buttons(panel.transport):
            b.setIconSize(QSize(side, side))


def key_columns_width(panel) -> int:
    """Width the merge table needs to show its visible columns at presenter widths."""
    t, fm = panel.table, panel.table.fontMetrics()
    cols = sum(column_width(fm, c, True) if c < len(COLUMNS) else t.columnWidth(c)
               for c in range(t.model().columnCount()) if not t.isColumnHidden(c))
    return cols + t.verticalScrollBar().sizeHint().width() + 2 * t.frameWidth() + 2


def contents_width(table) -> int:
    """Width a cell table needs to show every column as wide as its header and cells."""
    header = table.horizontalHeader()
    cols = sum(max(table.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in range(table.columnCount()))
    return cols + table.verticalScrollBar().sizeHint().width() + 2 * table.frameWidth() + 2


def _buttons(transport) -> tuple:
    return (transport.home_button, transport.back_button, transport.play_button, transport.forward_button,
            transport.end_button)


def present_timeline(panel, changes: PresentingChanges) -> None:
    """`TimelinePanel._present`: hide the secondary parts (undone by `changes`)."""
    t = panel.transport
    changes.hide(t.speed_box, t.loop_box, t.follow_box, t.clicker_box, panel.candidates_view, panel.tabs)
    for col in HIDDEN_COLUMNS:
        changes.set(panel.table.setColumnHidden, col, was=panel.table.isColumnHidden(col), now=True)
    changes.set(panel.table.setMinimumWidth, was=panel.table.minimumWidth())
    rounds = panel.unigram.rounds.rounds
    changes.set(rounds.setMinimumWidth, was=rounds.minimumWidth())
    for b in _buttons(t):
        changes.set(b.setIconSize, was=b.iconSize())
    splitter = panel.splitter  # resizeEvent sizes it while presenting; restored on leaving
    changes.set(splitter.setSizes, was=splitter.sizes())
    changes.set(splitter.setOrientation, was=splitter.orientation())


def splitter_sizes(panel, span: int, wide: bool) -> list[int]:
    """Sizes of the panel's (merges, corpus, tabs) splitter along `span` pixels: thirds-ish
    normally; presenting, the merge table as wide as its columns (or 40 % of the height) and the
    rest for the corpus."""
    if not panel.presenting:
        return [span * 3 // 11, span * 4 // 11, span * 4 // 11]
    if not wide:
        table = int(span * NARROW_TABLE_SHARE)
    elif panel.unigram.active:  # the rounds' columns whole; the pruned pieces below like the room
        table = min(span // 2, max(span * 2 // 5, contents_width(panel.unigram.rounds.rounds)))
    else:
        m = panel.layout().contentsMargins()
        span -= m.left() + m.right() + panel.splitter.handleWidth()  # the splitter's own width
        table = min(span // 2, key_columns_width(panel))
    return [table, span - table, 0]
