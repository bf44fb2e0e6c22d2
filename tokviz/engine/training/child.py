"""The training loop as a stream of events, and the entry point of the training process.

`training_events()` runs one training (parse a word table if asked, count, merge) and yields small
event tuples, batching merges at most every 50 ms:

    ("stage", name)                 parsing | compiling | counting | training
    ("counting", (done, total))     characters counted so far
    ("prepared", (timeline, budget))  base vocabulary known (timeline has no steps)
    ("steps", [MergeStep, ...])       (WordPieceStep, or UnigramRound: one per round)
    ("finished", n_merges)

An algorithm with compiled kernels (`AlgorithmSpec.warm_up`) loads them first, on a thread of its
own, and the stream says ``("stage", "compiling")`` when numba has to compile them (the first
run on a machine: seconds, minutes on a loaded one), so the wait has a name.

`TrainingWorker` iterates it directly on its thread for small corpora, or runs `child_main` in a
child process (``python -m tokviz.engine.training.child``) for large ones and reads the same
events from its stdout (length-prefixed pickles, see `tokviz.core.processes.pipes`). In a separate
process the core's long C-level operations (counting millions of chunks, building the trainer's tables,
freeing them) cannot hold the GUI process's GIL, so the window never stalls.

Pure Python (no Qt): the child process imports only the core and this module.
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass

from tokviz.core import Cancelled, jit, parse_word_counts
from tokviz.core.registry import AnySettings, empty_copy, make_training, spec_of  # BPE, WordPiece or Unigram
from tokviz.core.processes.parallel import choose_processes
from tokviz.core.processes.pipes import read_frame, write_event
from tokviz.core.processes.spawn import JOB_ERRORS, child_pipes, exit_child, run_child, watch_parent

BATCH_SECONDS = 0.05
CANCEL_CHECK_SECONDS = 0.1  # while numba compiles (it cannot be interrupted), how often a stop is looked for

STAGE_PARSING = "parsing"
STAGE_COMPILING = "compiling"
STAGE_COUNTING = "counting"
STAGE_PREPARING = "preparing"
STAGE_TRAINING = "training"

Event = tuple[str, object]


@dataclass(frozen=True)
class CorpusInput:
    """What to train on: the text (or a large text's pieces), and whether it is a ``word count``
    table. Pieces are joined only where the training runs (see `tokviz.engine.large_text`)."""

    text: str = ""
    word_counts: bool = False
    name: str = "corpus"
    pieces: tuple[str, ...] | None = None

    @property
    def n_chars(self) -> int:
        return sum(map(len, self.pieces)) if self.pieces is not None else len(self.text)

    def joined(self) -> str:
        return "".join(self.pieces) if self.pieces is not None else self.text

    def iter_pieces(self, size: int) -> Iterator[str]:
        """The text in pieces of at most about `size` characters."""
        if self.pieces is not None:
            for piece in self.pieces:
                yield from (piece[i : i + size] for i in range(0, len(piece), size))
        else:
            yield from (self.text[i : i + size] for i in range(0, len(self.text), size))


def training_events(
    settings: AnySettings,
    corpus: CorpusInput,
    *,
    should_stop: Callable[[], bool],
    processes: int = 1,
) -> Iterator[Event]:
    """Run one training in up to `processes` processes (`tokviz.core.processes.parallel`),
    yielding events; raises `Cancelled` when `should_stop()` turns True."""
    text = corpus.joined()
    if corpus.word_counts:
        yield ("stage", STAGE_PARSING)
        training = make_training(settings, table=parse_word_counts(text, name=corpus.name))
    else:
        training = make_training(settings, texts=[text])
    del text
    if should_stop():
        raise Cancelled()
    yield from _load_kernels(settings, should_stop)
    yield ("stage", STAGE_COUNTING)
    counted: list[tuple[int, int]] = []
    timeline = training.prepare(
        should_stop=should_stop, progress=lambda d, t: counted.append((d, t)), processes=processes,
    )
    if counted:
        yield ("counting", counted[-1])
    if should_stop():
        raise Cancelled()
    yield ("prepared", (empty_copy(timeline), training.budget))
    yield ("stage", STAGE_TRAINING)
    batch: list = []
    last = time.monotonic()
    n_steps = 0
    for step in training.steps(record=False):  # the receiver keeps the one list
        batch.append(step)
        n_steps += 1
        if should_stop():
            raise Cancelled()
        now = time.monotonic()
        if now - last >= BATCH_SECONDS:
            yield ("steps", batch)
            batch = []
            last = now
    if batch:
        yield ("steps", batch)
    yield ("finished", n_steps)


def _load_kernels(settings: AnySettings, should_stop: Callable[[], bool]) -> Iterator[Event]:
    """Run the algorithm's warm-up (it loads its compiled kernels) on a thread, yielding
    ``("stage", "compiling")`` if numba compiles them meanwhile (or is compiling them already, for
    a warm-up the window started); nothing for algorithms without kernels or with kernels off. A
    warm-up that fails changes nothing: the training loads what it needs or takes its plain path."""
    spec = spec_of(settings)
    if spec is None or spec.warm_up is None or not jit.enabled():
        return
    news: queue.SimpleQueue[bool] = queue.SimpleQueue()  # True: numba compiles; False: loaded

    def load() -> None:
        try:
            with suppress(Exception), jit.on_compiling(lambda: news.put(True)):  # only a head start
                spec.warm_up(encoder=False)  # this process only trains
        finally:
            news.put(False)

    thread = threading.Thread(target=load, name="tokviz-load-kernels", daemon=True)
    thread.start()
    while True:
        try:
            compiling = news.get(timeout=CANCEL_CHECK_SECONDS)
        except queue.Empty:
            if should_stop():
                raise Cancelled() from None  # the compilation ends on its own; its cache is kept
            continue
        if not compiling:
            break
        yield ("stage", STAGE_COMPILING)
    thread.join()


def child_main() -> int:
    """Entry point of the training process (``python -m tokviz.engine.training.child``).

    Reads frames from stdin: the job ``(settings, word_counts, name, n_pieces)``, then the text as
    `n_pieces` UTF-8 byte strings; afterwards any frame (or the end of input: the window went away)
    means "stop". Writes events to stdout (`tokviz.core.processes.pipes`), ending with ``done``,
    ``cancelled``, ``failed`` (message) or ``error`` (traceback).
    """
    fd_in, fd_out = child_pipes()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # unwinds, killing counting children
    stop = threading.Event()
    try:
        settings, word_counts, name, n_pieces = read_frame(fd_in)
        text = "".join(read_frame(fd_in).decode("utf-8", "surrogatepass") for _ in range(n_pieces))
    except JOB_ERRORS:
        return 1
    watch_parent(fd_in, stop)
    # this process may fork (no GUI; the reader thread is a fork-safe one): counting and Unigram's
    # EM share a big corpus with forked children when the machine has cores to spare
    processes = choose_processes()
    corpus = CorpusInput(text, word_counts, name)
    del text

    def run() -> None:
        for kind, payload in training_events(settings, corpus, should_stop=stop.is_set, processes=processes):
            write_event(fd_out, kind, payload)
        write_event(fd_out, "done")

    return run_child(run, fd_out, memory_hint="try a smaller corpus")


if __name__ == "__main__":
    exit_child(child_main)
