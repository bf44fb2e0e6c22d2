"""WordPiece on the merge timeline: scored candidates and the greedy longest-match trace.

`show_wordpiece_candidates` fills the candidates table (`CandidatesView`) with the score
count(ab) / (count(a) · count(b)) next to the raw counts, so one sees why a rare but cohesive pair
beats a frequent one. `show_wordpiece_trace` fills the provenance view's trace table with the
greedy matches of a word (each with the longer candidates tried first). The decisions come from
`tokviz.core.algorithm.piece_replay`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from tokviz.core.display.tokens import visible_token
from tokviz.core.wordpiece.replay import wordpiece_decision, wordpiece_trace
from tokviz.panels.base import monospace_font, muted_color, ok_color
from tokviz.panels.widgets import set_cells

CANDIDATE_HEADERS = ["", "Pair", "Score", "count(ab)", "count(a)", "count(b)", "Why"]
BPE_CANDIDATE_HEADERS = ["", "Pair", "Count", "First seen", "Why"]
TRACE_HEADERS = ["At", "Match", "Tried first (longest first, not in the vocabulary)"]


def _set_headers(table: QTableWidget, headers: list[str]) -> None:
    if table.columnCount() != len(headers) or table.horizontalHeaderItem(1) is None \
            or [table.horizontalHeaderItem(i).text() for i in range(len(headers))] != headers:
        table.setColumnCount(len(headers))
        table.setHorizontalHeaderLabels(headers)


def reset_candidate_headers(table: QTableWidget) -> None:
    """Back to the BPE columns (after a WordPiece timeline was shown)."""
    _set_headers(table, BPE_CANDIDATE_HEADERS)


def paint_candidate(view, items: list[QTableWidgetItem], winner: bool, tied: bool) -> None:
    """A candidate row of `view` (a `CandidatesView`): the pair (column 1) in a monospace font, the
    winner bold in the "ok" colour, ties in the text colour, the others muted."""
    pal = view.palette()
    color = ok_color(pal) if winner else (pal.text().color() if tied else muted_color(pal))
    mono = monospace_font(view.font())
    for col, item in enumerate(items):
        f = mono if col == 1 else view.font()
        f.setBold(winner)
        item.setFont(f)
        item.setForeground(color)


def refit_candidate_fonts(view) -> None:
    """The fonts of `view`'s rows (a `CandidatesView`) at its current font: an item keeps the font
    it was given, so without this presenter mode's size would stay in the rows after leaving."""
    t = view.table
    mono = monospace_font(view.font())
    for row in range(t.rowCount()):
        for col in range(t.columnCount()):
            item = t.item(row, col)
            if item is not None:
                f = mono if col == 1 else view.font()
                f.setBold(item.font().bold())
                item.setFont(f)


def show_wordpiece_candidates(view, tl, k: int, vocab: list[bytes]) -> None:
    """Fill `view` (a `CandidatesView`) with the WordPiece decision that led to step k."""
    t = view.table
    _set_headers(t, CANDIDATE_HEADERS)
    d = wordpiece_decision(tl, k)
    if d.rank is None:
        t.setRowCount(0)
        view.label.setText("Candidates: train or open a model to replay its merges.")
        return
    step = tl.steps[d.rank]
    what = "Next merge" if d.upcoming else f"Merge {d.rank + 1:,} (step {d.rank + 1:,})"
    view.label.setText(
        f"{what}: {visible_token(vocab[step.pair[0]])} + {visible_token(vocab[step.pair[1]])} → "
        f"{visible_token(step.token)}, score {step.count:,} / ({step.left_count:,} · {step.right_count:,}) "
        f"= {step.score:.3g}" + (f". {d.note}" if d.note else ""))
    t.setRowCount(len(d.candidates))
    for r, c in enumerate(d.candidates):
        a, b = c.pair
        cells = ("★ winner" if c.winner else ("= tie" if c.tied else ""),
                 f"{visible_token(vocab[a])} + {visible_token(vocab[b])}", f"{c.score:.3g}",
                 f"{c.count:,}", f"{c.left_count:,}", f"{c.right_count:,}", c.reason)
        paint_candidate(view, set_cells(t, r, cells, right=(2, 3, 4, 5)), c.winner, c.tied)


def show_wordpiece_trace(view, tokenizer, word: str, step: int) -> None:
    """Fill the provenance view's trace table with the greedy matches of `word` at `step`."""
    t = view.trace_table
    _set_headers(t, TRACE_HEADERS)
    view.trace = wordpiece_trace(tokenizer, word, step) if word and tokenizer is not None else []
    matches = tokenizer.explain(word, step=step) if word and tokenizer is not None else []
    t.setRowCount(len(matches))
    for r, m in enumerate(matches):
        tried = " · ".join(visible_token(x.encode()) for x in m.tried[:12]) + (" …" if len(m.tried) > 12 else "")
        items = set_cells(t, r, (str(m.start), m.token + (f"  ({m.reason})" if m.reason else ""), tried), right=(0,))
        items[0].setData(Qt.ItemDataRole.UserRole, None)  # no merge rank to jump to
    if not word:
        view.trace_label.setText("")
    elif tokenizer is None:
        view.trace_label.setText("Train or open a model first.")
    else:
        final = view.trace[-1].ids if view.trace else ()
        pieces = " ".join(view.token_label(i) for i in final)
        view.trace_label.setText(f"Greedy longest match with the first {step:,} merges: {pieces} "
                                 f"({len(final)} token{'s' if len(final) != 1 else ''})")


def reset_trace_headers(table: QTableWidget) -> None:
    _set_headers(table, ["Rank", "Merge", "Segmentation"])
