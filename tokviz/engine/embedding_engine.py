"""Token embeddings in the background: tokenizing the training corpus, training a small
next-token model (`EmbeddingTrainingWorker` / `EmbeddingEngine`) and the similarity matrices the
embedding panel draws.

`tokenize_corpus` (run on a `TaskEngine`) encodes a sample of the corpus and the current text
with the current timeline's tokenizer at the current step: training sequences, token counts,
visible token labels. `EmbeddingEngine.start(corpus, settings)` trains
`tokviz.core.embeddings.EmbedTrainer` on a worker thread: it emits ``prepared(info)`` once,
then ``progressed(steps, table)`` at most every 50 ms (`table` is a snapshot of the embeddings at
most every `SNAPSHOT_SECONDS`, else None), and ends with exactly one of ``finished(table)``,
``cancelled()`` or ``failed(message)``. Cancel is immediate for the GUI (newest run wins).

What this leaves out: the maths (``tokviz.core.embeddings``) and drawing (the panel).
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal, Slot

from tokviz.core import Cancelled, Timeline
from tokviz.core.embeddings import (
    EmbeddingTable,
    EmbedStep,
    EmbedTrainer,
    EmbedTrainSettings,
    cosine_similarity,
    reorder_for_similarity,
)

from .display import visible_token
from .workers import BATCH_SECONDS, BackgroundEngine, BackgroundWorker, background_mode

MAX_CORPUS_CHARS = 400_000  # characters of the corpus used for training embeddings
MAX_TEXT_TOKENS = 512  # tokens of the current text kept (heatmap rows, positional row labels)
SNAPSHOT_SECONDS = 0.25  # how often the live heatmap gets a new table while training
_PARAGRAPHS = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class TokenizedCorpus:
    """The corpus as the current tokenizer sees it."""

    step: int  # merges used
    n_vocab: int
    labels: tuple[str, ...]  # visible form of every id
    sequences: list[np.ndarray] = field(repr=False)  # one int64 array per paragraph
    counts: np.ndarray = field(repr=False)  # occurrences of every id, (n_vocab,)
    text_ids: tuple[int, ...] = ()  # the current text's first tokens
    chars: int = 0  # corpus characters used
    tokenizer: object = field(default=None, repr=False, compare=False)  # for `encode_current_text`

    @property
    def n_tokens(self) -> int:
        return int(self.counts.sum())

    def frequent_ids(self, n: int) -> list[int]:
        """The `n` most frequent ids (ties: smaller id first)."""
        present = np.flatnonzero(self.counts)
        order = np.lexsort((present, -self.counts[present]))[:n]
        return [int(i) for i in present[order]]

    def text_token_ids(self, n: int) -> list[int]:
        """Distinct ids of the current text in order of first occurrence, at most `n`."""
        return list(dict.fromkeys(self.text_ids))[:n]


def tokenize_corpus(timeline: Timeline, step: int, corpus_text: str, current_text: str, *,
                    max_chars: int = MAX_CORPUS_CHARS, should_stop=lambda: False, progress=lambda *a: None
                    ) -> TokenizedCorpus:
    """Encode (a sample of) the corpus paragraph by paragraph, and the current text.

    `timeline` must not change meanwhile (pass a copy of a growing one).
    """
    tok = timeline.tokenizer()
    text = corpus_text[:max_chars]
    paragraphs = [p for p in _PARAGRAPHS.split(text) if p.strip()]
    seqs: list[np.ndarray] = []
    n_vocab = tok.n_vocab
    counts = np.zeros(n_vocab, dtype=np.int64)
    for i, para in enumerate(paragraphs):
        if i % 16 == 0:
            if should_stop():
                raise Cancelled()
            progress("Tokenizing the corpus…", i / max(1, len(paragraphs)))
        ids = np.asarray(tok.encode_ids(para, step=step), dtype=np.int64)
        if ids.size:
            seqs.append(ids)
            counts += np.bincount(ids, minlength=n_vocab)
    text_ids = tuple(tok.encode_ids(current_text, step=step)[:MAX_TEXT_TOKENS]) if current_text else ()
    vocab = tok.vocab()
    labels = tuple(visible_token(b) for b in vocab)
    return TokenizedCorpus(step, n_vocab, labels, seqs, counts, text_ids, len(text), tok)


def encode_current_text(corpus: TokenizedCorpus, text: str, *, should_stop=lambda: False,
                        progress=lambda *a: None) -> TokenizedCorpus:
    """`corpus` with the ids of a new current text (same tokenizer and step)."""
    from dataclasses import replace

    ids = tuple(corpus.tokenizer.encode_ids(text, step=corpus.step)[:MAX_TEXT_TOKENS]) if text else ()
    return replace(corpus, text_ids=ids)


@dataclass(frozen=True)
class SimilarityView:
    ids: list[int]  # ids in display order
    matrix: np.ndarray  # (n, n) cosine similarity in display order
    reordered: bool


def compute_similarity(vectors: np.ndarray, ids: list[int], reorder: bool) -> SimilarityView:
    """Cosine similarity of `ids`, optionally reordered so similar tokens sit together."""
    s = cosine_similarity(vectors, ids)
    if reorder and len(ids) > 2:
        order = reorder_for_similarity(s)
        s = s[order][:, order]
        ids = [ids[i] for i in order.tolist()]
    return SimilarityView(list(ids), s, reorder)


TRAINING_SWITCH_INTERVAL = 0.0002  # seconds (see `spare_core_for_gui`)
_blas_lock = threading.Lock()
_switch_saved = 0.005
_blas_users = 0
_blas_saved: int | None = None


def _openblas():
    """numpy's bundled OpenBLAS (``numpy.libs``) through ctypes, or None."""
    import numpy

    folder = os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(folder, "libscipy_openblas*")):
        try:
            lib = ctypes.CDLL(path)
            return lib.scipy_openblas_get_num_threads64_, lib.scipy_openblas_set_num_threads64_
        except (OSError, AttributeError):
            continue
    return None


