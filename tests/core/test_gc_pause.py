"""`paused_gc`: each item is computed with the cyclic collector paused, the caller runs with it as
it was, and a failure or a collector the caller had switched off is left as it was."""

from __future__ import annotations

import gc

import pytest

from tokviz.core.gc_pause import paused_gc


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


def test_run_pauses_the_collector_once_for_a_collector_free_trainer(monkeypatch):
    """`run()` of WordPiece/Unigram/BPE keeps the collector paused from first step to last (one
    `gc.enable` at the end, not one per step); BoundlessBPE's run leaves it alone; it is on afterwards."""
    import gc

    from tokviz.core import TrainSettings
    from tokviz.core.boundless.timeline import BoundlessSettings
    from tokviz.core.registry import make_training
    from tokviz.core.unigram.timeline import UnigramSettings
    from tokviz.core.wordpiece.timeline import WordPieceSettings

    text = "hug hug pug pun bun hugs " * 50
    enables = []
    real_enable = gc.enable
    monkeypatch.setattr(gc, "enable", lambda: enables.append(1) or real_enable())
    for settings, calls in ((WordPieceSettings(merges=6), 1), (UnigramSettings(vocab_size=20), 1),
                            (TrainSettings(merges=6), 1), (BoundlessSettings(merges=6), 0)):
        enables.clear()
        training = make_training(settings, texts=[text])
        training.prepare()
        steps = training.run().n_steps
        assert steps > 1 and len(enables) == calls, settings
        assert gc.isenabled()


def test_run_lets_a_drained_trainer_go_before_the_collector_is_back():
    """After `run()` of a collector-free trainer its working state (heaps, lattices) is gone, no
    longer alive for the collector to walk; `steps()` then has nothing more to give, and the
    timeline keeps every step."""
    import weakref

    from tokviz.core.registry import make_training
    from tokviz.core.wordpiece.timeline import WordPieceSettings

    training = make_training(WordPieceSettings(merges=6), texts=["hug hug pug pun bun hugs " * 50])
    training.prepare()
    trainer = weakref.ref(training.trainer)
    timeline = training.run()
    assert trainer() is None and training.trainer is None
    assert list(training.steps()) == [] and timeline.n_steps == 6 and timeline.finished


def test_run_calls_each_after_every_step_with_the_collector_still_paused(monkeypatch):
    """`run(each=...)` (the command line's progress bar) is called once per step, inside the one
    pause of a collector-free trainer and after BoundlessBPE's steps too."""
    import gc

    from tokviz.core import TrainSettings
    from tokviz.core.boundless.timeline import BoundlessSettings
    from tokviz.core.registry import make_training
    from tokviz.core.unigram.timeline import UnigramSettings
    from tokviz.core.wordpiece.timeline import WordPieceSettings

    text = "hug hug pug pun bun hugs " * 50
    for settings, paused in ((WordPieceSettings(merges=6), True), (UnigramSettings(vocab_size=20), True),
                             (TrainSettings(merges=6), True), (BoundlessSettings(merges=6), False)):
        training = make_training(settings, texts=[text])
        timeline = training.prepare()
        seen: list[tuple[int, bool]] = []
        training.run(each=lambda: seen.append((timeline.n_steps, gc.isenabled())))
        assert [n for n, _ in seen] == list(range(1, timeline.n_steps + 1)) and len(seen) > 1, settings
        assert all(enabled is not paused for _, enabled in seen), settings
        assert gc.isenabled()
