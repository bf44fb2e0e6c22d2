"""Optional compiled kernels: numba, when it is installed (the ``fast`` extra) and not switched off.

A few hot loops (the SentencePiece Unigram Viterbi) have a numba version that runs the same
arithmetic compiled; everything else, and everything on a bare install, is plain Python + numpy.
`enabled()` says whether the compiled versions are used: numba imports, and the environment
variable ``TOKVIZ_JIT`` is not ``0`` (the tests and benchmarks set it to compare both paths).
Compiled functions are cached on disk by numba (``cache=True``): the first use on a machine
compiles them (seconds, minutes on a loaded machine), later processes load them; `on_compiling`
tells a caller when that first compilation starts, so it can say why it waits, and `compiling`
whether numba is compiling right now on any thread of this process (a warm-up started earlier).
Once numba imports here, its cached kernels load without readying its compiler
(`tokviz.core.jit_cache_loads`: about 0.1 s of CPU less for each process that uses them).

What this leaves out: the kernels themselves (next to the code they speed up).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

from .jit_cache_loads import quicken

_numba_ok: bool | None = None
_under_way = 0  # numba compilations running in this process now (nested ones count too)
_tracking = False
_lock = threading.Lock()


def enabled() -> bool:
    """Whether compiled kernels are used (numba installed and ``TOKVIZ_JIT`` not ``0``)."""
    global _numba_ok
    if os.environ.get("TOKVIZ_JIT", "1") == "0":
        return False
    if _numba_ok is None:
        try:
            import numba  # noqa: F401

            _track_compilations()
            quicken()
        except Exception:  # not installed, or broken against this numpy: the plain path
            _numba_ok = False
        else:
            _numba_ok = True
    return _numba_ok


def allowed() -> bool:
    """Whether compiled kernels may be used, without importing numba to find out: not switched
    off, and numba not known to fail here (`enabled` tells for sure, at the cost of the import)."""
    return os.environ.get("TOKVIZ_JIT", "1") != "0" and _numba_ok is not False


def kernels(module: str) -> ModuleType | None:
    """The kernel module `module` (it imports numba), or None when kernels are off or it cannot be
    imported here (numba finds no place to cache compiled code, say): the caller takes its plain path."""
    global _numba_ok
    if not enabled():
        return None
    try:
        return importlib.import_module(module)
    except Exception:
        _numba_ok = False
        return None


def compiling() -> bool:
    """Whether numba is compiling a function in this process now, on any thread (counted once
    `enabled` has imported numba): a training that waits for a warm-up's compilation is waiting
    for a compilation too."""
    return _under_way > 0


def _track_compilations() -> None:
    """Count numba's compilations from now on (``numba:compile`` start and end events)."""
    global _tracking
    with _lock:
        if _tracking:
            return
        from numba.core import event

        class Counter(event.Listener):
            def on_start(self, ev) -> None:
                global _under_way
                with _lock:
                    _under_way += 1

            def on_end(self, ev) -> None:
                global _under_way
                with _lock:
                    _under_way = max(0, _under_way - 1)

        event.register("numba:compile", Counter())
        _tracking = True


@contextmanager
def on_compiling(started: Callable[[], object]) -> Iterator[None]:
    """Within the block, call `started()` once, when numba begins compiling a function (a kernel
    missing from its disk cache), not when it loads one from the cache; at once if numba is
    compiling already (`compiling`: another thread's warm-up the block will wait for). Does nothing
    when the kernels are off. Uses numba's event API (``numba:compile`` fires only for a real
    compilation)."""
    if not enabled():
        yield
        return
    from numba.core import event  # numba imports: `enabled` said it does

    once = threading.Lock()  # taken by the first compilation seen (on whichever thread)

    def first() -> None:
        if once.acquire(blocking=False):
            started()

    class FirstCompile(event.Listener):
        def on_start(self, ev) -> None:
            first()

        def on_end(self, ev) -> None:
            pass

    with event.install_listener("numba:compile", FirstCompile()):
        if compiling():
            first()
        yield


_announcers: list[Callable[[], object]] = []  # called when a kernel `announced` loads starts compiling


def announce_compiling_to(started: Callable[[], object]) -> None:
    """Have `started()` called when kernels used in an `announced` block begin compiling (the
    command line says so on stderr: the first run on a machine otherwise looks like a hang)."""
    _announcers.append(started)


@contextmanager
def announced() -> Iterator[None]:
    """`on_compiling` with the announcers of `announce_compiling_to`; nothing when there are none."""
    if not _announcers:
        yield
        return
    with on_compiling(lambda: [fn() for fn in list(_announcers)]):
        yield


def status() -> str:
    """One line for the About box: numba's version and whether the kernels are used (numba is
    not imported for it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("numba")
    except PackageNotFoundError:
        return "not installed (plain Python paths)"
    if os.environ.get("TOKVIZ_JIT", "1") == "0":
        return f"{v}, switched off (TOKVIZ_JIT=0)"
    if _numba_ok is False:
        return f"{v}, does not load here (plain Python paths)"
    return f"{v}, compiled kernels on"
