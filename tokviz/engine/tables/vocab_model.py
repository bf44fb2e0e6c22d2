"""`VocabModel`: the vocabulary of the current timeline as a virtual, sortable, filterable table.

One row per token id: base units, then one row per merge, then ``[UNK]`` (character units) and the
special tokens (their ids move up as merges arrive). Columns: id, token (invisible characters made
visible), bytes in hex, length in bytes, merge rank, pair count when merged, and the flags of added and
special tokens (``special``, ``lstrip``, ``rstrip``, ``normalized``, ``single_word``).

Sorting and filtering happen inside the model (a `QSortFilterProxyModel` would call back into
Python millions of times for 100k rows). Rows are addressed by a stable entry key: the id for base
and merge tokens, ``EXTRA_KEY + i`` for the i-th extra token, so a row keeps its identity while
ids of extras shift. While training fills the table, new rows are appended (default order) or
inserted at their sorted place.

What this leaves out: colours and fonts (the panel reads `KIND_ROLE` / `PARTIAL_ROLE`).
"""

from __future__ import annotations

import weakref
from bisect import bisect_right
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt, Signal, Slot

from tokviz.core import UNK_TOKEN, MergeStep, Timeline
from tokviz.core.display.tokens import hex_bytes, is_partial_utf8, visible_token
from tokviz.core.special_tokens import AddedToken, added_token_map

from .record_model import RIGHT as _RIGHT
from .record_model import RecordModel

COLUMNS = ("ID", "Token", "Bytes (hex)", "Length", "Merge", "Pair count", "Flags")
COL_ID, COL_TOKEN, COL_BYTES, COL_LENGTH, COL_RANK, COL_COUNT, COL_FLAGS = range(len(COLUMNS))
COLUMN_TIPS = (
    "Token id",
    "The token's text; ␣ space, ↵ newline, ⇥ tab, \\xNN a byte that is not a whole character",
    "The token's bytes in hexadecimal",
    "Length of the token in bytes",
    "Merge k created the token, on the way to step k (1 = the first); empty for base units and special tokens",
    "How often the merged pair occurred in the corpus when it won",
    ("Added and special tokens: special (a control token), lstrip / rstrip (swallows the whitespace on its "
     "left / right), normalized (matched in normalized text), single_word (only as a whole word)"),
)
KIND_BASE, KIND_MERGE, KIND_UNK, KIND_SPECIAL = "base", "merge", "unk", "special"

TOKEN_BYTES_ROLE = Qt.ItemDataRole.UserRole + 1  # bytes of the token
KIND_ROLE = Qt.ItemDataRole.UserRole + 2  # one of the KIND_* strings
PARTIAL_ROLE = Qt.ItemDataRole.UserRole + 3  # True: bytes are not whole UTF-8 characters
ID_ROLE = Qt.ItemDataRole.UserRole + 4  # token id (int)

EXTRA_KEY = 1 << 40  # entry keys of extra tokens start here (above any real id)
BULK_INSERT = 32  # more new rows than this in a sorted view: one layout change, not many inserts
_NUMERIC = (COL_ID, COL_LENGTH, COL_RANK, COL_COUNT)
UNIGRAM_COLUMNS = {  # what the rank and count columns hold for a Unigram timeline
    COL_RANK: ("Pruned in round", "The round that pruned the piece; empty: in the final vocabulary"),
    COL_COUNT: ("Log-prob", "Natural log-probability of the piece (when pruned, at that time)"),
}


# what `set_timeline` derives from a timeline (kept for a finished one; `add_steps` extends a live one)
_ENTRY_FIELDS = ("_tokens", "_display", "_ranks", "_counts", "_extras", "_base_size", "_special_keys", "_loaded",
                 "_added", "_scored", "_unigram")


