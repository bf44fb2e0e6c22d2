"""A training whose algorithm has compiled kernels names the wait while numba compiles them (the
first run on a machine): a ``compiling`` stage whose seconds tick, then the usual stages. The
warm-up stands in for a cold numba cache by holding numba's own compile event open (the real
kernels take minutes to compile); one that loads from the cache says nothing."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from tokviz.core import jit, registry
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.engine.training.engine import STAGE_COMPILING, STAGE_TRAINING, CorpusInput, TrainingEngine
from tokviz.panels.training.status import format_progress

pytestmark = pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")

TEXT = "hug pug hugs bun buns hugging pun " * 20
SETTINGS = UnigramSettings(vocab_size=30, seed_min_count=1)


@pytest.fixture
def engine(qtbot):
    e = TrainingEngine()
    yield e
    assert e.shutdown(), "threads did not stop"


def cold_cache_warm_up(monkeypatch) -> threading.Event:
    """Make Unigram's warm-up a compilation that lasts until the returned event is set."""
    from numba.core import event

    release = threading.Event()

    def warm_up(**_) -> None:
        with event.trigger_event("numba:compile"):
            release.wait(60)

    monkeypatch.setitem(registry.SPECS, "unigram", replace(registry.SPECS["unigram"], warm_up=warm_up))
    return release


def test_compiling_kernels_is_named_with_ticking_seconds_then_cleared(engine, qtbot, monkeypatch):
    release = cold_cache_warm_up(monkeypatch)
    progress = []
    engine.progress_changed.connect(progress.append)
    engine.start(SETTINGS, CorpusInput(TEXT))

    def compiling() -> list:
        return [p for p in progress if p.stage == STAGE_COMPILING]

    qtbot.waitUntil(lambda: len({round(p.stage_elapsed, 1) for p in compiling()}) >= 2, timeout=30_000)
    assert format_progress(compiling()[0]).startswith("Compiling fast kernels, once per machine: ")
    assert engine.is_running and engine.merges_done == 0
    release.set()
    with qtbot.waitSignal(engine.finished, timeout=60_000):
        pass
    stages = [p.stage for p in progress]
    first = stages.index(STAGE_COMPILING)
    assert STAGE_COMPILING not in stages[stages.index(STAGE_TRAINING):]  # cleared once training runs
    assert stages[first:].count(STAGE_COMPILING) == len(compiling())
    assert "Compiling" not in format_progress(progress[-1])


def test_kernels_loaded_from_the_cache_say_nothing(engine, qtbot, monkeypatch):
    monkeypatch.setitem(registry.SPECS, "unigram", replace(registry.SPECS["unigram"], warm_up=lambda **_: None))
    progress = []
    engine.progress_changed.connect(progress.append)
    with qtbot.waitSignal(engine.finished, timeout=60_000):
        engine.start(SETTINGS, CorpusInput(TEXT))
    assert STAGE_COMPILING not in {p.stage for p in progress}


def test_cancel_while_compiling_is_not_held_up_by_the_compilation(engine, qtbot, monkeypatch):
    release = cold_cache_warm_up(monkeypatch)
    progress = []
    engine.progress_changed.connect(progress.append)
    engine.start(SETTINGS, CorpusInput(TEXT))
    qtbot.waitUntil(lambda: any(p.stage == STAGE_COMPILING for p in progress), timeout=30_000)
    try:
        with qtbot.waitSignal(engine.cancelled, timeout=10_000):
            engine.cancel()
    finally:
        release.set()
