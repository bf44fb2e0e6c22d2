"""Looking at a token's provenance never changes the model in use: a click on a glitch finding or
a vocabulary token shows its merge tree, while the step (and so what the token view and Compare
encode with) stays put until the user presses "Go to step N"."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.conftest import shared_file
from tokviz.panels.frame_turns import frame_turns

GPT2 = ("vocab", "gpt2-data-gym", "vocab.bpe")
TEXT = "Tokenizers"


def _token_view_ids(window, qtbot) -> list[int]:
    tv = window.token_view_panel
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    return list(tv.result.rows[0].encoding.ids)


def test_a_glitch_or_vocabulary_click_keeps_the_step_and_go_to_step_moves_it(window, qtbot):
    assert window.script.open_tokenizer(str(shared_file(*GPT2)))
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    sm, tl = window.step_model, window.script.timeline
    window.token_view_panel.set_text(TEXT)
    before = _token_view_ids(window, qtbot)
    assert sm.step == tl.n_steps and len(before) == 2  # "Token" + "izers" with every merge
    assert "step 50,000/50,000" in window.token_view_panel.status.text()  # which tokenizer, which step

    gp = window.script.panel("glitches")
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        assert gp.run()
    target = 40240  # "oreAndOnline": merge 39,985
    assert gp.select_id(target)  # as a click on its row
    prov = window.timeline_panel.provenance
    assert prov.token == target
    assert sm.step == tl.n_steps and _token_view_ids(window, qtbot) == before

    other = 11241  # " token", picked in the vocabulary
    assert window.vocab_panel.select_token(other)
    assert prov.token == other
    assert sm.step == tl.n_steps and _token_view_ids(window, qtbot) == before

    made = tl.step_of(other) + 1
    assert prov.goto_button.isVisibleTo(prov) and prov.goto_button.text() == f"Go to step {made:,}"
    qtbot.mouseClick(prov.goto_button, Qt.MouseButton.LeftButton)  # the explicit action
    assert sm.step == made
    assert len(_token_view_ids(window, qtbot)) > len(before)  # fewer merges: more pieces
    assert f"step {made:,}/50,000" in window.token_view_panel.status.text()
    panel = window.timeline_panel  # its views show a moved step one painted frame at a time
    qtbot.waitUntil(lambda: not panel.pacing.pending and frame_turns(panel).waiting == 0, timeout=10_000)
    assert not prov.goto_button.isVisibleTo(prov)  # already there
