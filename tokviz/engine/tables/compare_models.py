"""Item models of a comparison (`tokviz.core.compare.Comparison`): the metrics of each model, the
documents with each model's tokens and premium, and the per-script summary.

Read-only tables; numbers sort as numbers through `SORT_ROLE` (a `QSortFilterProxyModel` with
``setSortRole(SORT_ROLE)`` sorts them). Shares are shown in percent, None as "–". What this leaves
out: measuring (core) and drawing (`tokviz.panels.compare`).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from tokviz.core.compare import METRIC_KEYS, Comparison, Document
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
    "renyi_efficiency_observed": "Rényi efficiency over log(token types seen), tokenization-scorer's normalisation",
    "shannon_efficiency": "Shannon entropy of the token distribution over log(vocabulary size)",
    "shannon_efficiency_observed": "Shannon entropy over log(token types seen), tokenization-scorer's normalisation",
    "type_token_ratio": "Distinct tokens / tokens",
    "avg_token_rank": "Mean frequency rank of a token (1: the text's most frequent token)",
    "strr": "Share of words kept as one token (STRR, Nayeem et al. 2025)",
    "utf8_whole_token_rate": "Share of tokens whose bytes are whole UTF-8 characters",
    "utf8_boundary_crossing_rate": "Share of tokens holding pieces of two characters, one incomplete",
    "utf8_split_char_rate": "Share of multi-byte characters whose bytes two or more tokens share",
    "digit_boundary_f1": "Mean F1 of the token boundaries inside numbers against 1|234|567 grouping (Singh & Strouse 2024)",
    "tokens_per_digit": "Tokens covering numbers / their digits",
    "digit_split_entropy": "Entropy (bits) of how numbers of one length are split, averaged over numbers",
    "identifier_fragmentation": "Mean tokens per snake_case/camelCase identifier (code)",
    "indentation_tokens": "Mean tokens overlapping a line's indentation (code)",
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


def _document_row(d: Document, reference: bool, cells) -> list[tuple[str, object, bool]]:
    """A document's row: number, title, script, characters, then each model's (tokens, premium)."""
    title = undrawn_marked(d.title)  # a script no font draws: code points, not boxes
    row = [(str(d.number), d.number, True), (title + (" (reference)" if reference else ""), d.title, False),
           (d.script, d.script, False), _num("chars", d.end - d.start)]
    for tokens, premium in cells:
        row += [_num("tokens", tokens), _num("premium", premium)]
    return row


def _document_headers(labels) -> list[str]:
    headers = ["#", "title", "script", "chars"]
    for label in short_labels(list(labels)):
        headers += [f"{label} tokens", f"{label} premium"]
    return headers


class DocumentsModel(_Table):
    """One row per document: number, title, script, characters, then each model's tokens and
    premium (tokens over the reference document's).

    While a comparison runs the table fills in: `start_stream` (no rows yet), `add_rows` as a model
    measures documents (new documents appended, the others get that model's cells), `add_result`
    when a model ends (its premiums); `set_comparison` at the end, in place when the table already
    has its shape (the view keeps its scroll position and selection)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._documents: tuple[Document, ...] = ()  # of the run streaming in
        self._reference: int | None = None
        self._cells: list[list[list]] = []  # model -> document -> [tokens, premium]

    def set_comparison(self, c: Comparison | None) -> None:
        self._documents, self._cells = (), []
        if c is None or not c.documents:
            self._set([], [])
            return
        ok = [r for r in c.results if r.metrics is not None]
        headers = _document_headers(r.model for r in ok)
        rows = [_document_row(d, i == c.reference, [(r.documents[i].tokens, r.premiums[i]) for r in ok])
                for i, d in enumerate(c.documents)]
        if headers != self._headers or len(rows) != len(self._rows):
            self._set(headers, rows)
            return
        self._rows = rows
        if rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(headers) - 1))

    def start_stream(self, documents: Sequence[Document], reference: int | None, labels: Sequence[str]) -> None:
        """No rows yet, a tokens and a premium column for each model of `labels`, for `documents`."""
        self._documents, self._reference = tuple(documents), reference
        self._cells = [[[None, None] for _ in documents] for _ in labels]
        self._set(_document_headers(labels), [])

    def add_rows(self, model_index: int, first: int, tokens: Sequence[int]) -> None:
        """Model `model_index`'s token counts of documents ``first, first + 1, ...``."""
        if not 0 <= model_index < len(self._cells):
            return
        cells = self._cells[model_index]
        last = min(first + len(tokens), len(self._documents))
        for i in range(first, last):
            cells[i][0] = tokens[i - first]
        self._refresh(model_index, first, last)

    def add_result(self, model_index: int, result) -> None:
        """A model ended: its premiums (`ModelResult`; one with an error leaves its cells)."""
        if not 0 <= model_index < len(self._cells) or not result.premiums:
            return
        for cell, premium in zip(self._cells[model_index], result.premiums):
            cell[1] = premium
        self._refresh(model_index, 0, len(self._documents))

    def _refresh(self, model_index: int, first: int, last: int) -> None:
        """Rebuild rows ``[first, last)``; the ones not shown yet are appended."""
        shown = len(self._rows)
        for i in range(first, min(last, shown)):
            self._rows[i] = self._stream_row(i)
        if first < min(last, shown):
            col = 4 + 2 * model_index
            self.dataChanged.emit(self.index(first, col), self.index(min(last, shown) - 1, col + 1))
        if last > shown:
            self.beginInsertRows(QModelIndex(), shown, last - 1)
            self._rows.extend(self._stream_row(i) for i in range(shown, last))
            self.endInsertRows()

    def _stream_row(self, i: int) -> list[tuple[str, object, bool]]:
        return _document_row(self._documents[i], i == self._reference, [model[i] for model in self._cells])


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
