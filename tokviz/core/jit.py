"""Optional compiled kernels: numba, when it is installed (the ``fast`` extra) and not switched off.

A few hot loops (the SentencePiece Unigram Viterbi) have a numba version that runs the same
arithmetic compiled; everything else, and everything on a bare install, is plain Python + numpy.
`enabled()` says whether the compiled versions are used: numba imports, and the environment
variable ``TOKVIZ_JIT`` is not ``0`` (the tests and benchmarks set it to compare both paths).
Compiled functions are cached on disk by numba (``cache=True``): the first use on a machine
compiles them (seconds, minutes on a loaded machine), later processes load them; `on_compiling`
tells a caller when that first compilation starts, so it can say why it waits.

What this leaves out: the kernels themselves (next to the code they speed up).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

_numba_ok: bool | None = None


def enabled() -> bool:
    """Whether compiled kernels are used (numba installed and ``TOKVIZ_JIT`` not ``0``)."""
    global _numba_ok
    if os.environ.get("TOKVIZ_JIT", "1") == "0":
        return False
    if _numba_ok is None:
        try:
            import numba  # noqa: F401
        except Exception:  # not installed, or broken against this numpy: the plain path
            _numba_ok = False
        else:
            _numba_ok = True
    return _numba_ok


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


@contextmanager
def on_compiling(started: Callable[[], object]) -> Iterator[None]:
    """Within the block, call `started()` once, when numba begins compiling a function (a kernel
    missing from its disk cache), not when it loads one from the cache. Does nothing when the
    kernels are off. Uses numba's event API (``numba:compile`` fires only for a real compilation)."""
    if not enabled():
        yield
        return
    from numba.core import event  # numba imports: `enabled` said it does

    class FirstCompile(event.Listener):
        fired = False

        def on_start(self, ev) -> None:
            if not self.fired:
                self.fired = True
                started()

        def on_end(self, ev) -> None:
            pass

    with event.install_listener("numba:compile", FirstCompile()):
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
