"""`paused_gc`: each item is computed with the cyclic collector paused, the caller runs with it as
it was, and a failure or a collector the caller had switched off is left as it was."""

from __future__ import annotations

import gc

import pytest

from tokviz.core.algorithm.gc_pause import paused_gc


def test_items_are_computed_paused_and_handed_over_enabled():
    seen = []

    def items():
        for i in range(3):
            seen.append(gc.isenabled())
            yield i

    out = []
    for x in paused_gc(items()):
        out.append((x, gc.isenabled()))
    assert seen == [False, False, False]
    assert out == [(0, True), (1, True), (2, True)] and gc.isenabled()


def test_a_failure_restores_the_collector():
    def items():
        yield 1
        raise RuntimeError("cancelled")

    it = paused_gc(items())
    assert next(it) == 1
    with pytest.raises(RuntimeError, match="cancelled"):
        next(it)
    assert gc.isenabled()


def test_a_collector_switched_off_stays_off():
    gc.disable()
    try:
        assert list(paused_gc(iter([1, 2]))) == [1, 2]
        assert not gc.isenabled()
    finally:
        gc.enable()
