"""Screenshots of a loaded pretrained tokenizer, for ``tokviz screenshot``.

When GPT-2's files are in ``../shared/vocab`` (next to the project), opens them as the current
model, scrubs the timeline to a step, traces a word, filters the vocabulary and runs the glitch
finder, then writes ``pretrained-window-<theme>.png`` and one PNG per involved dock. Without the
files it writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tokviz.engine.samples import sample

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
    if not window.script.open_tokenizer(GPT2) or window.script.wait_for_tokenizer(60_000) != "opened":
        return []
    gp = window.script.panel("glitches")
    if gp.run():
        window.script.wait_for({"done": [gp.report_ready]}, 120_000)
    window.docks.dock("glitches").raise_()
    gp.select_id(GLITCH)  # its merge tree, and the step that formed it
    window.step_model.set_step(STEP)
    window.timeline_panel.refresh()
    window.timeline_panel.trace("tokenization")
    window.script.select_panel("timeline")
    vp = window.vocab_panel
    vp.set_query("ing$", regex=True, sort="length")
    deadline = time.monotonic() + 30
    while vp.is_busy and time.monotonic() < deadline:
        settle()
    vp.table.scrollToTop()
    window.docks.dock("vocabulary").raise_()
    settle()
    written = []
    for name, widget in (("window", window), ("timeline", window.docks.dock("timeline")),
                         ("vocabulary", window.docks.dock("vocabulary")), ("glitches", window.docks.dock("glitches")),
                         ("token_view", window.docks.dock("token_view"))):
        if widget is not window:
            widget.raise_()
            settle()
        path = out_dir / f"pretrained-{name}-{theme}.png"
        if not widget.grab().save(str(path)):
            raise OSError(f"cannot write {path}")
        written.append(path)
    return written
