"""Screenshots of WordPiece and Unigram runs, for ``tokviz screenshot``.

Trains WordPiece, then Unigram, on the sample already in the window and writes, per algorithm,
``timeline-<algorithm>-<theme>.png`` and ``training-<algorithm>-<theme>.png``; for Unigram also
the rounds chart (``timeline-unigram-rounds-<theme>.png``); and the token view comparing the
session's BPE, WordPiece and Unigram runs side by side (``token_view-algorithms-<theme>.png``).
Each is the panel alone; a run that does not finish is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings

from .capture import ShotError, save_panel_shot

WORDPIECE = WordPieceSettings(vocab_size=600)
UNIGRAM = UnigramSettings(vocab_size=500)
WORD = "unbelievable"  # Unigram: several likely segmentations at the last round
TRACE_WORD = "conversations"  # WordPiece: greedy longest match
TOKEN_TEXT = "Tokenizers split unbelievable words into pieces: WordPiece, Unigram and BPE disagree."


def take_algorithm_screenshots(window, out_dir: Path, theme: str, settle: Callable[[], None]) -> list[Path]:
    written: list[Path] = []
    panel = window.timeline_panel
    for settings in (WORDPIECE, UNIGRAM):
        algo = settings.algorithm
        if not window.script.start_training(settings):
            raise ShotError(f"{algo} training could not start")
        outcome = window.script.wait_for_training(600_000)
        if outcome != "finished":
            raise ShotError(f"{algo} training ended with {outcome!r}")
        tl = window.script.timeline
        rounds = not tl.lists_merges  # Unigram: rounds, shown with their own views
        window.step_model.set_step(tl.n_steps if rounds else min(200, tl.n_steps))
        panel.refresh()
        if rounds:
            panel.trace(WORD)
            panel.unigram.segmentations.sample()
            panel.tabs.setCurrentWidget(panel.unigram.segmentations)
        else:
            panel.trace(TRACE_WORD)
            panel.tabs.setCurrentWidget(panel.provenance)
        settle()
        written.append(save_panel_shot(window, "timeline", out_dir / f"timeline-{algo}-{theme}.png", settle))
        if rounds:
            panel.tabs.setCurrentWidget(panel.unigram.chart)
            settle()
            written.append(save_panel_shot(window, "timeline", out_dir / f"timeline-unigram-rounds-{theme}.png",
                                           settle))
        written.append(save_panel_shot(window, "training", out_dir / f"training-{algo}-{theme}.png", settle))
    view = window.token_view_panel
    for model in window.trained_models.models[:-1]:  # earlier runs (BPE, WordPiece) as rows
        view.add_tokenizer(model.tokenizer())
    view.set_text(TOKEN_TEXT)
    view.wait_idle()
    view.splitter.setSizes([60, 160, 500])  # room for the comparison rows
    bar = view.compare.verticalScrollBar()
    bar.setValue(bar.maximum())  # the earlier BPE and WordPiece runs are the last rows
    written.append(save_panel_shot(window, "token_view", out_dir / f"token_view-algorithms-{theme}.png", settle))
    return written
