"""Screenshots of the training methods of recent papers, for ``tokviz screenshot``: one picture per
method showing what is special about it, each the panel alone.

- ``timeline-superbpe-<theme>.png``: the chart, bytes per token climbing past the transition line;
  ``token_view-superbpe-<theme>.png``: a sentence with its superwords barred;
- ``timeline-boundless-<theme>.png``: the merge table's Kind column at a supermerge, and its note;
- ``timeline-parity-aware-<theme>.png``: the Gini of tokens per language falling, the language
  merge k served in the caption (on the parity lesson's parallel text: eight languages);
- ``token_view-dropout-<theme>.png``: the Samples tab, one word's BPE-dropout segmentations.

Runs in a window of its own on the English prose sample (the parity run last: it replaces the
corpus), so the runs, corpus and layout it leaves never reach the later pictures. A run that does
not finish is a `ShotError`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from tokviz.core.bpe.timeline import TrainSettings
from tokviz.core.registry import algorithm_of, settings_from_json
from tokviz.engine.settings import AppSettings

from .capture import WINDOW_SIZE, ShotError, save_panel_shot, wait_or_fail

SUPERBPE = {"algorithm": "superbpe", "merges": 300, "transition": 240}  # as the SuperBPE lesson
BOUNDLESS = {"algorithm": "boundless", "merges": 300}
PARITY = {"algorithm": "parity-aware", "merges": 120, "min_count": 1}
DROPOUT_BPE = TrainSettings(merges=400)
SENTENCE = ("Alice was not a bit hurt, and she jumped up on to her feet in a moment: she was a little "
            "curious of the Rabbit, and she went on to see what it was.")
DROPOUT_WORD = " Rabbit"
SUPERMERGE_SHOWN = 6  # the boundless picture stops at this supermerge (0-based): two of them in a row
PARITY_STEP = 40


def _train(window, settings) -> object:
    what = algorithm_of(settings)
    if not window.script.start_training(settings):
        raise ShotError(f"{what} training could not start")
    outcome = window.script.wait_for_training(600_000)
    if outcome != "finished":
        raise ShotError(f"{what} training ended with {outcome!r}")
    return window.script.timeline


def _show_step(window, k: int, settle: Callable[[], None]) -> None:
    window.resize(*WINDOW_SIZE)  # what an earlier run's views asked for (Unigram's are wide) is given back
    window.step_model.set_step(k)
    window.timeline_panel.refresh()
    window.token_view_panel.prepare_screenshot()
    settle()


def take_method_screenshots_apart(out_dir: Path, theme: str, settle: Callable[[], None], *,
                                  sample: str) -> list[Path]:
    """`take_method_screenshots` in a fresh window (throw-away settings, `theme`, the `sample`
    loaded), closed afterwards."""
    from tokviz.app.main_window import MainWindow

    with tempfile.TemporaryDirectory(prefix="tokviz-shots-methods-") as tmp:
        window = MainWindow(AppSettings.in_folder(tmp), load_default_sample=False)
        try:
            window.script.set_theme(theme)
            window.resize(*WINDOW_SIZE)
            window.show()
            window.script.load_sample(sample)
            settle()
            return take_method_screenshots(window, out_dir, theme, settle)
        finally:
            window.close()
            window.dispose()
            settle()


def take_method_screenshots(window, out_dir: Path, theme: str, settle: Callable[[], None]) -> list[Path]:
    """The pictures of the module docstring, taken in `window` (its corpus replaced at the end)."""
    written: list[Path] = []
    timeline, view = window.timeline_panel, window.token_view_panel
    view.set_text(SENTENCE)

    tl = _train(window, settings_from_json(SUPERBPE))
    timeline.tabs.setCurrentIndex(0)  # the chart: the transition line and bytes per token
    _show_step(window, tl.n_merges, settle)
    written.append(save_panel_shot(window, "timeline", out_dir / f"timeline-superbpe-{theme}.png", settle))
    view.tabs.setCurrentWidget(view.compare)  # the step and the final rows, both barred
    settle()
    view.compare.end_flash()  # the final row is new: its header is lit for a moment
    view.compare.verticalScrollBar().setValue(0)  # from the first row's header
    written.append(save_panel_shot(window, "token_view", out_dir / f"token_view-superbpe-{theme}.png", settle))

    tl = _train(window, settings_from_json(BOUNDLESS))
    supers = [r for r, kind in enumerate(tl.kinds()) if kind == "supermerge"]
    if not supers:
        raise ShotError("the BoundlessBPE run made no supermerge")
    timeline.tabs.setCurrentIndex(0)
    _show_step(window, supers[min(SUPERMERGE_SHOWN, len(supers) - 1)] + 1, settle)
    written.append(save_panel_shot(window, "timeline", out_dir / f"timeline-boundless-{theme}.png", settle))

    _train(window, DROPOUT_BPE)
    _show_step(window, window.step_model.n_steps, settle)
    samples = view.samples
    view.tabs.setCurrentWidget(samples)
    view.splitter.setSizes([60, 90, 600])  # the text is one line: the room goes to the samples table
    settle()
    if samples.word() != DROPOUT_WORD or not samples.shares:  # a new word: new draws to wait for
        samples.set_word(DROPOUT_WORD)
        wait_or_fail({"done": [samples.shares_shown]}, "the dropout samples")
    settle()
    written.append(save_panel_shot(window, "token_view", out_dir / f"token_view-dropout-{theme}.png", settle))
    view.tabs.setCurrentWidget(view.compare)

    from tokviz.core.lessons.files import find_lesson

    parallel = find_lesson("parity-aware").corpus.read()  # eight languages, one document each
    if not window.script.set_corpus_text(parallel, title="UDHR, article 1, eight languages"):
        raise ShotError("the parallel text could not be loaded")
    tl = _train(window, settings_from_json(PARITY))
    timeline.tabs.setCurrentIndex(0)
    _show_step(window, min(PARITY_STEP, tl.n_merges), settle)
    written.append(save_panel_shot(window, "timeline", out_dir / f"timeline-parity-aware-{theme}.png", settle))
    window.resize(*WINDOW_SIZE)
    settle()
    return written
