"""Screenshots of a loaded pretrained tokenizer, for ``tokviz screenshot``.

When GPT-2's files are in ``../shared/vocab`` (next to the project), opens them as the current
model, scrubs the timeline to a step, traces a word, filters the vocabulary and runs the glitch
finder, then writes ``pretrained-window-<theme>.png`` and one PNG per involved panel (shown alone).
A step that fails is an error. Without the files it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tokviz.engine.samples import sample

from .capture import WINDOW_SIZE, ShotError, save_panel_shot, save_shot, wait_or_fail

SAMPLE = "english-prose"
SHARED_VOCAB = Path(__file__).resolve().parents[4] / "shared" / "vocab"
GPT2 = SHARED_VOCAB / "gpt2-data-gym" / "vocab.bpe"
STEP = 2_000
GLITCH = 43453  # " SolidGoldMagikarp"


def take_pretrained_screenshots(window, out_dir: Path, theme: str, settle: Callable[[], None]) -> list[Path]:
    if not GPT2.is_file():
        return []
    s = sample(SAMPLE)
    window.corpus_panel.set_text(s.read(), title=f"Sample: {s.title}", word_counts=False)
    if not window.script.open_tokenizer(GPT2):
        raise ShotError(f"cannot open {GPT2}")
    outcome = window.script.wait_for_tokenizer(600_000)
    if outcome != "opened":
        raise ShotError(f"opening GPT-2 ended with {outcome!r}")
    gp = window.script.panel("glitches")
    if not gp.run():
        raise ShotError("the glitch finder could not start on GPT-2")
    wait_or_fail({"done": [gp.report_ready]}, "the glitch finder on GPT-2")
    if gp.outcome != "finished":
        raise ShotError(f"the glitch finder on GPT-2 ended with {gp.outcome!r}")
    window.docks.dock("glitches").raise_()
    gp.select_id(GLITCH)  # its merge tree, and the step that formed it
    window.step_model.set_step(STEP)
    window.timeline_panel.refresh()
    window.timeline_panel.trace("tokenization")
    window.script.select_panel("timeline")
    vp = window.vocab_panel
    vp.set_query("ing$", regex=True, sort="length")
    engines = (vp.index_engine, vp.query_engine)
    while vp.is_busy:  # indexing GPT-2's vocabulary, then the query
        wait_or_fail({"done": [e.finished for e in engines], "failed": [e.failed for e in engines]},
                     "the vocabulary search")
    vp.table.scrollToTop()
    window.docks.dock("vocabulary").raise_()
    window.token_view_panel.prepare_screenshot()
    settle()
    written = [save_shot(window, out_dir / f"pretrained-window-{theme}.png", fit=WINDOW_SIZE)]
    for pid in ("timeline", "vocabulary", "glitches", "token_view"):
        written.append(save_panel_shot(window, pid, out_dir / f"pretrained-{pid}-{theme}.png", settle))
    return written
