"""Token embeddings in the background: tokenizing the training corpus, and training a small
next-token model (`EmbeddingTrainingWorker` / `EmbeddingEngine`).

`tokenize_corpus` (run on a `TaskEngine`) encodes a sample of the corpus and the current text
with the current timeline's tokenizer at the current step: training sequences, token counts,
visible token labels. `EmbeddingEngine.start(corpus, settings, view=(ids, reorder))` trains
`tokviz.core.embeddings.EmbedTrainer` in a child process (`tokviz.engine.embedding_child`; a
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
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal, Slot

import tokviz
from tokviz.core import Cancelled, Timeline, TokvizError
from tokviz.core.embeddings import EmbeddingTable, EmbedTrainSettings, SimilarityView, compute_similarity

from .display import visible_token
from .embedding_child import CHILD_NICENESS, SNAPSHOT_SECONDS, TrainingInfo, ViewSpec, read_event, write_event
from .training_child import write_frame
from .workers import BackgroundEngine, BackgroundWorker

__all__ = ["EmbeddingEngine", "EmbeddingTrainingWorker", "NeighboursModel", "SNAPSHOT_SECONDS", "SimilarityView",
           "TokenizedCorpus", "TrainingInfo", "compute_similarity", "encode_current_text", "tokenize_corpus"]

MAX_CORPUS_CHARS = 400_000  # characters of the corpus used for training embeddings
MAX_TEXT_TOKENS = 512  # tokens of the current text kept (heatmap rows, positional row labels)
CHILD_EXIT_SECONDS = 3.0  # after a stop, how long the training process may take before it is killed
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
    pieces = hasattr(tok, "n_vocab_at")  # WordPiece / Unigram: an early Unigram round has more pieces
    n_vocab = tok.n_vocab_at(step) if pieces else tok.n_vocab
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


class EmbeddingTrainingWorker(BackgroundWorker):
    """Trains embeddings in a child process (`tokviz.engine.embedding_child`) and relays its
    events: steps every ~50 ms, table snapshots, and ready-to-draw similarity views."""

    prepared = Signal(int, object)  # run id, TrainingInfo
    progressed = Signal(int, list, object)  # run id, [EmbedStep], EmbeddingTable or None
    view_ready = Signal(int, object)  # run id, SimilarityView computed by the training process

    def __init__(self, run_id: int, corpus: TokenizedCorpus, settings: EmbedTrainSettings,
                 init: EmbeddingTable | None = None, view: ViewSpec | None = None) -> None:
        super().__init__(run_id)
        self.corpus, self.settings, self.init, self.view = corpus, settings, init, view
        self.pid: int | None = None  # of the training process, while it runs
        self._proc: subprocess.Popen | None = None
        self._stdin_lock = threading.Lock()
        self._ended = False

    def set_view(self, view: ViewSpec) -> None:
        """Ask for views of other tokens (thread-safe, never waits)."""
        self.view = view
        self._send(("view", view), wait=False)

    def cancel(self) -> None:
        """Stop at the next step; the training process is told to stop too (thread-safe, never
        waits: while the job is still being written, the worker sends the stop afterwards)."""
        super().cancel()
        self._send("stop", wait=False)

    def _send(self, obj: object, *, wait: bool = True) -> None:
        if not self._stdin_lock.acquire(blocking=wait):
            return
        try:
            proc = self._proc
            if proc is not None and proc.stdin is not None and not proc.stdin.closed:
                write_frame(proc.stdin.fileno(), obj)
        except (OSError, ValueError):  # already gone or closed
            pass
        finally:
            self._stdin_lock.release()

    def work(self) -> tuple[EmbeddingTable, np.ndarray | None]:
        seqs = self.corpus.sequences
        ids = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int64)
        lengths = np.array([len(x) for x in seqs], dtype=np.int64)
        init, view = self.init, self.view
        self.check_cancelled()
        proc = _start_child("tokviz.engine.embedding_child")
        ended = False
        try:
            with self._stdin_lock:  # (the GUI thread's sends skip meanwhile; caught up below)
                self._proc, self.pid = proc, proc.pid
                fd = proc.stdin.fileno()
                write_frame(fd, (ids, lengths, self.corpus.n_vocab, self.settings, view,
                                 None if init is None else init.source))
                if init is not None:
                    write_event(fd, "table", None, init.vectors)
            if self.should_stop():
                self._send("stop")
            elif self.view != view:
                self._send(("view", self.view))
            result = self._relay(proc)
            ended = True
            return result
        except (BrokenPipeError, EOFError):
            self.check_cancelled()
            ended = True
            raise RuntimeError(f"the training process stopped unexpectedly (exit code {proc.wait()})") from None
        except (Cancelled, TokvizError, RuntimeError):
            ended = self._ended
            raise
        finally:
            with self._stdin_lock:
                self._proc = None
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            if not ended:  # cancelled meanwhile: nothing to wait for (it may be blocked writing)
                proc.kill()
            try:
                proc.wait(CHILD_EXIT_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()

    def _relay(self, proc: subprocess.Popen) -> tuple[EmbeddingTable, np.ndarray | None]:
        """Turn the process's events into signals until it ends; return the trained table and the
        learned position table (None without positions)."""
        rid, fd = self.run_id, proc.stdout.fileno()
        self._ended = False  # the process sent its last event
        while True:
            kind, payload, array = read_event(fd)
            self._ended = kind in ("finished", "cancelled", "failed", "error")
            if kind == "finished":
                steps, positions = payload
                return EmbeddingTable(array, f"trained ({steps} steps, D={self.settings.dim})"), positions
            if kind == "cancelled":
                raise Cancelled()
            if kind == "failed":
                raise TokvizError(payload)
            if kind == "error":
                raise RuntimeError(f"the training process failed:\n{payload}")
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


def _start_child(module: str) -> subprocess.Popen:
    """``python -m module`` with pipes, importing this tokviz, at a lower CPU priority than the window
    (`CHILD_NICENESS`), its BLAS leaving a core free."""
    env = dict(os.environ)
    root = str(Path(tokviz.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    threads = str(max(1, (os.cpu_count() or 2) - 1))  # BLAS threads: one core stays free
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, threads)
    proc = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=env, bufsize=0)
    if hasattr(os, "setpriority"):  # at once, before it spends CPU on its imports
        try:
            own = os.getpriority(os.PRIO_PROCESS, 0)
            os.setpriority(os.PRIO_PROCESS, proc.pid, min(19, own + CHILD_NICENESS))
        except OSError:  # pragma: no cover - not allowed or already gone: normal priority
            pass
    return proc


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