_OPENBLAS = _openblas()


@contextmanager
def spare_core_for_gui():
    """Keep one CPU core free for the GUI thread while a worker multiplies matrices.

    OpenBLAS starts one thread per core for every product; on a 2-core machine the trainer's
    products then take both cores and the window waits for CPU time (100+ ms stalls). Inside this
    context OpenBLAS uses at most ``cores - 1`` threads (process-wide; restored by the last user).
    It also shortens the interpreter's switch interval further than `background_mode`: painting
    a plot re-takes the GIL hundreds of times, and each wait is up to one interval while the
    trainer runs Python code between its numpy calls.
    """
    global _blas_users, _blas_saved, _switch_saved
    get, set_ = _OPENBLAS if _OPENBLAS is not None else (None, None)
    with _blas_lock:
        if _blas_users == 0:
            _switch_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_saved, TRAINING_SWITCH_INTERVAL))
            if get is not None:
                _blas_saved = int(get())
                set_(max(1, min(_blas_saved, (os.cpu_count() or 2) - 1)))
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                sys.setswitchinterval(_switch_saved)
                if set_ is not None and _blas_saved is not None:
                    set_(_blas_saved)


@dataclass(frozen=True)
class TrainingInfo:
    n_steps: int
    n_pairs: int
    uniform_loss: float
    unigram_loss: float


class EmbeddingTrainingWorker(BackgroundWorker):
    """Trains embeddings on its thread; batches steps every ~50 ms."""

    prepared = Signal(int, object)  # run id, TrainingInfo
    progressed = Signal(int, list, object)  # run id, [EmbedStep], EmbeddingTable or None

    def __init__(self, run_id: int, corpus: TokenizedCorpus, settings: EmbedTrainSettings,
                 init: EmbeddingTable | None = None) -> None:
        super().__init__(run_id)
        self.corpus, self.settings, self.init = corpus, settings, init

    def work(self) -> EmbeddingTable:
        with spare_core_for_gui(), background_mode():
            trainer = EmbedTrainer(self.corpus.sequences, self.corpus.n_vocab, self.settings, init=self.init)
            self.prepared.emit(self.run_id, TrainingInfo(trainer.n_steps, trainer.n_pairs,
                                                         trainer.uniform_loss, trainer.unigram_loss))
            batch: list[EmbedStep] = []
            last_emit = last_snap = time.monotonic()
            for step in trainer.steps():
                batch.append(step)
                if self.should_stop():
                    raise Cancelled()
                now = time.monotonic()
                if now - last_emit >= BATCH_SECONDS:
                    snap = None
                    if now - last_snap >= SNAPSHOT_SECONDS:
                        snap, last_snap = trainer.embeddings(), now
                    self.progressed.emit(self.run_id, batch, snap)
                    batch, last_emit = [], now
            table = trainer.embeddings()
            if batch:
                self.progressed.emit(self.run_id, batch, None)
            return EmbeddingTable(table.vectors, f"trained ({trainer.step} steps, D={self.settings.dim})")


class EmbeddingEngine(BackgroundEngine):
    """Signals (current run only): started, prepared(TrainingInfo), progressed(list, table|None),
    then exactly one of finished(EmbeddingTable), cancelled(), failed(message)."""

    started = Signal()
    prepared = Signal(object)
    progressed = Signal(list, object)
    finished = Signal(object)
    cancelled = Signal()
    failed = Signal(str)

    def start(self, corpus: TokenizedCorpus, settings: EmbedTrainSettings,
              init: EmbeddingTable | None = None) -> int:
        worker = EmbeddingTrainingWorker(self._new_run_id(), corpus, settings.validate(), init)
        worker.prepared.connect(self._on_worker_prepared)
        worker.progressed.connect(self._on_worker_progressed)
        run_id = self._launch(worker)
        self.started.emit()
        return run_id

    @Slot(int, object)
    def _on_worker_prepared(self, run_id: int, info: TrainingInfo) -> None:
        if self.is_current(run_id):
            self.prepared.emit(info)

    @Slot(int, list, object)
    def _on_worker_progressed(self, run_id: int, steps: list, table: object) -> None:
        if self.is_current(run_id):
            self.progressed.emit(steps, table)

    def _on_result(self, result: object) -> None:
        self.finished.emit(result)

    def _on_cancel(self) -> None:
        self.cancelled.emit()

    def _on_failure(self, message: str) -> None:
        self.failed.emit(message)


class NeighboursModel(QAbstractTableModel):
    """Nearest neighbours of one token: rank, token, id, cosine similarity."""

    HEADERS = ("#", "Token", "Id", "Cosine")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[int, str, float]] = []  # (id, label, score)

    def set_rows(self, rows: list[tuple[int, str, float]]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row_data(self, row: int) -> tuple[int, str, float]:
        return self._rows[row]

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        tid, label, score = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(index.row() + 1), label, str(tid), f"{score:.3f}")[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col != 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.UserRole:
            return (index.row() + 1, label, tid, score)[col]
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < 4:
            return self.HEADERS[section]
        return None
