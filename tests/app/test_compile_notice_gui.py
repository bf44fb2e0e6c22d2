"""The window names the first training's wait for compiled kernels: the status bar and the
training panel say "Compiling fast kernels, once per machine: N s" while numba compiles (a cold
cache, stood in for by numba's compile event held open), then the usual progress and outcome."""

from __future__ import annotations

import pytest

from tests.engine.training.test_compile_notice import SETTINGS, TEXT, cold_cache_warm_up
from tokviz.core import jit

pytestmark = pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")

NOTICE = "Compiling fast kernels, once per machine: "


def test_the_window_says_it_compiles_kernels_then_clears_it(window, qtbot, monkeypatch):
    release = cold_cache_warm_up(monkeypatch)
    window.script.set_corpus_text(TEXT, word_counts=False)
    try:
        assert window.script.start_training(SETTINGS)
        status, summary = window.training_status, window.training_panel.summary
        qtbot.waitUntil(lambda: status.text.startswith(NOTICE) and summary.text().startswith(NOTICE),
                        timeout=30_000)
        assert status.text.endswith(" s")
    finally:
        release.set()
    assert window.script.wait_for_training(60_000) == "finished"
    assert NOTICE not in status.text and NOTICE not in summary.text()
    assert status.text.startswith("Trained ")
