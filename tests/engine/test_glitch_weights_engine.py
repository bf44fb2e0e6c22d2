"""`WeightsEngine` reads a model's weights off the GUI thread (in a forked child where it can, else on
its worker thread) and ends with exactly one of finished, cancelled or failed."""

from __future__ import annotations

import numpy as np
import pytest

from tests.core.weights.planted import recall, write_model
from tokviz.engine import glitch_finder
from tokviz.engine.glitch_finder import WeightsEngine


@pytest.mark.parametrize("forked", [True, False])
def test_the_evidence_arrives_in_a_child_or_on_the_thread(qtbot, tmp_path, monkeypatch, forked):
    if not forked:
        monkeypatch.setattr(glitch_finder, "can_fork", lambda: False)
    p = write_model(tmp_path / "m.safetensors", tied=False)
    engine = WeightsEngine()
    with qtbot.waitSignal(engine.finished, timeout=60_000) as done:
        engine.load(str(p.path), None)
    ev = done.args[0]
    assert ev.n_rows == 2000 and not ev.tied and ev.cosine is None  # no tokenizer, no reference: norms only
    assert recall(np.argsort(ev.indicator).tolist(), p.planted, p.reference) >= 0.9
    engine.shutdown()


@pytest.mark.parametrize("forked", [True, False])
def test_a_bad_file_fails_with_its_own_words(qtbot, tmp_path, monkeypatch, forked):
    if not forked:
        monkeypatch.setattr(glitch_finder, "can_fork", lambda: False)
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    engine = WeightsEngine()
    with qtbot.waitSignal(engine.failed, timeout=60_000) as failed:
        engine.load(str(bad), None)
    assert "the header says it is 16 bytes long" in failed.args[0] and "WeightsError" not in failed.args[0]
    engine.shutdown()


def test_a_cancelled_read_reports_cancelled(qtbot, tmp_path, monkeypatch):
    def endless(path, tokenizer, *, should_stop, progress):  # a read that never ends by itself
        import threading

        while not should_stop():
            threading.Event().wait(0.005)
        from tokviz.core import Cancelled

        raise Cancelled()

    monkeypatch.setattr(glitch_finder, "can_fork", lambda: False)
    monkeypatch.setattr(glitch_finder, "read_weights", endless)
    engine = WeightsEngine()
    with qtbot.waitSignal(engine.started, timeout=10_000):
        engine.load("unused", None)
    with qtbot.waitSignal(engine.cancelled, timeout=10_000):
        assert engine.cancel()
    assert engine.wait_idle(10_000)
    engine.shutdown()
