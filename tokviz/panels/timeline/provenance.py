"""`ProvenanceView`: a token's merge tree down to base units, and "Trace a word".

The tree is a fully expanded `QTreeWidget` (root = the token, children = the pair it was merged
from, leaves = bytes or characters, each labelled with the merge rank that made it). The trace
table lists, merge by merge, how a typed word is segmented with the first k merges (k = the shared
step), with the rank of each merge that fires. Typing is debounced; one word is cheap to trace.
Showing a token never moves the shared step (every view would change model): "Go to step N"
does, when the user asks.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from tokviz.core import Timeline
from tokviz.core.bpe.replay import TraceStep, TreeNode, trace_word
from tokviz.core.display.tokens import visible_token
from tokviz.panels.base import monospace_font
from tokviz.panels.widgets import cell_table, hbox, set_cells, vbox

from .wordpiece import reset_trace_headers, show_wordpiece_trace

TRACE_DELAY_MS = 150
TREE_INDENT = 14
LEAF_GAP = 16  # room between the deepest label and the Id column
MAX_WORD = 200


class ProvenanceView(QWidget):
    """`rank_activated(rank)`: the user asked for the step of a merge ("Go to step N", or a
    double click on a tree node or trace row)."""

    rank_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree_label = QLabel("Select a token (merge table or vocabulary) to see how it was built.",
                                 objectName="timeline_tree_label")
        self.tree_label.setWordWrap(True)
        self.goto_button = QPushButton(objectName="timeline_goto_step")
        self.goto_button.setToolTip("Move the whole app (token view, compare, charts) to the step that made "
                                    "this token")
        self.goto_button.clicked.connect(self._on_goto_button_clicked)
        self.goto_button.hide()
        self.tree = QTreeWidget(objectName="timeline_tree")
        self.tree.setHeaderLabels(["Token", "Id", "Merge"])
        self.tree.setUniformRowHeights(True)
        self.tree.setIndentation(TREE_INDENT)  # deep trees (depth 6-10) stay readable in a narrow dock
        self.tree.header().setStretchLastSection(False)
        self.tree.setMinimumHeight(40)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.word_edit = QLineEdit(objectName="timeline_trace_edit")
        self.word_edit.setPlaceholderText("Trace a word, e.g. lowest")
        self.word_edit.setClearButtonEnabled(True)
        self.trace_label = QLabel(objectName="timeline_trace_label")
        self.trace_label.setWordWrap(True)  # a long word's pieces never widen the panel (or the window)
        self.trace_table = cell_table("timeline_trace_table", ["Rank", "Merge", "Segmentation"])
        self.trace_table.setMinimumHeight(40)
        self.trace_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.trace_table.cellDoubleClicked.connect(self._on_trace_cell_double_clicked)

        left = QWidget()
        vbox(left, hbox((self.tree_label, 1), self.goto_button), (self.tree, 1), margins=0)
        right = QWidget()
        vbox(right, hbox(QLabel("Trace a word:"), (self.word_edit, 1)), self.trace_label, (self.trace_table, 1),
             margins=0)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setChildrenCollapsible(False)
        vbox(self, split, margins=0)

        self._timeline: Timeline | None = None
        self._tokenizer = None
        self._vocab: list[bytes] = []
        self._step = 0
        self._token: int | None = None
        self._root_rank: int | None = None  # the merge that made the shown token
        self.trace: list[TraceStep] = []
        self._timer = QTimer(self, singleShot=True, interval=TRACE_DELAY_MS)
        self._timer.timeout.connect(self._update_trace)
        self.word_edit.textChanged.connect(self._timer.start)
        self._update_fonts()

    def _update_fonts(self) -> None:
        mono = monospace_font(self.font())
        self.tree.setFont(mono)
        self.trace_table.setFont(mono)

    def set_state(self, timeline: Timeline | None, tokenizer, vocab: list[bytes], step: int) -> None:
        """The timeline, a tokenizer of it (with at least `step` merges) and the current step."""
        changed = timeline is not self._timeline
        self._timeline, self._tokenizer, self._vocab, self._step = timeline, tokenizer, vocab, step
        if changed:
            self._token = None
            self.tree.clear()
            self.tree_label.setText("Select a token (merge table or vocabulary) to see how it was built.")
        self._update_goto()
        if self.word_edit.text().strip():
            self._update_trace()

    # -- merge tree -------------------------------------------------------------------------

    def show_token(self, token_id: int | None) -> None:
        self._token = token_id
        self.tree.clear()
        tl = self._timeline
        root = None
        if tl is not None and token_id is not None and 0 <= token_id < len(self._vocab):
            root = tl.merge_tree(token_id)
        self._root_rank = None if root is None else root.rank
        self._update_goto()
        if root is None:
            self.tree_label.setText("Select a token (merge table or vocabulary) to see how it was built.")
            return
        self.tree.addTopLevelItem(self._item(root))
        self.tree.expandAll()
        for c in range(3):
            self.tree.resizeColumnToContents(c)
        self.tree.setColumnWidth(0, self.tree.columnWidth(0) + LEAF_GAP)
        kind = "base unit" if root.rank is None else f"merge {root.rank + 1:,} (step {root.rank + 1:,})"
        self.tree_label.setText(f"How “{self.token_label(token_id)}” (id {token_id}) was built: "
                                f"{kind}, {len(root.leaves())} base units, depth {root.depth()}")

    def _update_goto(self) -> None:
        """Offer the step that made the shown token when the app is elsewhere."""
        rank = self._root_rank if self._token is not None else None
        self.goto_button.setVisible(rank is not None and rank + 1 != self._step)
        if rank is not None:
            self.goto_button.setText(f"Go to step {rank + 1:,}")

    @Slot()
    def _on_goto_button_clicked(self) -> None:
        if self._root_rank is not None:
            self.rank_activated.emit(int(self._root_rank))

    def _item(self, node: TreeNode) -> QTreeWidgetItem:
        item = QTreeWidgetItem([self.token_label(node.id), str(node.id),
                                "" if node.rank is None else str(node.rank + 1)])  # merge k = step k
        item.setData(0, Qt.ItemDataRole.UserRole, node.rank)
        item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
        item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight)
        for c in node.children:
            item.addChild(self._item(c))
        return item

    def token_label(self, token_id: int) -> str:
        return visible_token(self._vocab[token_id]) if 0 <= token_id < len(self._vocab) else "?"

    @property
    def token(self) -> int | None:
        return self._token

    @Slot(QTreeWidgetItem, int)
    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, _col: int) -> None:
        rank = item.data(0, Qt.ItemDataRole.UserRole)
        if rank is not None:
            self.rank_activated.emit(int(rank))

    # -- trace a word -----------------------------------------------------------------------

    def set_word(self, word: str) -> None:
        """Trace `word` now (no typing delay)."""
        self.word_edit.setText(word)
        self._timer.stop()
        self._update_trace()

    def trace_lines(self) -> list[str]:
        """The trace as text: ``["l o w e s t _", "lo w e s t _", ...]`` (raw token text)."""
        return [" ".join(self._vocab[i].decode("utf-8", "replace") for i in s.ids) for s in self.trace]

    @Slot()
    def _update_trace(self) -> None:
        word = self.word_edit.text().strip()[:MAX_WORD]
        tok = self._tokenizer
        if self._timeline is not None and self._timeline.traces_matches:  # greedy matches, not merges
            show_wordpiece_trace(self, tok, word, self._step)
            return
        reset_trace_headers(self.trace_table)
        self.trace = trace_word(tok, word, self._step) if word and tok is not None else []
        t = self.trace_table
        t.setRowCount(len(self.trace))
        for r, s in enumerate(self.trace):
            merge = "start" if s.pair is None else (
                f"{self.token_label(s.pair[0])} + {self.token_label(s.pair[1])}")
            seg = " · ".join(self.token_label(i) for i in s.ids)
            items = set_cells(t, r, ("" if s.rank is None else str(s.rank + 1), merge, seg), right=(0,))
            items[0].setData(Qt.ItemDataRole.UserRole, s.rank)
        if not word:
            self.trace_label.setText("")
        elif tok is None:
            self.trace_label.setText("Train or open a model first.")
        else:
            n = len(self.trace) - 1
            m = len(self.trace[-1].ids)
            fire = "1 merge fires" if n == 1 else f"{n} merges fire"
            self.trace_label.setText(f"With the first {self._step:,} merges: {fire}, {m} token{'s' if m != 1 else ''}")

    @Slot(int, int)
    def _on_trace_cell_double_clicked(self, row: int, _col: int) -> None:
        rank = self.trace_table.item(row, 0).data(Qt.ItemDataRole.UserRole)
        if rank is not None:
            self.rank_activated.emit(int(rank))
