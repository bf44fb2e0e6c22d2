"""Warming an algorithm up on a thread of its own (`tokviz.engine.training.warm_up`): once per
process, only for algorithms that have compiled code to load, and never an error."""

from __future__ import annotations

import threading
from dataclasses import replace

from tokviz.core import registry
from tokviz.engine.training.warm_up import warm_up_in_background


# An algorithm of the tests' own, with Unigram's spec: a window an earlier test left behind may
# still warm Unigram itself up from a timer while this test's fixtures process events.
KERNELS = "test-kernels"


def test_an_algorithm_with_kernels_is_warmed_once_on_a_thread_of_its_own(monkeypatch, warm_ups_on):
    ran: list[str] = []
    monkeypatch.setitem(registry.SPECS, KERNELS,
                        replace(registry.SPECS["unigram"], warm_up=lambda: ran.append(threading.current_thread().name)))
    thread = warm_up_in_background(KERNELS)
    assert thread is not None and thread.daemon
    thread.join(30)
    assert ran == [f"tokviz-warm-up-{KERNELS}"]
    assert warm_up_in_background(KERNELS) is None  # once per process
    assert warm_up_in_background("bpe") is None and warm_up_in_background("boundless") is None  # nothing to load
    assert warm_up_in_background("no such algorithm") is None


def test_a_failing_warm_up_is_only_a_missed_head_start(monkeypatch, warm_ups_on):
    def fails() -> None:
        raise RuntimeError("numba is broken here")

    monkeypatch.setitem(registry.SPECS, KERNELS, replace(registry.SPECS["unigram"], warm_up=fails))
    errors: list = []
    monkeypatch.setattr(threading, "excepthook", errors.append)
    thread = warm_up_in_background(KERNELS)
    thread.join(30)
    assert errors == [] and not thread.is_alive()

