"""Loading an algorithm's compiled code before its first training, on a thread of its own.

With numba installed, the Unigram and SuperBPE trainers run compiled kernels, and a process pays
about 0.4 s the first time it uses them (importing numba, loading the kernels from numba's cache).
The window starts that as soon as such an algorithm is chosen in the training panel, while the user
is still setting up, so the training they start does not wait for it (`AlgorithmSpec.warm_up` says
what to load).
Each algorithm is warmed once per process; a warm-up that fails changes nothing (the training
loads what it needs itself, or takes its plain path).

Engine layer: tokviz.core only (a plain thread: it emits nothing).
"""

from __future__ import annotations

import threading

from tokviz.core.registry import SPECS

_started: set[str] = set()
_lock = threading.Lock()


def warm_up_in_background(name: str) -> threading.Thread | None:
    """Start the warm-up of algorithm `name` on a daemon thread, unless it has none or was
    started before in this process; the thread, or None."""
    spec = SPECS.get(name)
    if spec is None or spec.warm_up is None:
        return None
    with _lock:
        if name in _started:
            return None
        _started.add(name)
    thread = threading.Thread(target=_run, args=(spec.warm_up,), name=f"tokviz-warm-up-{name}", daemon=True)
    thread.start()
    return thread


def _run(warm_up) -> None:
    try:
        warm_up()
    except Exception:  # noqa: BLE001 - only a head start: the training itself reports real problems
        pass
