"""The WordPiece trainer on the compiled path: `CompiledWordPieceTrainer`, the same steps as
`trainer.WordPieceTrainer` from the kernels of `tokviz.core.wordpiece.kernels`.

`make_trainer` picks it when numba is there (`tokviz.core.jit`) and the corpus's counts stay below
2**31, the plain trainer otherwise. The kernels run a batch of merges a call (doubling from 8 to
1024: a short training asks for few) and report every step's candidates as integers; the records,
their float scores and the vocabulary forms are made here, one step at a time as they are asked
for. The kernels run on a thread of their own, a batch ahead of the records (both cores work:
the records take about as long as the merges). Steps computed and not yet asked for wait in a
queue, so a caller that stops early and asks again gets the same sequence.

What this leaves out: the rules and the plain trainer (`trainer`), the kernels (`kernels`).
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import deque
from collections.abc import Iterator, Sequence
from queue import SimpleQueue
from types import ModuleType

import numpy as np

from tokviz.core import jit

from .arrays import COUNT_LIMIT, GROW, NXT, ROOM, TOK, TrainerArrays
from .corpus import TrainingStart
from .trainer import WordPieceTrainer
from .trainer_records import WordPieceCandidate, WordPieceStep

KERNELS = "tokviz.core.wordpiece.kernels"
FIRST_BATCH, LAST_BATCH = 8, 1024  # merges a kernel call runs: doubling from the first to the last
_LIMIT, _EXHAUSTED = object(), object()  # `_work` ran the merges it was asked for; no pair is left


def load_kernels() -> ModuleType | None:
    """The compiled kernels, or None where they are off or do not load (`tokviz.core.jit`)."""
    return jit.kernels(KERNELS)


def make_trainer(words: Sequence[str], weights: Sequence[int],
                 **options) -> WordPieceTrainer | CompiledWordPieceTrainer:
    """The compiled trainer when the kernels load and the corpus fits them, else the plain one
    (the arguments are `WordPieceTrainer`'s). The compiled trainer's arrays are built before the
    kernels are asked for: numpy's work runs while numba imports on a warm-up's thread."""
    if jit.allowed() and (max(weights, default=0) < COUNT_LIMIT and len(words) < COUNT_LIMIT):
        trainer = CompiledWordPieceTrainer(words, weights, kernels=None, **options)
        kernels = load_kernels() if trainer.fits() else None
        if kernels is not None:
            trainer.use_kernels(kernels)
            return trainer
    return WordPieceTrainer(words, weights, **options)


class CompiledWordPieceTrainer(TrainingStart):
    """`WordPieceTrainer`'s interface (``steps``, ``segments``, ``symbols``, ``forms``, ``length``,
    ``rank``, ``first_id``) with the merge loop compiled. Ids: base symbol i gets ``first_id + i``; merge r gets
    ``first_id + len(symbols) + r``. Made with `kernels` None, it holds the corpus's arrays and
    needs `use_kernels` before its first step (so the arrays can be built while numba imports)."""

    def fits(self) -> bool:
        """Whether the kernels' 32-bit counts hold this corpus (its weighted length below 2**31)."""
        return self.length < COUNT_LIMIT

    def __init__(self, words: Sequence[str], weights: Sequence[int], *, kernels: ModuleType | None,
                 **options) -> None:
        super().__init__(words, weights, **options)  # symbols, first_id, min_count, n_candidates
        self.arrays = TrainerArrays.build(words, weights, self.symbols, self.min_count)
        self.starts = self.arrays.starts
        self.length = self.arrays.length
        self.k: ModuleType | None = None
        self._queue: deque[tuple] = deque()  # steps computed, not yet asked for: (sites, *candidate rows)
        self._done = False  # no pair is left
        self._worker: threading.Thread | None = None  # `_work`, while it runs
        self._batches: SimpleQueue = SimpleQueue()
        self._stop = threading.Event()
        self._seen: dict[tuple[int, ...], WordPieceCandidate] = {}  # the last step's candidates by row
        if kernels is not None:
            self.use_kernels(kernels)

    def use_kernels(self, kernels: ModuleType) -> None:
        """Count the corpus with `kernels` (`load_kernels`), which then run every merge."""
        x = self.arrays
        x.pairs, x.table, x.live, x.scores = kernels.set_up(x.pos, x.toks, x.pairs, x.pool, x.table, x.meta)
        self.k = kernels

    def _work(self, limit: int | None, batches: SimpleQueue, stop: threading.Event) -> None:
        """Run the kernels on this thread (they let go of the GIL) a batch of merges at a time, up to
        `limit` more merges or until `stop`, and hand each batch to `steps` through `batches`:
        arrays (out, found, totals, done), then `_LIMIT`, `_EXHAUSTED` (no pair is left) or the
        exception that stopped it."""
        x, batch, n = self.arrays, FIRST_BATCH, self.n_candidates
        try:
            while not stop.is_set() and (limit is None or limit > 0):
                wanted = batch if limit is None else min(batch, limit)
                out = np.zeros((wanted, n, 6), dtype=np.int64)
                found = np.zeros(wanted, dtype=np.int64)
                totals = np.zeros(wanted, dtype=np.int64)
                done, status = self.k.run_steps(x.pos, x.toks, x.pairs, x.pool, x.table, x.live, x.scores,
                                                x.meta, out, found, totals, wanted)
                if done:
                    batches.put((out, found, totals, done))
                    limit = None if limit is None else limit - done
                if status == GROW:
                    x.grow(self.k.rehash)
                elif done < wanted:
                    batches.put(_EXHAUSTED)
                    return
                batch = min(LAST_BATCH, 2 * batch)
            batches.put(_LIMIT)
        except BaseException as exc:  # noqa: BLE001 - raised again by `steps`
            batches.put(exc)

    def _take(self, item) -> None:
        """File one of `_work`'s hand-overs: a batch's steps go to the queue, its ends to the state."""
        if item is _LIMIT or item is _EXHAUSTED or isinstance(item, BaseException):
            worker, self._worker = self._worker, None  # (first: a failed join must not leave it waited for)
            if worker is not None and worker.ident is not None:
                worker.join()
            if item is _EXHAUSTED:
                self._done = True
            elif item is not _LIMIT:
                raise item
            return
        out, found, totals, done = item
        rows = out[:done].tolist()
        for s, (m, total) in enumerate(zip(found[:done].tolist(), totals[:done].tolist())):
            self._queue.append((total, *map(tuple, rows[s][:m])))

    def _stop_worker(self) -> None:
        """Stop `_work` after its current batch and keep what it computed."""
        if self._worker is None:
            return
        self._stop.set()
        while self._worker is not None:
            self._take(self._batches.get())

    # -- steps ------------------------------------------------------------------------------------

    def _candidate(self, row: tuple[int, ...]) -> WordPieceCandidate:
        """The record of a candidate row (left, right, count, left count, right count, position)."""
        a, b, c, ca, cb, pos = row
        w = bisect_right(self.starts, pos) - 1
        fid = self.first_id
        return WordPieceCandidate((a + fid, b + fid), c / (ca * cb), c, ca, cb, w, pos - self.starts[w])

    def steps(self, *, max_merges: int | None = None) -> Iterator[WordPieceStep]:
        """Yield merges until `max_merges` are done or no pair reaches `min_count`. The merges are
        computed a batch ahead on a thread of their own while this one makes the records."""
        try:
            while max_merges is None or self.rank < max_merges:
                if not self._queue:
                    if self._done:
                        return
                    if self._worker is None:
                        ahead = None if max_merges is None else max_merges - self.rank
                        self._batches, self._stop = SimpleQueue(), threading.Event()
                        self._worker = threading.Thread(target=self._work, args=(ahead, self._batches, self._stop),
                                                        name="tokviz-wordpiece", daemon=True)
                        self._worker.start()
                    self._take(self._batches.get())
                    continue
                yield self._record(*self._queue.popleft())
        finally:
            self._stop_worker()

    def _record(self, total: int, *rows: tuple[int, ...]) -> WordPieceStep:
        """The next merge's record, from its candidate rows (the winner first) and weighted sites; a
        runner-up unchanged since the step before keeps that step's record."""
        before, now = self._seen, {}
        for row in rows:
            cand = before.get(row)
            now[row] = self._candidate(row) if cand is None else cand
        self._seen = now
        return self.record_merge(rows[0][0], rows[0][1], total, tuple(now.values()))

    def segments(self, chunk: int) -> list[int]:
        """Current ids of word number `chunk` after every merge computed so far (for inspection and
        tests, between calls of `steps`: steps still queued count as done)."""
        pos = self.arrays.pos
        out, p = [], self.starts[chunk]
        if p >= pos.shape[1] or (chunk + 1 < len(self.starts) and self.starts[chunk + 1] == p):
            return out
        while p >= 0:
            out.append(int(pos[TOK, p]) + self.first_id)
            p = int(pos[NXT, p])
        return out


def warm_up(*, encoder: bool = True) -> bool:
    """Load (the first time on a machine: compile) the compiled trainer's kernels with the argument
    types a real training passes: a tiny corpus set up, merged and its arrays grown (the table
    rehashed). False when kernels are off (`tokviz.core.jit`). `encoder` is for the registry's
    signature: a WordPiece tokenizer encodes without kernels."""
    kernels = load_kernels()
    if kernels is None:
        return False
    x = TrainerArrays.build(["hug", "pug", "hugs"], [10, 5, 5], ["h", "p", "##g", "##s", "##u"], 1)
    x.pairs, x.table, x.live, x.scores = kernels.set_up(x.pos, x.toks, x.pairs, x.pool, x.table, x.meta)
    out, found, totals = np.zeros((1, 1, 6), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    kernels.run_steps(x.pos, x.toks, x.pairs, x.pool, x.table, x.live, x.scores, x.meta, out, found, totals, 1)
    x.meta[ROOM] = len(x.table)  # as if a merge needed a bigger table
    x.grow(kernels.rehash)
    return True
