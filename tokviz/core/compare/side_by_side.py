"""Models of a comparison measured side by side, each in a forked child, their items back in order.

Measuring several models at once, each in a child of its own, beats one model at a time with its
encoding in two halves: halves share one text's new chunks (the forked half sends them back),
split only the encoding, and leave everything after it (positions, tallies, metrics) on one core. A child opens its model, measures it with one process and streams each item
(`run._measure`'s progress rows, then its result) as it comes; the caller reads the models in
order while the next one is already running. A model's expected failures come back as `Failed`
(the message a serial run would give); a child that dies without its result (killed, out of
memory) is reported for that model alone. Closing the iterator early (an interrupted command)
kills the children still running.

What this leaves out: what a model's items are (`run`), when this is used (`run.iter_compare`:
two processes or more, two models or more, forking safe here).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from tokviz.core.errors import TokvizError
from tokviz.core.processes.fork import ChildFailed, ForkedStream, fork_stream


@dataclass(frozen=True)
class Failed:
    """A model that could not be measured: the error its result carries."""

    message: str


def failure_message(exc: BaseException) -> str:
    """The error a model's result carries for `exc` (the same in a child and in this process)."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    return str(exc) or type(exc).__name__


def _stream(job: Callable[[], Iterator[object]], send: Callable[[object], None]) -> None:
    """The child's body: every item of ``job()``, then `Failed` if it stopped on an expected error."""
    try:
        for item in job():
            send(item)
    except (TokvizError, OSError, MemoryError) as exc:
        send(Failed(failure_message(exc)))


def _items(child: ForkedStream) -> Iterator[object]:
    """The child's items; `Failed` when it died or raised something unexpected."""
    try:
        yield from child
    except ChildFailed as exc:
        yield Failed(f"the process measuring it stopped ({exc})")


def side_by_side(jobs: Sequence[Callable[[], Iterator[object]]], processes: int) -> Iterator[Iterator[object]]:
    """For each job in order, an iterator over its items, computed in forked children at most
    `processes` at a time (the next child starts once an earlier one has been read to its end).
    A job the system refuses to fork for runs in this process when its turn comes: ``job()``
    itself, whose exceptions reach the reader.

    >>> from tokviz.core.processes.parallel import usable
    >>> runs = side_by_side([lambda: iter([1, 2]), lambda: iter("ab")], 2) if usable(2) > 1 else [[1, 2], "ab"]
    >>> [list(items) for items in runs]
    [[1, 2], ['a', 'b']]
    """
    waiting = deque(jobs)
    running: deque[tuple[Callable[[], Iterator[object]], ForkedStream | None]] = deque()

    def fill() -> None:
        while waiting and len(running) < max(1, processes):
            job = waiting.popleft()
            try:
                child: ForkedStream | None = fork_stream(lambda send, job=job: _stream(job, send))
            except OSError:  # no fork now: here, in its turn
                child = None
            running.append((job, child))

    current: ForkedStream | None = None
    try:
        fill()
        while running:
            job, current = running.popleft()
            yield job() if current is None else _items(current)
            if current is not None:
                current.kill()  # read to its end: reaped already (a no-op); left early: stopped
            fill()
    finally:
        for child in [current, *(c for _, c in running)]:
            if child is not None:
                child.kill()
