"""What `tokviz.core.jit` knows about numba compiling: a compilation under way on any thread
(`compiling`), and `on_compiling` telling a caller once, also about a compilation that started on
another thread before the caller began to wait. numba's own compile events stand for a cold cache
(a real compilation of the kernels takes minutes)."""

from __future__ import annotations

import threading

import pytest

from tokviz.core import jit

pytestmark = pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")


def _hold_a_compilation(started: threading.Event, release: threading.Event) -> threading.Thread:
    """A thread inside numba's ``numba:compile`` event until `release` is set."""
    from numba.core import event

    def compile_slowly() -> None:
        with event.trigger_event("numba:compile"):
            started.set()
            release.wait(30)

    thread = threading.Thread(target=compile_slowly, daemon=True)
    thread.start()
    return thread


def test_a_compilation_on_another_thread_is_seen_at_once():
    started, release = threading.Event(), threading.Event()
    assert not jit.compiling()
    thread = _hold_a_compilation(started, release)
    try:
        assert started.wait(30)
        assert jit.compiling()
        said: list[str] = []
        with jit.on_compiling(lambda: said.append("compiling")):
            assert said == ["compiling"]  # not only when the next function starts compiling
    finally:
        release.set()
        thread.join(30)
    assert not jit.compiling()


def test_on_compiling_says_it_once_for_a_real_compilation_and_not_for_none():
    import numba

    said: list[str] = []
    with jit.on_compiling(lambda: said.append("compiling")):
        numba.njit(cache=False)(lambda x: x + 1)(1)
        numba.njit(cache=False)(lambda x: x + 2)(1)
    assert said == ["compiling"]
    with jit.on_compiling(lambda: said.append("again")):
        pass
    assert said == ["compiling"] and not jit.compiling()
