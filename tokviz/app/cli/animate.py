"""``tokviz animate MODEL --text ... --from A --to B --out x.gif``: the animation export, offscreen.

Opens the window offscreen with throw-away settings, loads the model, types the text into the
token view, and runs `tokviz.app.classroom.animation.AnimationExporter` (same frames as File > Export
Animation…). Errors exit with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

from tokviz.core import TokvizError
from tokviz.core.io.safe_files import same_file

PANELS = ("timeline", "corpus", "token_view")  # tokviz.app.classroom.animation.TARGETS (not imported: no Qt here)


def add_animate_arguments(a: argparse.ArgumentParser) -> None:
    """``tokviz animate``'s arguments (`tokviz.app.cli.parser` makes its parser)."""
    a.add_argument("model", metavar="MODEL", help="a tokviz model (tokviz train -o) or a tokenizer")
    a.add_argument("--out", required=True, metavar="OUT.gif|FOLDER", help="an animated GIF, or a folder of numbered PNGs")
    a.add_argument("--text", default=None, help="text shown in the token view and the corpus view")
    a.add_argument("--from", dest="first", type=int, default=0, metavar="A", help="the first step (default 0)")
    a.add_argument("--to", dest="last", type=int, default=None, metavar="B", help="default: the last step")
    a.add_argument("--every", type=int, default=1, metavar="N", help="film every Nth step (default 1)")
    a.add_argument("--panel", choices=PANELS, default="token_view", help="what is filmed (default token_view)")
    a.add_argument("--size", default="800x500", metavar="WxH", help="frame size (default 800x500)")
    a.add_argument("--fps", type=float, default=4.0, help="frames per second (default 4)")
    a.add_argument("--no-loop", action="store_true", help="a GIF that plays once")
    a.add_argument("--no-caption", action="store_true", help="no 'step k of n' line under the frames")


class _Collect:
    """Dialogs that never block: errors become the command's error."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def error(self, title: str, message: str) -> None:
        self.errors.append(message)

    def info(self, title: str, message: str) -> None:
        pass

    def ask_save_changes(self, name: str) -> str:
        return "discard"

    def ask_yes_no(self, title: str, message: str) -> bool:
        return False

    def ask_open_replacing(self, message: str) -> bool:
        self.errors.append(message)  # a file that is not UTF-8: the command's error, never a question
        return False


def run_animate(args: argparse.Namespace) -> int:
    m = re.fullmatch(r"(\d+)[xX](\d+)", args.size)
    if m is None:
        raise TokvizError(f"--size {args.size!r}: give WIDTHxHEIGHT, e.g. 800x500")
    if not args.fps > 0:
        raise TokvizError("--fps must be more than 0")
    model = Path(args.model)
    if not model.is_file():
        raise TokvizError(f"{model}: no such file")
    out = Path(args.out)
    if same_file(out, model):
        raise TokvizError(f"--out {out} is the model file; give another name")
    fmt = "gif" if out.suffix.lower() == ".gif" else "png"
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from tokviz.app.gui import create_application

    create_application()
    from PySide6.QtCore import qInstallMessageHandler

    from tokviz.app.classroom.animation import AnimationSpec
    from tokviz.app.main_window import MainWindow
    from tokviz.engine.settings import AppSettings

    previous = qInstallMessageHandler(lambda *a: None)  # the offscreen plugin's chatter
    dialogs = _Collect()
    try:
        with tempfile.TemporaryDirectory(prefix="tokviz-animate-") as tmp:
            window = MainWindow(AppSettings.in_folder(tmp), dialogs=dialogs, load_default_sample=False)
            try:
                window.resize(1280, 800)
                window.show()
                if args.text is not None:  # also the corpus the timeline's corpus view segments
                    window.script.set_corpus_text(args.text, word_counts=False, title="text")
                window.script.open_path(model)
                if window.script.wait_for_file() != "opened" or window.script.timeline is None:
                    raise TokvizError(dialogs.errors[-1] if dialogs.errors else f"{model}: cannot open the model")
                if args.text is not None:
                    window.token_view_panel.set_text(args.text)
                last = window.step_model.n_steps if args.last is None else args.last
                spec = AnimationSpec(out, args.first, last, args.every, args.panel, int(m[1]), int(m[2]),
                                     round(1000 / args.fps), fmt, not args.no_loop, not args.no_caption)
                a = window.animation
                if not window.script.export_animation(spec):
                    raise TokvizError(dialogs.errors[-1])
                outcome = window.script.wait_for({"finished": [a.finished], "failed": [a.failed]}, 600_000)
                if outcome != "finished":
                    raise TokvizError(dialogs.errors[-1] if dialogs.errors else "the export did not finish")
            finally:
                window.dispose()
    finally:
        qInstallMessageHandler(previous)
    print(out, file=sys.stdout)
    return 0
