"""Loading numba's cached kernels without readying its compiler.

numba loads a kernel from its disk cache in `Cache.load_overload`, which first refreshes the
whole target context: it imports and registers every implementation numba can compile (NumPy's
array functions, typed containers, random generators, ...) and refreshes the typing context.
That is what compiling needs; compiled code loaded from the cache needs only the runtime (NRT)
it calls into. The refresh is about 0.1 s of CPU, paid by every process on its first kernel (a
third of what using the kernels costs a process; importing numba is most of the rest).

`quicken()` replaces `load_overload` with `quick_loader`'s: initialize the runtime, then load.
A cache miss goes on to numba's compiler as before, which refreshes both contexts itself before
it compiles (`numba.core.compiler.CompilerBase`); a load that fails without the refresh is made
again by numba's own method, refresh included. Applied only where numba has the parts this
relies on; elsewhere nothing changes.
What this leaves out: whether kernels are used at all (`tokviz.core.jit`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_lock = threading.Lock()
MARK = "_tokviz_quick"  # set on the replacement: never wrapped twice


def quick_loader(original: Callable, initialize: Callable[[object], None]) -> Callable:
    """A `Cache.load_overload` that calls `initialize(target_context)` (the runtime) and loads,
    and calls `original` (which refreshes, then loads) when that raises."""

    def load_overload(self, sig, target_context):
        try:
            initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 - numba's own way, with the refresh, decides
            return original(self, sig, target_context)

    load_overload.__doc__ = original.__doc__
    setattr(load_overload, MARK, True)
    return load_overload


def quicken() -> bool:
    """Have numba load cached kernels without refreshing its compiler's contexts (module doc);
    True when that is in place (now or before), False where numba lacks a part it relies on."""
    try:
        from numba.core import caching
        from numba.core.runtime import nrt
    except ImportError:
        return False
    cache = getattr(caching, "Cache", None)
    initialize = getattr(getattr(nrt, "rtsys", None), "initialize", None)
    with _lock:
        original = getattr(cache, "load_overload", None)
        if getattr(original, MARK, False):
            return True
        if (original is None or initialize is None or not hasattr(cache, "_load_overload")
                or not hasattr(cache, "_guard_against_spurious_io_errors")):
            return False
        cache.load_overload = quick_loader(original, initialize)
    return True
