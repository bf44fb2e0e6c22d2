"""`MergeModel`: the merges of the current timeline as a virtual table, filled live.

One row per merge (row r = merge r + 1 = the merge that leads to step r + 1: merges are numbered as
steps are, from 1). Columns: merge number,
left token, right token, new token, new id, pair count when it won, corpus length after the merge;
WordPiece adds its score, a timeline whose steps differ in kind (`step_kinds`) the step's kind
(`step_kind`, its `step_note` as the tooltip).
Cells are computed on demand from the timeline (no per-row objects), so 100k rows cost only the
token byte list. Rows are appended with `beginInsertRows` as `StepModel.steps_added` reports them,
or, with `hold_live_rows` while a run is followed live, when the view asks (`catch_up`): every
insert repaints the whole visible table, so the timeline inserts once per repaint, not per batch.

What this leaves out: selection and scrolling (the timeline panel keeps row k - 1 selected).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Slot

from tokviz.core import Timeline
from tokviz.core.display.tokens import visible_token
from tokviz.core.io.safe_files import write_text_atomic

COLUMNS = ("Rank", "Left", "Right", "New token", "Id", "Count", "Length after")
COL_RANK, COL_LEFT, COL_RIGHT, COL_TOKEN, COL_ID, COL_COUNT, COL_LENGTH = range(len(COLUMNS))
COLUMN_TIPS = (
    "Rank k: merge k (1 = the first merge), the one that leads to step k",
    "Left token of the merged pair",
    "Right token of the merged pair",
    "The new token (left + right); ␣ space, ↵ newline, \\xNN a partial UTF-8 byte",
    "Id of the new token",
    "How often the pair occurred in the corpus when it won",
    "Corpus length in tokens after this merge",
)
ID_ROLE = Qt.ItemDataRole.UserRole + 1  # id of the new token (int)
COL_SCORE = len(COLUMNS)  # WordPiece only: an extra column after the others
SCORE_TIP = "WordPiece score count(ab) / (count(a) · count(b)) when the pair won"
KIND_TIP = "What kind of step this is (hover a cell for more)"
TOKEN_COLUMNS = (COL_LEFT, COL_RIGHT, COL_TOKEN)
_RIGHT_ALIGN = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
# the roles `data` answers: a view asks about seven per cell on every paint, so the others are
# turned away before any other work (a batch of training steps repaints every visible row)
_ROLES = frozenset(int(r) for r in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
                                    Qt.ItemDataRole.TextAlignmentRole, ID_ROLE))


class MergeModel(QAbstractTableModel):
    """Merge table of the shared timeline; call `attach(step_model)`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timeline: Timeline | None = None
        self._n = 0
        self._vocab: list[bytes] = []  # bytes of base + merge tokens, index = id
        self._shown: dict[int, str] = {}  # id -> visible text (cache)
        self._step_model = None
        self._score_col: int | None = None  # the score and kind columns, fixed per timeline
        self._kind_col: int | None = None
        self.hold_live_rows = False  # live batches wait for `catch_up` (the run's end never waits)

    def attach(self, step_model) -> None:
        self._step_model = step_model
        step_model.timeline_changed.connect(self._on_step_model_timeline_changed)
        step_model.steps_added.connect(self._on_step_model_steps_added)
        step_model.finished_changed.connect(self.catch_up)
        step_model.step_changed.connect(self._on_step_model_step_changed)
        self._on_step_model_timeline_changed()

    # -- reading ----------------------------------------------------------------------------

    @property
    def timeline(self) -> Timeline | None:
        return self._timeline

    def token_text(self, token_id: int) -> str:
        text = self._shown.get(token_id)
        if text is None:
            ok = 0 <= token_id < len(self._vocab)
            text = self._shown[token_id] = visible_token(self._vocab[token_id]) if ok else "?"
        return text

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._n

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS) + (self._score_col is not None) + (self._kind_col is not None)

    def _has_score(self) -> bool:
        return self._timeline is not None and self._timeline.has_scores

    def _has_kind(self) -> bool:
        return self._timeline is not None and self._timeline.step_kinds

    @property
    def kind_column(self) -> int | None:
        """The column of the steps' kinds, or None when the timeline's steps are all alike."""
        return self._kind_col

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and section == COL_SCORE and self._has_score():
            return {Qt.ItemDataRole.DisplayRole: "Score", Qt.ItemDataRole.ToolTipRole: SCORE_TIP}.get(role)
        if orientation == Qt.Orientation.Horizontal and section == self.kind_column:
            return {Qt.ItemDataRole.DisplayRole: self._timeline.step_kind_title,
                    Qt.ItemDataRole.ToolTipRole: KIND_TIP}.get(role)
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMN_TIPS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if role not in _ROLES or self._timeline is None or not index.isValid():
            return None
        r, c = index.row(), index.column()
        if not 0 <= r < self._n:
            return None
        step = self._timeline.steps[r]
        if c == self._score_col and role in (Qt.ItemDataRole.DisplayRole,
                                                               Qt.ItemDataRole.TextAlignmentRole):
            return f"{step.score:.4g}" if role == Qt.ItemDataRole.DisplayRole else _RIGHT_ALIGN
        if c == self._kind_col:
            if role == Qt.ItemDataRole.DisplayRole:
                return self._timeline.step_kind(r)
            return self._timeline.step_note(r) if role == Qt.ItemDataRole.ToolTipRole else None
        if not self._timeline.has_counts and role in (Qt.ItemDataRole.DisplayRole,
                                                                 Qt.ItemDataRole.ToolTipRole, ID_ROLE):
            return self._loaded_cell(step, c, role)  # pair may be None, counts unknown
        if role == Qt.ItemDataRole.DisplayRole:
            if c == COL_RANK:
                return f"{r + 1:,}"  # merge k = step k
            if c == COL_LEFT:
                return self.token_text(step.pair[0])
            if c == COL_RIGHT:
                return self.token_text(step.pair[1])
            if c == COL_TOKEN:
                return self.token_text(step.id)
            if c == COL_ID:
                return str(step.id)
            if c == COL_COUNT:
                return f"{step.count:,}"
            if c == COL_LENGTH:
                return f"{step.length:,}"
            return None
        if role == ID_ROLE:
            return step.id
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return None if c in TOKEN_COLUMNS else _RIGHT_ALIGN
        if role == Qt.ItemDataRole.ToolTipRole and c in TOKEN_COLUMNS:
            i = step.pair[0] if c == COL_LEFT else step.pair[1] if c == COL_RIGHT else step.id
            return f"id {i}: {self._vocab[i].hex(' ').upper()}"
        return None

    def _loaded_cell(self, step, c: int, role: int):
        """A cell of a loaded tokenizer's merge (`LoadedMerge`): no count, no corpus length."""
        if role == ID_ROLE:
            return step.id
        pair = step.pair
        if role == Qt.ItemDataRole.ToolTipRole:
            if c in (COL_COUNT, COL_LENGTH):
                return "Unknown: this tokenizer was loaded, not trained here"
            if c in TOKEN_COLUMNS and (c == COL_TOKEN or pair is not None):
                i = step.id if c == COL_TOKEN else pair[0] if c == COL_LEFT else pair[1]
                return f"id {i}: {self._vocab[i].hex(' ').upper()}"
            return "No single merge forms this token" if c in TOKEN_COLUMNS else None
        if c == COL_RANK:
            return f"{step.index + 1:,}"  # merge k = step k
        if c in (COL_LEFT, COL_RIGHT):
            return "—" if pair is None else self.token_text(pair[0] if c == COL_LEFT else pair[1])
        if c == COL_TOKEN:
            return self.token_text(step.id)
        if c == COL_ID:
            return str(step.id)
        return "—"

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return _FLAGS

    # -- export -----------------------------------------------------------------------------

    def write_csv(self, path: str | Path) -> int:
        """Write every merge as CSV (raw token text, not the visible marks) atomically; returns
        rows written."""
        tl = self._timeline
        f = io.StringIO(newline="")
        w = csv.writer(f)
        kinds = tl is not None and tl.has_counts and tl.step_kinds
        w.writerow(["rank", "left_id", "right_id", "left", "right", "new_id", "new_token",
                    "new_token_hex", "count", "length_after"] + (["kind"] if kinds else []))
        v, n = self._vocab, 0 if tl is None else self._n
        if tl is not None and not tl.has_counts:  # a loaded tokenizer: no counts or corpus lengths
            for s in tl.steps[:n]:
                a, b = s.pair if s.pair is not None else ("", "")
                w.writerow([s.index, a, b, "" if a == "" else v[a].decode("utf-8", "replace"),
                            "" if b == "" else v[b].decode("utf-8", "replace"), s.id,
                            s.token.decode("utf-8", "replace"), s.token.hex(), "", ""])
        elif tl is not None:
            for r, s in enumerate(tl.steps[:n]):
                a, b = s.pair
                w.writerow([s.rank, a, b, v[a].decode("utf-8", "replace"), v[b].decode("utf-8", "replace"),
                            s.id, s.token.decode("utf-8", "replace"), s.token.hex(), s.count, s.length]
                           + ([tl.step_kind(r)] if kinds else []))
        write_text_atomic(path, f.getvalue())  # TokvizError when it cannot be written
        return n

    # -- following the step model -----------------------------------------------------------

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        self.beginResetModel()
        tl = self._step_model.timeline if self._step_model is not None else None
        self._timeline = tl
        self._score_col = COL_SCORE if self._has_score() else None
        self._kind_col = len(COLUMNS) + self._has_score() if self._has_kind() else None
        self._shown.clear()
        if tl is None:
            self._vocab, self._n = [], 0
        elif tl.lists_merges:
            self._vocab, self._n = tl.merge_vocab(), tl.n_steps
        else:  # Unigram rounds prune pieces: the timeline panel shows them instead
            self._vocab, self._n = [], 0
        self.endResetModel()

    @Slot(int, int)
    def _on_step_model_steps_added(self, first: int, count: int) -> None:
        tl = self._timeline
        if tl is None or count <= 0 or not tl.lists_merges:
            return
        if first < self._n or tl.n_steps <= self._n:  # out of step: start over
            self._on_step_model_timeline_changed()
            return
        sm = self._step_model
        if not (self.hold_live_rows and sm.follows_latest and not sm.is_finished):
            self.catch_up()

    @Slot(int)
    def _on_step_model_step_changed(self, _step: int) -> None:
        if not self._step_model.follows_latest:  # a step picked by hand: its row must be there
            self.catch_up()

    @Slot()
    def catch_up(self) -> None:
        """Insert the rows of every merge the timeline has that the table does not show yet."""
        tl = self._timeline
        if tl is None or not tl.lists_merges:
            return
        new_n = tl.n_steps
        if new_n <= self._n:
            return
        self.beginInsertRows(QModelIndex(), self._n, new_n - 1)
        self._vocab.extend(s.token for s in tl.steps[self._n:new_n])
        self._n = new_n
        self.endInsertRows()
