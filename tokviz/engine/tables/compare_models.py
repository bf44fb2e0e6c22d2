"""Item models of a comparison (`tokviz.core.compare.Comparison`): the metrics of each model, the
documents with each model's tokens and premium, and the per-script summary.

Read-only tables; numbers sort as numbers through `SORT_ROLE` (a `QSortFilterProxyModel` with
``setSortRole(SORT_ROLE)`` sorts them). Shares are shown in percent, None as "–". What this leaves
out: measuring (core) and drawing (`tokviz.panels.compare`).
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from tokviz.core.compare import METRIC_KEYS, Comparison
from tokviz.core.compare.report import format_figure, script_summary, short_labels
from tokviz.core.display.tokens import undrawn_marked

from .record_model import RIGHT

SORT_ROLE = int(Qt.ItemDataRole.UserRole) + 1
METRIC_TIPS = {
    "tokens": "Tokens the whole text encodes to", "chars": "Characters (code points)", "bytes": "UTF-8 bytes",
    "words": "Whitespace-separated words", "chars_per_token": "Characters per token (higher: more compression)",
    "bytes_per_token": "UTF-8 bytes per token", "fertility": "Tokens per word (Rust et al. 2021)",
    "continued_words": "Share of words split into two or more tokens",
    "vocab_used": "Distinct ids used / vocabulary size", "renyi_efficiency":
    "Rényi entropy (order 2.5) of the token distribution over log(vocabulary size) (Zouhar et al. 2023)",
    "unk_rate": "Share of unknown tokens", "byte_fallback_rate": "Share of <0xNN> byte tokens (byte fallback only)",
}


def figure(key: str, value) -> str:
    """A figure as the tables show it (`tokviz.core.compare.report.format_figure`)."""
    return format_figure(key, value)


class _Table(QAbstractTableModel):
    """Rows of cells (display text, sort value, right-aligned) with horizontal headers."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._headers: list[str] = []
        self._tips: list[str] = []
        self._rows: list[list[tuple[str, object, bool]]] = []

    def _set(self, headers: list[str], rows: list[list[tuple[str, object, bool]]], tips: list[str] = ()) -> None:
        self.beginResetModel()
        self._headers, self._rows, self._tips = headers, rows, list(tips)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._headers):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        if role == Qt.ItemDataRole.ToolTipRole and section < len(self._tips):
            return self._tips[section] or None
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        text, value, right = self._rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return text
        if role == SORT_ROLE:
            return value if value is not None else float("-inf")
        if role == Qt.ItemDataRole.TextAlignmentRole and right:
            return RIGHT
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


def _num(key: str, value) -> tuple[str, object, bool]:
    return figure(key, value), value, True


class MetricsModel(_Table):
    """One row per metric (tooltips say what it measures), one column per model."""

    def set_comparison(self, c: Comparison | None) -> None:
        ok = [r for r in c.results if r.metrics is not None] if c is not None else []
        headers = ["metric", *short_labels([r.model for r in ok])]
        rows = [[(key, key, False), *(_num(key, getattr(r.metrics, key)) for r in ok)] for key in METRIC_KEYS]
        if c is not None and c.documents:
            rows.append([("gini", "gini", False), *(_num("gini", r.gini) for r in ok)])
        self._set(headers, rows)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid() and index.column() == 0:
            key = self._rows[index.row()][0][0]
            return METRIC_TIPS.get(key, "Gini coefficient of the per-document premiums (0: every language costs the same)")
        return super().data(index, role)


class DocumentsModel(_Table):
    """One row per document: number, title, script, characters, then each model's tokens and
    premium (tokens over the reference document's)."""

    def set_comparison(self, c: Comparison | None) -> None:
        if c is None or not c.documents:
            self._set([], [])
            return
        ok = [r for r in c.results if r.metrics is not None]
        headers = ["#", "title", "script", "chars"]
        for label in short_labels([r.model for r in ok]):
            headers += [f"{label} tokens", f"{label} premium"]
        rows = []
        for i, d in enumerate(c.documents):
            mark = " (reference)" if i == c.reference else ""
            title = undrawn_marked(d.title)  # a script no font draws: code points, not boxes
            row = [(str(d.number), d.number, True), (title + mark, d.title, False), (d.script, d.script, False),
                   _num("chars", d.end - d.start)]
            for r in ok:
                row += [_num("tokens", r.documents[i].tokens), _num("premium", r.premiums[i])]
            rows.append(row)
        self._set(headers, rows)


class ScriptsModel(_Table):
    """One row per dominant script: documents, characters, each model's mean premium."""

    def set_comparison(self, c: Comparison | None) -> None:
        if c is None or not c.documents:
            self._set([], [])
            return
        ok = [r for r in c.results if r.metrics is not None]
        labels = short_labels([r.model for r in ok])
        headers = ["script", "documents", "chars", *(f"{label} mean premium" for label in labels)]
        rows = [[(s.script, s.script, False), _num("documents", s.documents), _num("chars", s.chars),
                 *(_num("premium", p) for p in s.mean_premiums)] for s in script_summary(ok, c.documents)]
        self._set(headers, rows)


class VocabTokensModel(_Table):
    """Tokens of a vocabulary comparison: shared, only in A or only in B (`set_tokens`)."""

    def set_tokens(self, tokens, names: tuple[str, str]) -> None:
        from tokviz.core.display.tokens import visible_token

        a, b = names
        headers = ["token", "bytes", f"id in {a}", f"rank in {a}", f"id in {b}", f"rank in {b}"]
        self.tokens = list(tokens)

        def cell(v):
            return ("–" if v is None else f"{v:,}"), v, True

        rows = [[(visible_token(t.data), t.data, False), _num("bytes", len(t.data)), cell(t.id_a), cell(t.rank_a),
                 cell(t.id_b), cell(t.rank_b)] for t in self.tokens]
        self._set(headers, rows)


class HealthModel(_Table):
    """The findings of a vocabulary health check, one row per token (`set_rows`)."""

    def set_rows(self, rows) -> None:
        from tokviz.core.display.tokens import visible_token

        self.rows = list(rows)
        headers = ["id", "token", "category", "rank", "count", "inside", "IoS", "flags"]
        out = []
        for r in self.rows:
            rank = ("–", None, True) if r.rank is None else (f"{r.rank:,}", r.rank, True)
            out.append([_num("id", r.id), (visible_token(r.token), r.token, False), (r.category, r.category, False),
                        rank, _num("count", r.count), _num("inside", r.inside), _num("ios", r.ios),
                        ("; ".join(r.flags), "; ".join(r.flags), False)])
        self._set(headers, out)
