"""``tokviz screenshot``: open the window offscreen, load a sample, train, and save PNGs.

Writes ``window-<theme>.png`` and ``<panel id>-<theme>.png`` for every docked panel, so new panels
appear in the set without changes here. Uses throw-away settings (never the user's).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QApplication

from tokviz.core import TrainSettings
from tokviz.engine.settings import AppSettings

SIZE = (1280, 800)
SAMPLE = "english-prose"
SETTINGS = TrainSettings(vocab_size=600)
SELECTED_TOKEN = 300


def _settle(app: QApplication, rounds: int = 5) -> None:
    for _ in range(rounds):
        app.processEvents()


def take_screenshots(out_dir: Path, *, theme: str, sizes=None) -> list[Path]:
    """Render and save the screenshots (the workspaces at each of `sizes`, default 1280x800 and
    1920x1080); returns the files written."""
    from tokviz.app.main_window import MainWindow

    from .workspaces import DEFAULT_SIZES, take_welcome_screenshot, take_workspace_screenshots

    app = QApplication.instance()
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="tokviz-shots-") as tmp:
        window = MainWindow(AppSettings.in_folder(tmp), load_default_sample=False)  # no first-run screen
        sizes = tuple(sizes or DEFAULT_SIZES)
        settle = lambda: _settle(app, 10)  # noqa: E731
        try:
            window.script.set_theme(theme)
            window.resize(*SIZE)
            window.show()
            window.script.load_sample(SAMPLE)
            _settle(app)
            if not window.script.start_training(SETTINGS):
                raise RuntimeError("training could not start")
            outcome = window.script.wait_for_training(120_000)
            if outcome != "finished":
                raise RuntimeError(f"training ended with {outcome!r}")
            for panel in window.docks.panels():  # a panel may prepare a richer view (train embeddings)
                prepare = getattr(panel, "prepare_screenshot", None)
                if callable(prepare):
                    prepare()
            table = window.vocab_panel.table
            row = window.vocab_model.row_of_id(SELECTED_TOKEN)
            if row is not None:
                table.selectionModel().select(
                    window.vocab_model.index(row, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
                )
                table.scrollTo(window.vocab_model.index(row, 0), table.ScrollHint.PositionAtCenter)
            window.corpus_panel.editor.setFocus()
            _settle(app, 10)
            shots = [("window", window)] + [(pid, window.docks.dock(pid)) for pid in window.docks.panel_ids()]
            for _name, widget in shots[1:]:  # a dock behind another tab has a stale size until
                widget.raise_()  # it is brought to the front (and the first tab may never have been)
            for pid in ("token_view", "training", "vocabulary"):  # the window shot: the default tabs in front
                window.docks.dock(pid).raise_()
            _settle(app, 5)
            for name, widget in shots:
                if widget is not window:
                    widget.raise_()
                    _settle(app, 5)
                path = out_dir / f"{name}-{theme}.png"
                if not widget.grab().save(str(path)):
                    raise OSError(f"cannot write {path}")
                written.append(path)
            for pid in window.docks.panel_ids():  # extra looks a panel offers (high contrast)
                variants = getattr(window.docks.panel(pid), "screenshot_variants", None)
                for suffix, apply in (variants() if callable(variants) else []):
                    apply()
                    _settle(app, 10)
                    path = out_dir / f"{pid}-{suffix}-{theme}.png"
                    if not window.docks.dock(pid).grab().save(str(path)):
                        raise OSError(f"cannot write {path}")
                    written.append(path)
            # the workspaces on a trained model: Learn and Present now, the others once the Compare
            # and Chat panels have something to show (below)
            written += take_workspace_screenshots(window, out_dir, theme, settle, keys=["learn", "present"],
                                                  sizes=sizes)
            written += take_welcome_screenshot(window, out_dir, theme, settle)
            from .presenter import take_presenter_screenshots  # presenter mode

            written += take_presenter_screenshots(window, out_dir, theme, lambda: _settle(app, 10))
            from .pretrained import take_pretrained_screenshots  # GPT-2 loaded

            written += take_pretrained_screenshots(window, out_dir, theme, lambda: _settle(app, 10))
            from .compare import take_compare_screenshots  # efficiency metrics per language

            written += take_compare_screenshots(window, out_dir, theme, lambda: _settle(app, 10))
            from .chat import take_chat_screenshots  # chat templates (DeepSeek V3)

            written += take_chat_screenshots(window, out_dir, theme, lambda: _settle(app, 10))
            written += take_workspace_screenshots(window, out_dir, theme, settle,
                                                  keys=["inspect", "compare", "chat"], sizes=sizes)
            from .algorithms import take_algorithm_screenshots  # WordPiece, Unigram

            written += take_algorithm_screenshots(window, out_dir, theme, lambda: _settle(app, 10))
            from .lessons import take_lesson_screenshots  # guided lessons: last (new corpora)

            written += take_lesson_screenshots(window, out_dir, theme, lambda: _settle(app, 10))
        finally:
            window.close()
            window.dispose()
            _settle(app)
    return written
