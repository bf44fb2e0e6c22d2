"""`CandidatesView`: the best pairs of one merge decision, the winner marked, ties explained.

At step k it shows the decision that produced step k (merge rank k - 1; at k = 0 the first,
upcoming merge): each candidate pair with its count and first occurrence; the winner is starred,
pairs with the winner's count are marked as ties with why the winner won (first occurrence).
The decision itself comes from `tokviz.core.replay.decision_at`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tokviz.core import Timeline
from tokviz.core.replay import decision_at
from tokviz.engine.display import visible_token

from .base import monospace_font, muted_color, ok_color
from .timeline_pieces import reset_candidate_headers, show_wordpiece_candidates  # issue 9


class CandidatesView(QWidget):
    """A caption (the merge) and a small table of its candidates."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(objectName="timeline_candidates_label")
        self.label.setWordWrap(True)
        self.table = t = QTableWidget(0, 5, objectName="timeline_candidates")
        t.setHorizontalHeaderLabels(["", "Pair", "Count", "First seen", "Why"])
        t.verticalHeader().hide()
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        t.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        t.horizontalHeader().setStretchLastSection(True)
        t.setWordWrap(False)
        t.setMinimumHeight(48)
        t.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        for col, width in enumerate((80, 130, 70, 150)):
            t.setColumnWidth(col, width)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.label)
        lay.addWidget(t, 1)

    def show_step(self, tl: Timeline | None, k: int, vocab: list[bytes]) -> None:
        """Show the decision that led to step k of `tl` (tokens printed from `vocab`)."""
        t = self.table
        t.setVisible(tl is None or tl.algorithm != "pretrained")  # issue 7: nothing to list
        if tl is None or tl.n_merges == 0:
            t.setRowCount(0)
            self.label.setText("Candidates: train or open a model to replay its merges.")
            return
        if tl.algorithm == "pretrained":  # a loaded tokenizer (issue 7): no training record
            t.setRowCount(0)
            rank = k - 1 if k > 0 else 0
            step = tl.steps[rank]
            what = "Next merge" if k == 0 else f"Merge {rank:,} (to step {rank + 1:,})"
            parts = (f"{visible_token(vocab[step.pair[0]])} + {visible_token(vocab[step.pair[1]])}"
                     if step.pair is not None else "(no single merge forms it)")
            self.label.setText(f"{what}: {parts} → {visible_token(step.token)}. Counts and competing "
                               f"pairs are unknown: {tl.settings.name} was loaded, not trained here.")
            return
        if tl.algorithm == "wordpiece":  # issue 9: the score next to the raw counts
            show_wordpiece_candidates(self, tl, k, vocab)
            return
        reset_candidate_headers(t)
        d = decision_at(tl, k)
        step = tl.steps[d.rank]
        what = "Next merge" if d.upcoming else f"Merge {d.rank} (to step {d.rank + 1})"
        self.label.setText(f"{what}: {visible_token(vocab[step.pair[0]])} + "
                           f"{visible_token(vocab[step.pair[1]])} → "
                           f"{visible_token(step.token)}, count {step.count:,}")
        t.setRowCount(len(d.candidates))
        good, muted = ok_color(self.palette()), muted_color(self.palette())
        mono = monospace_font(self.font())
        for r, c in enumerate(d.candidates):
            a, b = c.pair
            first = "" if c.first_chunk < 0 else f"chunk {c.first_chunk:,}, unit {c.first_offset}"
            mark = "★ winner" if c.winner else ("= tie" if c.tied else "")
            cells = (mark, f"{visible_token(vocab[a])} + {visible_token(vocab[b])}",
                     f"{c.count:,}", first, c.reason)
            for col, text in enumerate(cells):
                item = t.item(r, col)
                if item is None:
                    item = QTableWidgetItem()
                    t.setItem(r, col, item)
                item.setText(text)
                if col == 1:
                    item.setFont(mono)
                if col == 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setForeground(good if c.winner else (self.palette().text().color() if c.tied else muted))
                f = item.font()
                f.setBold(c.winner)
                item.setFont(f)
