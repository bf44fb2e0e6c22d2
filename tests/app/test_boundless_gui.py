"""BoundlessBPE in the window: it trains, the timeline says each step's kind, the token view and
the vocabulary table show the run."""

from __future__ import annotations

import os

from tokviz.core.boundless.timeline import BoundlessSettings, BoundlessTimeline

TEXT = "of the people, by the people, for the people. " * 40 + "First Citizen: speak, speak.\n" * 20


def test_trains_and_the_timeline_names_the_kind(window, qtbot):
    window.script.set_corpus_text(TEXT)
    assert window.script.start_training(BoundlessSettings(merges=30))
    assert window.script.wait_for_training(60_000) == "finished"
    tl = window.step_model.timeline
    assert isinstance(tl, BoundlessTimeline) and tl.n_supermerges > 0
    first_super = next(s.rank for s in tl.steps if s.kind == "supermerge")
    window.timeline_panel.show()
    label = window.timeline_panel.cand_label
    window.step_model.set_step(first_super + 1)
    qtbot.waitUntil(lambda: "a supermerge: two whole pretokens" in label.text(), timeout=10_000)
    window.step_model.set_step(1)
    qtbot.waitUntil(lambda: "a merge inside a pretoken" in label.text(), timeout=10_000)
    out = os.environ.get("TOKVIZ_SHOTS")
    if out:  # a look at it: TOKVIZ_SHOTS=/tmp/x pytest ...
        window.step_model.set_step(first_super + 1)
        window.grab().save(os.path.join(out, "boundless_window.png"))
