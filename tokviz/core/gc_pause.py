"""Run a trainer's generator with Python's cyclic garbage collector paused while it works, and
hand the C heap's freed pages back to the system (`release_free_memory`).

The WordPiece trainer pushes hundreds of thousands of heap entries and rewrites word lists at
every merge; Unigram's rounds build large arrays and records. Neither makes reference cycles,
yet the allocations trigger the collector's full passes, which walk every live container of the
trainer (a tenth of WordPiece's training time). `paused_gc` pauses the collector while each item
is computed and restores it before handing the item over, so whatever the caller does between
items (a GUI worker, a progress bar) runs with the collector as it was. `collector_paused` is the
same pause around any one-off job (the command line's encode).

    >>> import gc
    >>> def items():
    ...     yield gc.isenabled()
    >>> list(paused_gc(items())), gc.isenabled()
    ([False], True)
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


class collector_paused:  # named as the function it replaced: ``with collector_paused():``
    """The cyclic collector off inside the block, given back as it was found (an exception too).
    A class, not a generator: `paused_gc` enters one per merge of a training."""

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *_exc) -> None:
        if self._was_enabled:
            gc.enable()


def paused_gc(items: Iterable[T]) -> Iterator[T]:
    """Yield the items of `items`, computing each with the cyclic collector paused (an exception
    from `items`, e.g. a cancellation, leaves the collector as it was too)."""
    it = iter(items)
    while True:
        with collector_paused():
            try:
                item = next(it)
            except StopIteration:
                return
        yield item


def release_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; elsewhere nothing).

    A trainer's set-up frees many position-long numpy temporaries, and a finished training its
    whole working state; glibc raises its mmap threshold after the first large free, so the later
    ones come from the heap and stay in the process (tens of MB for a whole training) unless
    handed back."""
    global _TRIM
    if _TRIM is None:
        import ctypes

        try:
            _TRIM = ctypes.CDLL(None).malloc_trim
        except (AttributeError, OSError, TypeError):  # not glibc: its allocator keeps its own rules
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM = None  # glibc's malloc_trim once looked up; False where there is none