class VocabModel(RecordModel):
    """Vocabulary table; call `attach(step_model)` to follow the shared timeline."""

    COLUMNS = COLUMNS

    counts_changed = Signal(int, int)  # rows shown, tokens in total

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # base + merge tokens, index = id
        self._tokens: list[bytes] = []
        self._display: list[str | None] = []  # visible texts, None until first used
        self._ranks: list[int] = []  # -1 for base units
        self._counts: list[int] = []  # -1 for base units
        self._base_size = 0
        # [UNK] and special tokens, after the merges
        self._extras: list[tuple[bytes, str]] = []
        # view order: None = by id ascending, unfiltered; else ascending (key, entry) pairs
        self._asc: list[tuple[object, int]] | None = None
        self._sort_column = COL_ID
        self._sort_order = Qt.SortOrder.AscendingOrder
        self._filter = ""
        self._step_model = None
        self._query_ids: np.ndarray | None = None  # vocabulary browser: ids shown, in order
        self._special_keys: frozenset[int] = frozenset()  # loaded tokenizers: special token ids
        self._added: dict[int, AddedToken] = {}  # loaded tokenizers: added tokens with their flags
        self._loaded = False  # True for a loaded (pretrained) tokenizer
        self._unigram = False  # rank column = round that pruned it, count column = log-prob
        self._scored = False  # a loaded Unigram model: count column = the piece's score
        self._kept: dict[int, tuple] = {}  # id(timeline) -> (weak ref, steps, `_ENTRY_FIELDS` values)

    # -- wiring -----------------------------------------------------------------------------

    def attach(self, step_model) -> None:
        """Follow a `StepModel`: reset on a new timeline, append rows as merges arrive."""
        self._step_model = step_model
        step_model.timeline_changed.connect(self._on_step_model_timeline_changed)
        step_model.steps_added.connect(self._on_step_model_steps_added)
        self._on_step_model_timeline_changed()

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        self.set_timeline(self._step_model.timeline)

    @Slot(int, int)
    def _on_step_model_steps_added(self, first: int, count: int) -> None:
        timeline = self._step_model.timeline
        if timeline.renumbers_vocab:  # e.g. a Unigram round: start over
            self.set_timeline(timeline)
            return
        self.add_steps(timeline.steps[first : first + count])

    # -- filling ----------------------------------------------------------------------------

    def set_timeline(self, timeline: Timeline | None) -> None:
        """Show every token of `timeline` (or nothing). The entries of the last two finished
        timelines are kept: switching back and forth between two models costs a reset, not a
        rebuild (7-20 ms on the GUI thread for a 50k vocabulary)."""
        self.beginResetModel()
        self._query_ids = None
        kept = self._kept.get(id(timeline))
        if kept is not None and kept[0]() is timeline and kept[1] == timeline.n_steps:
            for name, value in zip(_ENTRY_FIELDS, kept[2], strict=True):
                setattr(self, name, value)
        else:
            self._fill(timeline)
            if timeline is not None and getattr(timeline, "finished", True):  # kept with the previous one
                self._kept = {k: v for k, v in list(self._kept.items())[-1:] if k != id(timeline)}
                self._kept[id(timeline)] = (weakref.ref(timeline), timeline.n_steps,
                                            tuple(getattr(self, name) for name in _ENTRY_FIELDS))
        self._asc = self._ordered()
        self.endResetModel()
        self._emit_counts()

    def _fill(self, timeline: Timeline | None) -> None:
        self._tokens, self._display, self._ranks, self._counts, self._extras = [], [], [], [], []
        self._base_size = 0
        self._special_keys, self._loaded, self._added = frozenset(), False, {}
        self._scored = False
        self._unigram = timeline is not None and timeline.renumbers_vocab
        if timeline is not None and not timeline.has_counts:  # a loaded tokenizer
            self._set_loaded(timeline)
        elif timeline is not None and not timeline.replays_merges:  # [UNK] and specials come first
            self._set_pieces(timeline)
        elif timeline is not None:
            base = timeline.base.token_bytes()
            self._base_size = len(base)
            self._append_entries(base, [-1] * len(base), [-1] * len(base))
            steps = timeline.steps
            self._append_entries([s.token for s in steps], [s.rank for s in steps], [s.count for s in steps])
            if timeline.base.units == "chars":
                self._extras.append((UNK_TOKEN.encode(), KIND_UNK))
            self._extras.extend((s.encode("utf-8"), KIND_SPECIAL) for s in timeline.settings.special_tokens)

    def _set_loaded(self, timeline) -> None:
        """Every id of a loaded tokenizer; texts are made visible when first shown (200k rows)."""
        self._tokens = timeline.token_bytes()
        n = len(self._tokens)
        self._display = [None] * n  # type: ignore[list-item]
        ranks = np.full(n, -1, dtype=np.int64)
        ids = timeline.merge_ids()
        ranks[np.asarray(ids, dtype=np.int64)[::-1]] = np.arange(len(ids))[::-1]  # first merge forming it
        self._ranks = ranks.tolist()
        scores = None
        if timeline.tokenizer().lattice_view() is not None:  # a Unigram model: its pieces' log-probabilities
            from tokviz.core.explain.unigram import piece_scores  # (27 ms of imports a BPE switch never needs)

            scores = piece_scores(timeline.tokenizer())
        self._counts = scores if scores is not None else [-1] * n
        self._scored = scores is not None
        self._special_keys = frozenset(timeline.special_ids.values()) | frozenset(
            timeline.tokenizer().control_ids)
        self._added = added_token_map(timeline.tokenizer())
        self._loaded = True

    def _set_pieces(self, timeline) -> None:
        """WordPiece / Unigram: [UNK] and the specials first, then the pieces."""
        n_special = timeline.n_special
        self._special_keys = frozenset(range(n_special))
        if timeline.lists_merges:  # WordPiece; Unigram pieces have no merge rank
            self._base_size = n_special + timeline.base_size
            fixed = self._base_size
            steps = timeline.steps
            self._append_entries(timeline.token_bytes()[:fixed], [-1] * fixed, [-1] * fixed)
            self._append_entries([s.token for s in steps], [s.rank for s in steps], [s.count for s in steps])
            return
        from tokviz.core.unigram.timeline import SCORE_SCALE

        rounds_of, scores = timeline.pruning()  # the round that pruned each piece (-1: kept), its log-prob
        ranks, logp = [-1] * n_special + rounds_of, [-1.0] * n_special + [s / SCORE_SCALE for s in scores]
        self._base_size = len(ranks)  # kept and pruned pieces alike
        self._append_entries(timeline.token_bytes(), ranks, logp)

    def _append_entries(self, tokens: Sequence[bytes], ranks: Sequence[int], counts: Sequence[int]) -> None:
        self._tokens.extend(tokens)
        self._display.extend([None] * len(tokens))  # made visible on first use (`_text`)
        self._ranks.extend(ranks)
        self._counts.extend(counts)

    def add_steps(self, steps: Sequence[MergeStep]) -> None:
        """Append the tokens of new merges (in rank order, following the existing ones)."""
        if not steps:
            return
        first = len(self._tokens)
        new_keys = list(range(first, first + len(steps)))
        if self._query_ids is not None:  # a browser query shows fixed rows until re-run
            self._append_entries([s.token for s in steps], [s.rank for s in steps], [s.count for s in steps])
            self._emit_counts()
            return
        if self._asc is None:
            self.beginInsertRows(QModelIndex(), first, first + len(steps) - 1)
            self._append_entries([s.token for s in steps], [s.rank for s in steps], [s.count for s in steps])
            self.endInsertRows()
        else:
            self._append_entries([s.token for s in steps], [s.rank for s in steps], [s.count for s in steps])
            self._insert_sorted([k for k in new_keys if self._matches(k)])
        if self._extras:  # their ids moved up
            n = self.rowCount()
            self.dataChanged.emit(self.index(0, COL_ID), self.index(n - 1, COL_ID))
        self._emit_counts()

    def _insert_sorted(self, keys: list[int]) -> None:
        assert self._asc is not None
        if not keys:
            return
        pairs = [(self._sort_key(k), k) for k in keys]
        if len(pairs) > BULK_INSERT:
            self._relayout(sorted(self._asc + pairs))
            return
        descending = self._sort_order == Qt.SortOrder.DescendingOrder
        for pair in sorted(pairs):
            pos = bisect_right(self._asc, pair)
            row = len(self._asc) - pos if descending else pos
            self.beginInsertRows(QModelIndex(), row, row)
            self._asc.insert(pos, pair)
            self.endInsertRows()

    # -- entries ----------------------------------------------------------------------------

    @property
    def n_tokens(self) -> int:
        return len(self._tokens) + len(self._extras)

    def _all_keys(self) -> list[int]:
        return list(range(len(self._tokens))) + [EXTRA_KEY + i for i in range(len(self._extras))]

    def _key_at(self, row: int) -> int:
        if self._query_ids is not None:  # a vocabulary browser query
            i = int(self._query_ids[row])
            n = len(self._tokens)
            return i if i < n else EXTRA_KEY + i - n
        if self._asc is None:
            n = len(self._tokens)
            return row if row < n else EXTRA_KEY + row - n
        if self._sort_order == Qt.SortOrder.DescendingOrder:
            return self._asc[len(self._asc) - 1 - row][1]
        return self._asc[row][1]

    def _id(self, key: int) -> int:
        return key if key < EXTRA_KEY else len(self._tokens) + key - EXTRA_KEY

    def _bytes(self, key: int) -> bytes:
        return self._tokens[key] if key < EXTRA_KEY else self._extras[key - EXTRA_KEY][0]

    def _text(self, key: int) -> str:
        if key >= EXTRA_KEY:
            return self._extras[key - EXTRA_KEY][0].decode()
        text = self._display[key]
        if text is None:  # made visible on first use
            text = self._display[key] = visible_token(self._tokens[key])
        return text

    def _kind(self, key: int) -> str:
        if key >= EXTRA_KEY:
            return self._extras[key - EXTRA_KEY][1]
        if self._special_keys and key in self._special_keys:
            return KIND_SPECIAL
        if self._loaded:  # a loaded tokenizer: base = no merge forms it
            return KIND_BASE if self._ranks[key] < 0 else KIND_MERGE
        return KIND_BASE if key < self._base_size else KIND_MERGE

    def _rank(self, key: int) -> int:
        return self._ranks[key] if key < EXTRA_KEY else -1

    def _count(self, key: int) -> int:
        return self._counts[key] if key < EXTRA_KEY else -1

    def token_id(self, row: int) -> int:
        """Id of the token shown in `row`."""
        return self._id(self._key_at(row))

    def row_of_id(self, token_id: int) -> int | None:
        """Row showing `token_id`, or None if filtered out or unknown."""
        n = len(self._tokens)
        key = token_id if token_id < n else EXTRA_KEY + token_id - n
        if not 0 <= token_id < self.n_tokens:
            return None
        if self._query_ids is not None:  # a vocabulary browser query
            hit = np.flatnonzero(self._query_ids == token_id)
            return int(hit[0]) if hit.size else None
        if self._asc is None:
            return token_id
        for row in range(self.rowCount()):
            if self._key_at(row) == key:
                return row
        return None

    # -- sorting and filtering --------------------------------------------------------------

    def _sort_key(self, key: int) -> object:
        c = self._sort_column
        if c == COL_TOKEN:
            return self._text(key)
        if c == COL_BYTES:
            return self._bytes(key)
        if c == COL_LENGTH:
            return len(self._bytes(key))
        if c == COL_RANK:
            return self._rank(key) if key < EXTRA_KEY else EXTRA_KEY
        if c == COL_COUNT:
            return self._count(key)
        if c == COL_FLAGS:  # flagged tokens first, then by id
            return (not self.token_flags(key), key)
        return key

    def _matches(self, key: int) -> bool:
        f = self._filter
        if not f:
            return True
        if f.isdigit() and self._id(key) == int(f):
            return True
        fold = f.casefold()
        if fold in self._text(key).casefold():
            return True
        return fold in self._bytes(key).decode("utf-8", "replace").casefold()

    def _ordered(self) -> list[tuple[object, int]] | None:
        """Ascending (sort key, entry) pairs of every entry shown, or None for the plain id order."""
        default = self._sort_column == COL_ID and self._sort_order == Qt.SortOrder.AscendingOrder
        if default and not self._filter:
            return None
        keys = self._all_keys()
        keys = [k for k in keys if self._matches(k)] if self._filter else keys
        return sorted((self._sort_key(k), k) for k in keys)

    def _relayout(self, asc: list[tuple[object, int]] | None) -> None:
        """Switch to a new row order, keeping selections and the current row on their tokens."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        old_keys = [self._key_at(i.row()) for i in old]
        self._asc = asc
        if old:
            rows = {self._key_at(r): r for r in range(self.rowCount())}
            new = []
            for index, key in zip(old, old_keys):
                row = rows.get(key)
                new.append(QModelIndex() if row is None else self.index(row, index.column()))
            self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(COLUMNS):
            return
        self._sort_column, self._sort_order = column, Qt.SortOrder(order)
        self._relayout(self._ordered())

    def set_filter(self, text: str) -> None:
        """Show only tokens whose text contains `text` (case-insensitive) or whose id is `text`."""
        if text == self._filter:
            return
        self.beginResetModel()
        self._filter = text
        self._asc = self._ordered()
        self.endResetModel()
        self._emit_counts()

    def set_rows(self, ids: np.ndarray | None) -> None:
        """Vocabulary browser: show exactly these ids in this order; None: every token."""
        if ids is None and self._query_ids is None:
            return
        self.beginResetModel()
        self._query_ids = None if ids is None else np.asarray(ids, dtype=np.int64)
        self.endResetModel()
        self._emit_counts()

    @property
    def is_query(self) -> bool:
        return self._query_ids is not None

    @property
    def filter_text(self) -> str:
        return self._filter

    @property
    def sort_column(self) -> int:
        return self._sort_column

    def _emit_counts(self) -> None:
        self.counts_changed.emit(self.rowCount(), self.n_tokens)

    # -- Qt model interface -----------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            return 0
        if self._query_ids is not None:
            return len(self._query_ids)
        return self.n_tokens if self._asc is None else len(self._asc)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if self._unigram and section in UNIGRAM_COLUMNS and role in (Qt.ItemDataRole.DisplayRole,
                                                                      Qt.ItemDataRole.ToolTipRole):
            return UNIGRAM_COLUMNS[section][0 if role == Qt.ItemDataRole.DisplayRole else 1]
        if self._scored and section == COL_COUNT and role in (Qt.ItemDataRole.DisplayRole,
                                                              Qt.ItemDataRole.ToolTipRole):
            return "Score" if role == Qt.ItemDataRole.DisplayRole else "The piece's score (its log-probability)"
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMN_TIPS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if section in _NUMERIC else None
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < self.rowCount() and 0 <= col < len(COLUMNS)):
            return None
        key = self._key_at(row)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display_value(key, col)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if col in _NUMERIC else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(key)
        if role == TOKEN_BYTES_ROLE:
            return self._bytes(key)
        if role == KIND_ROLE:
            return self._kind(key)
        if role == PARTIAL_ROLE:
            return col == COL_TOKEN and key < EXTRA_KEY and is_partial_utf8(self._tokens[key])
        if role == ID_ROLE:
            return self._id(key)
        return None

    def token_flags(self, key: int) -> tuple[str, ...]:
        """Flags of the token at entry `key`: an added token's own, ``special`` for the special
        tokens of other tokenizers, none for the rest."""
        added = self._added.get(key) if key < EXTRA_KEY else None
        if added is not None:
            return added.flags
        return ("special",) if self._kind(key) == KIND_SPECIAL else ()

    def _display_value(self, key: int, col: int) -> str:
        if col == COL_ID:
            return str(self._id(key))
        if col == COL_TOKEN:
            return self._text(key)
        if col == COL_BYTES:
            return hex_bytes(self._bytes(key))
        if col == COL_LENGTH:
            return str(len(self._bytes(key)))
        if col == COL_FLAGS:
            return ", ".join(self.token_flags(key))
        if self._unigram and col in UNIGRAM_COLUMNS:  # pruned in round r; log-probability
            v = self._rank(key) if col == COL_RANK else self._count(key)
            return "" if v == -1 else (str(v) if col == COL_RANK else f"{v:.3f}")
        if col == COL_RANK:
            rank = self._rank(key)
            return str(rank + 1) if rank >= 0 else ""  # merge k = step k
        count = self._count(key)
        if self._scored:
            return f"{count:.4f}"
        return f"{count:,}" if count >= 0 else ""

    def _tooltip(self, key: int) -> str:
        kind = self._kind(key)
        data = self._bytes(key)
        what = {
            KIND_BASE: "base unit",
            KIND_MERGE: f"merge {self._rank(key)}",
            KIND_UNK: "unknown-character token",
            KIND_SPECIAL: "special token (never merged)",
        }[kind]
        added = self._added.get(key) if key < EXTRA_KEY else None
        if added is not None:
            what = added.describe()
        text = data.decode("utf-8", "replace")
        return f"id {self._id(key)} · {what}\n{text!r}\n{len(data)} bytes: {hex_bytes(data)}"
