"""`GlitchModel`: the glitch finder's rows as a virtual table, ranked by score as they stream in.

Columns: score, id, token (visible), the score's parts (reach: unreachable/undecodable;
rarity: the merge tree's pieces rarer than their ranks predict; count in the corpus) and the
"why" text. Rows arrive in chunks (`add_rows`); each chunk is merged into the ranking with numpy
(one argsort, a layout change), so 50k rows stream without rebuilding Python lists per row.
A filter ("all", "unreachable", "unused") picks rows. With a model's weights (`set_weights`), five
columns join before "Why" (Magikarp's indicator, the cosine to the unused tokens, both norms, the
combined rank) and the rows are ranked by the combined rank (`tokviz.core.weights.combine`).
What this leaves out: running the finder (`tokviz.engine.glitch_finder`) and widgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt

from tokviz.core.display.tokens import hex_bytes, visible_token
from tokviz.core.glitch.score import why_text

from ..release import GradualRelease
from .record_model import RIGHT, RecordModel

if TYPE_CHECKING:
    from tokviz.core.glitch import GlitchReport, GlitchRow

COLUMNS = ("Score", "ID", "Token", "Reach", "Rarity", "Count", "Why")
COLUMN_TIPS = (
    ("reach + rarity + absorbed − log(1 + count): higher is more likely a token a model never learned "
    "(absorbed: later merges swallow it as soon as it forms; see Why)"),
    "token id",
    "the token (␣ marks a space)",
    ("1.5 when its own text encodes to other tokens (unreachable); 0 otherwise, also when its bytes are not "
    "text on their own (undecodable: listed, but such pieces of characters occur in ordinary text)"),
    "how much rarer the corpus holds its merge tree's pieces than their merge ranks predict",
    "how often it occurs when encoding the corpus",
    "the evidence behind the score",
)
COL_SCORE, COL_ID, COL_TOKEN, COL_REACH, COL_RARITY, COL_COUNT, COL_WHY = range(7)
WEIGHT_COLUMNS = ("Indicator", "Cos unused", "‖out‖", "‖in‖", "Combined")
WEIGHT_TIPS = (
    ("Magikarp's under-training indicator from the model's weights: the input embedding's norm (separate input "
     "and output matrices) or the output row's cosine distance to the known-unused tokens' mean (tied); lower is "
     "more likely never learned"),
    "cosine of the token's output (unembedding) row to the mean row of the tokens known never to occur in training",
    "norm of the token's output (unembedding) row",
    "norm of the token's input embedding row (blank when the model ties the two)",
    ("geometric mean of the token's rank by score and its rank by the indicator: 1 is first on both (rows are "
     "ranked by it)"),
)
ID_ROLE = Qt.ItemDataRole.UserRole + 1


class GlitchModel(RecordModel):
    COLUMNS = COLUMNS
    COLUMN_TIPS = COLUMN_TIPS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._all: list[GlitchRow] = []
        self._scores = np.zeros(0)
        self._reach = np.zeros(0, bool)
        self._unused = np.zeros(0, bool)
        self._ids = np.zeros(0, np.int64)
        self._order = np.zeros(0, np.int64)  # row -> index into _all
        self._kind = "all"
        self.weights = None  # WeightEvidence of the model's weights, when loaded
        self._cols = None  # WeightColumns aligned with _all
        self.COLUMNS, self.COLUMN_TIPS = COLUMNS, COLUMN_TIPS
        self.release = GradualRelease(self)  # old rows are freed a slice per turn of the event loop

    def clear(self) -> None:
        self.beginResetModel()
        self.release.drop(self._all)
        self._all = []
        self._scores, self._reach = np.zeros(0), np.zeros(0, bool)
        self._unused, self._ids = np.zeros(0, bool), np.zeros(0, np.int64)
        self._order = np.zeros(0, np.int64)
        self._cols = None
        self.endResetModel()

    def set_weights(self, evidence) -> None:
        """Add the weights' columns from `evidence` (a `WeightEvidence`) and rank by both; None
        takes them away."""
        self.beginResetModel()
        self.weights = evidence
        if evidence is None:
            self.COLUMNS, self.COLUMN_TIPS = COLUMNS, COLUMN_TIPS
        else:
            self.COLUMNS = COLUMNS[:COL_WHY] + WEIGHT_COLUMNS + COLUMNS[COL_WHY:]
            self.COLUMN_TIPS = COLUMN_TIPS[:COL_WHY] + WEIGHT_TIPS + COLUMN_TIPS[COL_WHY:]
        self._cols = self._weight_columns()
        self._order = self._select(self._kind)
        self.endResetModel()

    def _weight_columns(self):
        if self.weights is None or not len(self._ids):
            return None
        from tokviz.core.weights import WeightColumns

        return WeightColumns.of(self.weights, self._ids, self._scores)

    def weight_values(self, row: int) -> dict | None:
        """The weights' values of the row shown at `row` (`WeightColumns.row`), None without weights."""
        return None if self._cols is None else self._cols.row(int(self._order[row]))

    def set_report(self, report: GlitchReport | None) -> None:
        self.clear()
        if report is not None:
            self.add_rows(report.rows)

    def add_rows(self, rows: list[GlitchRow]) -> None:
        """Merge a chunk of rows into the ranking."""
        if not rows:
            return
        self._all.extend(rows)
        self._scores = np.concatenate([self._scores, [r.score for r in rows]])
        self._reach = np.concatenate([self._reach, [r.fails_round_trip for r in rows]])
        self._unused = np.concatenate([self._unused, [r.count == 0 for r in rows]])
        self._ids = np.concatenate([self._ids, np.fromiter((r.id for r in rows), np.int64, len(rows))])
        self._cols = self._weight_columns()
        self._relayout()

    def _relayout(self) -> None:
        was_empty = len(self._order) == 0
        order = self._select(self._kind)
        if was_empty or len(order) == 0:
            self.beginResetModel()
            self._order = order
            self.endResetModel()
            return
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        old_items = [int(self._order[i.row()]) if i.row() < len(self._order) else -1 for i in old]
        self._order = order
        where = np.empty(len(self._all), np.int64)
        where.fill(-1)
        where[order] = np.arange(len(order))
        for idx, item in zip(old, old_items):
            row = int(where[item]) if item >= 0 else -1
            self.changePersistentIndex(idx, self.index(row, idx.column()) if row >= 0 else QModelIndex())
        self.layoutChanged.emit()

    def set_kind(self, kind: str) -> None:
        """``"all"``, ``"unreachable"`` (unreachable or undecodable) or ``"unused"``."""
        self.beginResetModel()
        self._kind = kind
        self._order = self._select(kind)
        self.endResetModel()

    def _select(self, kind: str) -> np.ndarray:
        if self._cols is not None and len(self._cols.ids) == len(self._ids):
            keys = self._cols.order()  # lowest combined rank first, ties by id
        else:
            keys = np.lexsort((self._ids, -self._scores))  # highest score first, ties by id
        if kind == "unused":
            return keys[self._unused[keys]]
        if kind == "unreachable":
            return keys[self._reach[keys]]
        return keys

    def row_of_id(self, token_id: int) -> int | None:
        hits = np.flatnonzero(self._ids[self._order] == token_id) if len(self._order) else []
        return int(hits[0]) if len(hits) else None

    def finding(self, row: int) -> GlitchRow:
        return self._all[int(self._order[row])]

    def _weight_cells(self, k: int) -> list[str]:
        cols = self._cols

        def cell(a, fmt: str) -> str:
            return "" if a is None else format(float(a[k]), fmt)

        return [cell(cols.indicator, ".3f"), cell(cols.cosine, ".2f"), cell(cols.unembedding_norm, ".3f"),
                cell(cols.embedding_norm, ".3f"), cell(cols.combined, ".1f")]

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._order)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._order):
            return None
        r, c = self.finding(index.row()), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            cells = [f"{r.score:.2f}", str(r.id), visible_token(r.token), f"{r.reach:.1f}", f"{r.rarity:.2f}",
                     f"{r.count:,}", why_text(r)]
            if self._cols is not None:
                cells[COL_WHY:COL_WHY] = self._weight_cells(int(self._order[index.row()]))
            return cells[c] if c < len(cells) else None
        if role == ID_ROLE:
            return r.id
        if role == Qt.ItemDataRole.TextAlignmentRole and c != COL_TOKEN and c < len(self.COLUMNS) - 1:
            return RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"id {r.id}: {hex_bytes(r.token)}\n{why_text(r)}"
            if r.ids:
                tip += f"\nits text encodes to {list(r.ids)}"
            return tip
        return None
