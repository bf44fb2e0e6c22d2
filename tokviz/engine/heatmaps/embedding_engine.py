"""Token embeddings in the background: tokenizing the training corpus, and training a small
next-token model (`EmbeddingTrainingWorker` / `EmbeddingEngine`).

`tokenize_corpus` (run on a `TaskEngine`) encodes a sample of the corpus and the current text
with the current timeline's tokenizer at the current step: training sequences, token counts,
visible token labels. `EmbeddingEngine.start(corpus, settings, view=(ids, reorder))` trains
`tokviz.core.embeddings.EmbedTrainer` in a child process (`tokviz.engine.heatmaps.embedding_child`; a
worker thread relays its events): it emits ``prepared(info)`` once, then
``progressed(steps, table)`` at most every 50 ms (`table`: a snapshot of the embeddings now and
then, else None) and ``view_ready(SimilarityView)`` at most every `SNAPSHOT_SECONDS` (the cosine
matrix of the view's tokens, already reordered: the window only draws it; `set_view` changes the
tokens), and ends with exactly one of ``finished(table)``, ``cancelled()`` or
``failed(message)``. Cancel is immediate for the GUI (newest run wins).

What this leaves out: the maths (``tokviz.core.embeddings``) and drawing (the panel).
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, Signal, Slot

from tokviz.core import Cancelled, Timeline
from tokviz.core.display.tokens import visible_token
from tokviz.core.embeddings import EmbeddingTable, EmbedTrainSettings, SimilarityView, compute_similarity
from tokviz.core.processes.pipes import write_event, write_frame
from tokviz.core.processes.spawn import ChildProcess
from tokviz.engine.tables.record_model import RIGHT, RecordModel
from tokviz.engine.workers import BackgroundEngine, BackgroundWorker, ChildWorkerMixin

from .embedding_child import CHILD_NICENESS, SNAPSHOT_SECONDS, TrainingInfo, ViewSpec

__all__ = ["EmbeddingEngine", "EmbeddingTrainingWorker", "NeighboursModel", "SNAPSHOT_SECONDS", "SimilarityView",
           "TokenizedCorpus", "TrainingInfo", "compute_similarity", "encode_current_text", "tokenize_corpus"]

MAX_CORPUS_CHARS = 400_000  # characters of the corpus used for training embeddings
MAX_TEXT_TOKENS = 512  # tokens of the current text kept (heatmap rows, positional row labels)
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
    at = tok.n_vocab_at(step)  # WordPiece / Unigram: an early Unigram round has more pieces
    pieces = at is not None
    n_vocab = at if pieces else tok.n_vocab
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
    vocab = tok.vocab(step=step) if pieces else tok.vocab()
    labels = tuple(visible_token(b or b"") for b in vocab)  # loaded tokenizers have unused ids
    return TokenizedCorpus(step, n_vocab, labels, seqs, counts, text_ids, len(text), tok)


def encode_current_text(corpus: TokenizedCorpus, text: str, *, should_stop=lambda: False,
                        progress=lambda *a: None) -> TokenizedCorpus:
    """`corpus` with the ids of a new current text (same tokenizer and step)."""
    from dataclasses import replace

    ids = tuple(corpus.tokenizer.encode_ids(text, step=corpus.step)[:MAX_TEXT_TOKENS]) if text else ()
    return replace(corpus, text_ids=ids)


class EmbeddingTrainingWorker(ChildWorkerMixin, BackgroundWorker):
    """Trains embeddings in a child process (`tokviz.engine.heatmaps.embedding_child`) and relays its
    events: steps every ~50 ms, table snapshots, and ready-to-draw similarity views."""

    prepared = Signal(int, object)  # run id, TrainingInfo
    progressed = Signal(int, list, object)  # run id, [EmbedStep], EmbeddingTable or None
    view_ready = Signal(int, object)  # run id, SimilarityView computed by the training process

    def __init__(self, run_id: int, corpus: TokenizedCorpus, settings: EmbedTrainSettings,
                 init: EmbeddingTable | None = None, view: ViewSpec | None = None) -> None:
        super().__init__(run_id)
        self.corpus, self.settings, self.init, self.view = corpus, settings, init, view
        self.pid: int | None = None  # of the training process, while it runs

    def set_view(self, view: ViewSpec) -> None:
        """Ask for views of other tokens (thread-safe, never waits)."""
        self.view = view
        self.send_to_child(("view", view))

    def work(self) -> tuple[EmbeddingTable, np.ndarray | None]:
        seqs = self.corpus.sequences
        ids = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int64)
        lengths = np.array([len(x) for x in seqs], dtype=np.int64)
        init, view = self.init, self.view
        self.check_cancelled()
        child = self._child = ChildProcess("tokviz.engine.heatmaps.embedding_child", niceness=CHILD_NICENESS)
        self.pid = child.pid

        def write_job(fd: int) -> None:
            write_frame(fd, (ids, lengths, self.corpus.n_vocab, self.settings, view,
                             None if init is None else init.source))
            if init is not None:
                write_event(fd, "table", None, init.vectors)

        try:
            child.write_job(write_job, self.should_stop)
            if self.view != view:  # changed meanwhile: caught up here
                child.send(("view", self.view), wait=True)
            return self._relay(child)
        except (BrokenPipeError, EOFError):
            raise child.crash_error(self.check_cancelled) from None
        finally:
            child.close(kill_unfinished=True)  # cancelled meanwhile: nothing to wait for

    def _relay(self, child: ChildProcess) -> tuple[EmbeddingTable, np.ndarray | None]:
        """Turn the process's events into signals until it ends; return the trained table and the
        learned position table (None without positions)."""
        rid = self.run_id
        for kind, payload, array in child.events(self.check_cancelled):
            if kind == "finished":
                steps, positions = payload
                return EmbeddingTable(array, f"trained ({steps} steps, D={self.settings.dim})"), positions
            self.check_cancelled()
            if kind == "prepared":
                self.prepared.emit(rid, payload)
            elif kind == "progress":
                steps, view = payload
                last = steps[-1]
                table = None if array is None else EmbeddingTable(
                    array, f"trained (step {last.step} of {last.n_steps})")
                self.progressed.emit(rid, steps, table)
                if view is not None:
                    self.view_ready.emit(rid, view)
        raise RuntimeError("the training process ended without a result")


class EmbeddingEngine(BackgroundEngine):
    """Signals (current run only): started, prepared(TrainingInfo), progressed(list, table|None),
    view_ready(SimilarityView), then exactly one of finished(EmbeddingTable) (after
    positional_trained(array) when the run trained positions), cancelled(), failed(message)."""

    started = Signal()
    prepared = Signal(object)
    progressed = Signal(list, object)
    view_ready = Signal(object)
    positional_trained = Signal(object)  # (context, D) float32: the learned position table
    finished = Signal(object)
    cancelled = Signal()
    failed = Signal(str)

    def start(self, corpus: TokenizedCorpus, settings: EmbedTrainSettings,
              init: EmbeddingTable | None = None, *, view: ViewSpec | None = None) -> int:
        """Train on `corpus`; with `view` ``(ids, reorder)`` the process also sends
        similarity views of those tokens as it learns."""
        worker = EmbeddingTrainingWorker(self._new_run_id(), corpus, settings.validate(), init,
                                         _view_spec(view))
        worker.prepared.connect(self._on_worker_prepared)
        worker.progressed.connect(self._on_worker_progressed)
        worker.view_ready.connect(self._on_worker_view_ready)
        gc.freeze()  # live updates allocate steadily: full collections then skip the window's old objects
        run_id = self._launch(worker)
        self.started.emit()
        return run_id

    def set_view(self, ids, reorder: bool) -> None:
        """The tokens the live views of the current run show (ignored when idle)."""
        run = self._runs.get(self._current) if self._current is not None else None
        if run is not None:
            run.worker.set_view(_view_spec((ids, reorder)))

    @property
    def process_id(self) -> int | None:
        """Process id of the current run's training process (None when idle or not started yet)."""
        run = self._runs.get(self._current) if self._current is not None else None
        return None if run is None else run.worker.pid

    @Slot(int, object)
    def _on_worker_prepared(self, run_id: int, info: TrainingInfo) -> None:
        if self.is_current(run_id):
            self.prepared.emit(info)

    @Slot(int, list, object)
    def _on_worker_progressed(self, run_id: int, steps: list, table: object) -> None:
        if self.is_current(run_id):
            self.progressed.emit(steps, table)

    @Slot(int, object)
    def _on_worker_view_ready(self, run_id: int, view: SimilarityView) -> None:
        if self.is_current(run_id):
            self.view_ready.emit(view)

    def _on_result(self, result: object) -> None:
        table, positions = result
        if positions is not None:
            self.positional_trained.emit(positions)
        self.finished.emit(table)

    def _on_cancel(self) -> None:
        self.cancelled.emit()

    def _on_failure(self, message: str) -> None:
        self.failed.emit(message)


def _view_spec(view) -> ViewSpec | None:
    return None if view is None else (tuple(int(i) for i in view[0]), bool(view[1]))


class NeighboursModel(RecordModel):
    """Nearest neighbours of one token: rank, token, id, cosine similarity."""

    COLUMNS = ("#", "Token", "Id", "Cosine")

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

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        tid, label, score = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(index.row() + 1), label, str(tid), f"{score:.3f}")[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col != 1:
            return RIGHT
        if role == Qt.ItemDataRole.UserRole:
            return (index.row() + 1, label, tid, score)[col]
        return None
