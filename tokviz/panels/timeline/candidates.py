"""`CandidatesView`: the best pairs of one merge decision, the winner marked, ties explained.

At step k it shows the decision that produced step k (merge rank k - 1; at k = 0 the first,
upcoming merge): each candidate pair with its count and first occurrence; the winner is starred,
pairs with the winner's count are marked as ties with why the winner won (first occurrence).
The decision itself comes from `tokviz.core.bpe.replay.decision_at`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from tokviz.core import Timeline
from tokviz.core.bpe.replay import decision_at
from tokviz.core.display.tokens import visible_token
from tokviz.panels.widgets import cell_table, set_cells, show_rows, vbox

from .wordpiece import (BPE_CANDIDATE_HEADERS, paint_candidate, refit_candidate_fonts, reset_candidate_headers,
                        show_wordpiece_candidates)


MIN_ROWS = 5  # the winner and four rivals at least, whatever the dock's height


class CandidatesView(QWidget):
    """A caption (the merge) and a small table of its candidates (at least `MIN_ROWS` rows high);
    the winner's "tie with n other pairs" lists them all in its tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(objectName="timeline_candidates_label")
        self.label.setWordWrap(True)
        self.table = t = cell_table("timeline_candidates", BPE_CANDIDATE_HEADERS, selectable=False)
        t.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for col, width in enumerate((80, 130, 70, 150)):
            t.setColumnWidth(col, width)
        vbox(self, self.label, (t, 1), margins=0, spacing=2)
        t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
        show_rows(t, MIN_ROWS)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            t = self.table
            t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
            refit_candidate_fonts(self)
            show_rows(t, MIN_ROWS)

    def show_step(self, tl: Timeline | None, k: int, vocab: list[bytes]) -> None:
        """Show the decision that led to step k of `tl` (tokens printed from `vocab`)."""
        t = self.table
        listed = tl is None or tl.has_counts  # a loaded tokenizer has no candidates to list
        t.setVisible(listed)
        # without the table the caption is all there is: no empty band, the merge table gets the room
        self.setMaximumHeight(16_777_215 if listed else self.fontMetrics().lineSpacing() * 4 + 8)
        if tl is None or tl.n_merges == 0:
            t.setRowCount(0)
            self.label.setText("Candidates: train or open a model to replay its merges.")
            return
        if not tl.has_counts:  # a loaded tokenizer: no training record
            t.setRowCount(0)
            rank = k - 1 if k > 0 else 0
            step = tl.steps[rank]
            what = "Next merge" if k == 0 else f"Merge {rank + 1:,} (step {rank + 1:,})"
            parts = (f"{visible_token(vocab[step.pair[0]])} + {visible_token(vocab[step.pair[1]])}"
                     if step.pair is not None else "(no single merge forms it)")
            self.label.setText(f"{what}: {parts} → {visible_token(step.token)}. Counts and competing "
                               f"pairs are unknown: {tl.settings.name} was loaded, not trained here.")
            return
        if tl.has_scores:  # WordPiece: the score next to the raw counts
            show_wordpiece_candidates(self, tl, k, vocab)
            return
        reset_candidate_headers(t)
        d = decision_at(tl, k)
        step = tl.steps[d.rank]
        what = "Next merge" if d.upcoming else f"Merge {d.rank + 1:,} (step {d.rank + 1:,})"
        # BoundlessBPE: each step is a merge or a supermerge, and says which and what it beat
        note = f" — {tl.step_note(d.rank)}" if tl.step_kinds else ""
        self.label.setText(f"{what}: {visible_token(vocab[step.pair[0]])} + "
                           f"{visible_token(vocab[step.pair[1]])} → "
                           f"{visible_token(step.token)}, count {step.count:,}{note}")
        t.setRowCount(len(d.candidates))
        tied = [f"{visible_token(vocab[c.pair[0]])} + {visible_token(vocab[c.pair[1]])}"
                for c in d.candidates if c.tied and not c.winner]
        for r, c in enumerate(d.candidates):
            a, b = c.pair
            first = "" if c.first_chunk < 0 else f"chunk {c.first_chunk:,}, unit {c.first_offset}"
            mark = "★ winner" if c.winner else ("= tie" if c.tied else "")
            cells = (mark, f"{visible_token(vocab[a])} + {visible_token(vocab[b])}",
                     f"{c.count:,}", first, c.reason)
            items = set_cells(t, r, cells, right=(2,))
            tip = "Tied with: " + ", ".join(tied) if c.winner and tied else ""
            for item in items:
                item.setToolTip(tip)
            paint_candidate(self, items, c.winner, c.tied)
