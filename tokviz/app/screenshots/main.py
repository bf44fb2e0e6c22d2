"""``tokviz screenshot``: open the window offscreen, load a sample, train, and save PNGs.

Writes ``window-<theme>.png`` and ``<panel id>-<theme>.png`` for every docked panel, each shown
alone at `capture.PANEL_SIZE` with its content ready (new panels appear in the set without changes
here; the Compare and Lesson panels are shot where they have something to show), then the
workspaces, presenter mode, real tokenizers, other algorithms, the training methods of recent
papers (`methods`) and the lessons. Every wait is on
the signal that says the work is done; a run that fails or never ends, a shot that still shows a
progress bar, a picture under `capture.MIN_SIZE` or two identical pictures make it fail
(`capture.ShotError`). Uses throw-away settings (never the user's).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QApplication

from tokviz.core import TrainSettings
from tokviz.engine.settings import AppSettings

from .capture import WINDOW_SIZE, ShotError, check_shots, save_panel_shot, save_shot, wait_or_fail

SIZE = WINDOW_SIZE
SAMPLE = "english-prose"
SETTINGS = TrainSettings(vocab_size=600)
SELECTED_TOKEN = 300
SHOT_ELSEWHERE = {"compare", "lesson"}  # empty until a comparison or a lesson runs: shot then


def _settle(app: QApplication, rounds: int = 5) -> None:
    for _ in range(rounds):
        app.processEvents()


def take_screenshots(out_dir: Path, *, theme: str, sizes=None) -> list[Path]:
    """Render and save the screenshots (the workspaces at each of `sizes`, default 1280x800 and
    1920x1080); returns the files written, or raises `ShotError`."""
    from tokviz.app.main_window import MainWindow

    from .workspaces import DEFAULT_SIZES, take_welcome_screenshot, take_workspace_screenshots

    app = QApplication.instance()
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="tokviz-shots-") as tmp:
        window = MainWindow(AppSettings.in_folder(tmp), load_default_sample=False)  # no first-run screen
        sizes = tuple(sizes or DEFAULT_SIZES)
        settle = lambda: _settle(app, 10)
        try:
            window.script.set_theme(theme)
            window.resize(*SIZE)
            window.show()
            window.script.load_sample(SAMPLE)
            _settle(app)
            _train(window)
            _prepare_panels(window)
            _settle(app, 10)
            written += _take_panel_screenshots(window, out_dir, theme, settle)
            written += _take_variant_screenshots(window, out_dir, theme, settle)
            # the workspaces on a trained model: Learn and Present now, the others once the Compare
            # and Chat panels have something to show (below)
            written += take_workspace_screenshots(window, out_dir, theme, settle, keys=["learn", "present"],
                                                  sizes=sizes)
            written += take_welcome_screenshot(window, out_dir, theme, settle)
            from .presenter import take_presenter_screenshots  # presenter mode

            written += take_presenter_screenshots(window, out_dir, theme, settle)
            from .pretrained import take_pretrained_screenshots  # GPT-2 loaded

            written += take_pretrained_screenshots(window, out_dir, theme, settle)
            from .compare import take_compare_screenshots  # efficiency metrics per language

            written += take_compare_screenshots(window, out_dir, theme, settle)
            from .chat import take_chat_screenshots  # chat templates (DeepSeek V3)

            written += take_chat_screenshots(window, out_dir, theme, settle)
            written += take_workspace_screenshots(window, out_dir, theme, settle,
                                                  keys=["inspect", "compare", "chat"], sizes=sizes)
            from .algorithms import take_algorithm_screenshots  # WordPiece, Unigram

            written += take_algorithm_screenshots(window, out_dir, theme, settle)
            from .methods import take_method_screenshots_apart  # SuperBPE, BoundlessBPE, dropout, parity-aware

            written += take_method_screenshots_apart(out_dir, theme, settle, sample=SAMPLE)
            from .lessons import take_lesson_screenshots  # guided lessons: last (new corpora)

            written += take_lesson_screenshots(window, out_dir, theme, settle, size=SIZE)
        finally:
            window.close()
            window.dispose()
            _settle(app)
    check_shots(written)
    return written


def _train(window) -> None:
    if not window.script.start_training(SETTINGS):
        raise ShotError("training could not start")
    outcome = window.script.wait_for_training(600_000)
    if outcome != "finished":
        raise ShotError(f"training ended with {outcome!r}")


def _prepare_panels(window) -> None:
    """Content in every panel: each panel's own preparation (train embeddings, trace a word), the
    glitch finder run on the trained model, token `SELECTED_TOKEN` selected in the vocabulary."""
    for panel in window.docks.panels():
        prepare = getattr(panel, "prepare_screenshot", None)
        if callable(prepare):
            prepare()
    glitches = window.script.panel("glitches")
    if not glitches.run():
        raise ShotError("the glitch finder could not start on the trained model")
    wait_or_fail({"done": [glitches.report_ready]}, "the glitch finder")
    if glitches.outcome != "finished":
        raise ShotError(f"the glitch finder ended with {glitches.outcome!r}")
    table = window.vocab_panel.table
    row = window.vocab_model.row_of_id(SELECTED_TOKEN)
    if row is not None:
        table.selectionModel().select(
            window.vocab_model.index(row, 0),
            QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
        )
        table.scrollTo(window.vocab_model.index(row, 0), table.ScrollHint.PositionAtCenter)
    window.corpus_panel.editor.setFocus()


def _take_panel_screenshots(window, out_dir: Path, theme: str, settle) -> list[Path]:
    """The window with the default tabs in front, then every panel alone."""
    for pid in ("token_view", "training", "vocabulary"):
        window.docks.dock(pid).raise_()
    settle()
    written = [save_shot(window, out_dir / f"window-{theme}.png", fit=SIZE)]
    for pid in window.docks.panel_ids():
        if pid not in SHOT_ELSEWHERE:
            written.append(save_panel_shot(window, pid, out_dir / f"{pid}-{theme}.png", settle))
    return written


def _take_variant_screenshots(window, out_dir: Path, theme: str, settle) -> list[Path]:
    """Extra looks a panel offers (``screenshot_variants``: the token view's high contrast); the
    token view's own look is put back afterwards, so the later pictures show the default."""
    view = window.token_view_panel
    palette, mode = view.palette_key, view.mode_box.currentIndex()
    written = []
    for pid in window.docks.panel_ids():
        variants = getattr(window.docks.panel(pid), "screenshot_variants", None)
        for suffix, apply in (variants() if callable(variants) else []):
            apply()
            settle()
            written.append(save_panel_shot(window, pid, out_dir / f"{pid}-{suffix}-{theme}.png", settle))
    view.set_palette_key(palette)
    view.mode_box.setCurrentIndex(mode)
    window.timeline_panel.tabs.setCurrentIndex(0)
    settle()
    return written
