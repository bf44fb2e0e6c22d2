"""`GlitchModel`: the findings of the glitch-token finder as a virtual table.

Columns: id, token (visible), reason. GPT-2 has ~44k tokens unused by a small corpus, so rows
are read from the report on demand. A reason filter ("all", "unreachable", "unused") picks rows.
What this leaves out: running the finder (``pretrained_tasks.find_glitches``) and widgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt

from tokviz.core.display.tokens import hex_bytes, visible_token

from .record_model import RIGHT, RecordModel

if TYPE_CHECKING:
    from tokviz.core.pretrained.glitch_report import GlitchReport, GlitchRow

COLUMNS = ("ID", "Token", "Reason")
ID_ROLE = Qt.ItemDataRole.UserRole + 1


class GlitchModel(RecordModel):
    COLUMNS = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._all: list[GlitchRow] = []
        self._rows: list[GlitchRow] = []
        self._kind = "all"

    def set_report(self, report: GlitchReport | None) -> None:
        self.beginResetModel()
        self._all = list(report.rows) if report is not None else []
        self._rows = self._select(self._kind)
        self.endResetModel()

    def set_kind(self, kind: str) -> None:
        """``"all"``, ``"unreachable"`` or ``"unused"``."""
        self.beginResetModel()
        self._kind = kind
        self._rows = self._select(kind)
        self.endResetModel()

    def _select(self, kind: str) -> list[GlitchRow]:
        if kind == "unused":
            return [r for r in self._all if r.reason == "unused"]
        if kind == "unreachable":
            return [r for r in self._all if r.reason != "unused"]
        return self._all

    def row_of_id(self, token_id: int) -> int | None:
        return next((i for i, r in enumerate(self._rows) if r.id == token_id), None)

    def finding(self, row: int) -> GlitchRow:
        return self._rows[row]

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r, c = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if c == 0:
                return str(r.id)
            if c == 1:
                return visible_token(r.token)
            from tokviz.core.pretrained.glitch_report import REASONS  # there since a report exists

            return REASONS.get(r.reason, r.reason)
        if role == ID_ROLE:
            return r.id
        if role == Qt.ItemDataRole.TextAlignmentRole and c == 0:
            return RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"id {r.id}: {hex_bytes(r.token)}"
            if r.ids:
                tip += f"\nits text encodes to {list(r.ids)}"
            return tip
        return None
