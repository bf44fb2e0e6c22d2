"""Embedding training as a stream of events, and the entry point of its training process.

`embedding_events()` trains `tokviz.core.embeddings.EmbedTrainer` and yields small events,
batching steps at most every 50 ms:

    ("prepared", TrainingInfo)                    once, when the trainer is built
    ("progress", ([EmbedStep, ...], view, table))  view: a `SimilarityView` of the tokens the panel
                                                  shows (at most every `SNAPSHOT_SECONDS`, or at
                                                  once after the panel asked for other tokens);
                                                  table: the (V, D) float32 array now (at most
                                                  every `table_interval` seconds), else None
    ("finished", (table, steps, positions))       the trained (V, D) array, the steps made, and
                                                  the learned position table (context, D) or None

`EmbeddingTrainingWorker` (``tokviz.engine.heatmaps.embedding_engine``) runs `child_main` in a child
process (``python -m tokviz.engine.heatmaps.embedding_child``) and reads the events from its stdout. The
trainer's Python code between its numpy calls then never competes with the window for the GUI
process's GIL, the heatmap's similarity matrix and reordering are computed there too (the
window only draws them), and the process runs at a lower CPU priority, so on a busy machine the
window wins. Frames are length-prefixed pickles (`tokviz.core.processes.pipes`); arrays follow
their frame as raw bytes, read straight into a numpy buffer.

Pure Python + numpy (no Qt): the child process imports only the core and this module.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core import Cancelled
from tokviz.core.embeddings import EmbeddingTable, EmbedTrainer, EmbedTrainSettings, compute_similarity
from tokviz.core.processes.pipes import read_event, read_frame, write_event
from tokviz.core.processes.spawn import JOB_ERRORS, child_pipes, exit_child, run_child, watch_parent
from tokviz.engine.training.child import BATCH_SECONDS

SNAPSHOT_SECONDS = 0.25  # how often the live heatmap gets a new similarity view while training
TABLE_BYTES_PER_SECOND = 16e6  # bandwidth for whole-table snapshots (a 1000 x 256 table: 4 per second)
CHILD_NICENESS = 10  # the training process yields the CPU to the window (POSIX nice, set by the parent)

ViewSpec = tuple[tuple[int, ...], bool]  # (token ids, reorder)
Event = tuple[str, object]


@dataclass(frozen=True)
class TrainingInfo:
    n_steps: int
    n_pairs: int
    uniform_loss: float
    unigram_loss: float


def table_interval(n_vocab: int, dim: int) -> float:
    """Seconds between whole-table snapshots: 0.25 s for small tables, longer for big ones.

    >>> table_interval(1000, 64), table_interval(50257, 768)
    (0.25, 9.649344)
    """
    return max(SNAPSHOT_SECONDS, n_vocab * dim * 4 / TABLE_BYTES_PER_SECOND)


def embedding_events(
    sequences: Sequence[Sequence[int]],
    n_vocab: int,
    settings: EmbedTrainSettings,
    init: EmbeddingTable | None = None,
    *,
    should_stop: Callable[[], bool] = lambda: False,
    view_spec: Callable[[], ViewSpec | None] = lambda: None,
) -> Iterator[Event]:
    """Train, yielding events; raises `Cancelled` when `should_stop()` turns True.

    `view_spec()` is asked at every batch; when it returns something new, the next batch carries
    a view of those tokens even if the last view is recent.
    """
    trainer = EmbedTrainer(sequences, n_vocab, settings, init=init)
    yield ("prepared", TrainingInfo(trainer.n_steps, trainer.n_pairs, trainer.uniform_loss, trainer.unigram_loss))
    every_table = table_interval(trainer.n_vocab, settings.dim)
    batch: list = []
    last_emit = last_view = last_table = time.monotonic()
    shown: ViewSpec | None = None
    for step in trainer.steps():
        batch.append(step)
        if should_stop():
            raise Cancelled()
        now = time.monotonic()
        if now - last_emit < BATCH_SECONDS:
            continue
        spec = view_spec()
        view = table = None
        if spec is not None and len(spec[0]) >= 2 and (spec != shown or now - last_view >= SNAPSHOT_SECONDS):
            view, shown, last_view = compute_similarity(trainer.vectors, list(spec[0]), spec[1]), spec, now
        if now - last_table >= every_table:
            table, last_table = trainer.embeddings().vectors, now
        yield ("progress", (batch, view, table))
        batch, last_emit = [], time.monotonic()
    if batch:
        yield ("progress", (batch, None, None))
    yield ("finished", (trainer.embeddings().vectors, trainer.step, trainer.positional()))


def _send_events(fd_out: int, events: Iterator[Event]) -> None:
    for kind, payload in events:
        if kind == "progress":
            steps, view, table = payload
            write_event(fd_out, kind, (steps, view), table)
        elif kind == "finished":
            table, steps, positions = payload
            write_event(fd_out, kind, (steps, positions), table)
        else:
            write_event(fd_out, kind, payload)


def child_main() -> int:
    """Entry point of the training process (``python -m tokviz.engine.heatmaps.embedding_child``).

    Reads the job from stdin: a frame ``(ids, lengths, n_vocab, settings, view_spec, source)``
    (the sequences concatenated, and their lengths), then, when ``source`` is not None, the
    starting table as a raw array frame. Afterwards a ``("view", spec)`` frame changes the tokens
    of the live view; any other frame, or the end of input (the window went away), means "stop".
    Writes event frames to stdout, ending with ``finished``, ``cancelled``, ``failed`` (message)
    or ``error`` (traceback).
    """
    fd_in, fd_out = child_pipes()
    stop = threading.Event()
    spec: list[ViewSpec | None] = [None]
    try:
        ids, lengths, n_vocab, settings, spec[0], source = read_frame(fd_in)
        init = None
        if source is not None:
            _, _, vectors = read_event(fd_in)
            init = EmbeddingTable(vectors, source)
    except JOB_ERRORS:
        return 1

    def on_frame(message: object) -> bool:
        if not (isinstance(message, tuple) and message[0] == "view"):
            return False
        spec[0] = message[1]
        return True

    watch_parent(fd_in, stop, on_frame)

    def run() -> None:
        sequences = np.split(ids, np.cumsum(lengths)[:-1]) if len(lengths) else []
        _send_events(fd_out, embedding_events(sequences, n_vocab, settings, init, should_stop=stop.is_set,
                                              view_spec=lambda: spec[0]))

    return run_child(run, fd_out, memory_hint="try a smaller D or corpus")


if __name__ == "__main__":
    from .embedding_child import child_main as main  # pickles name that module, not __main__

    exit_child(main)
