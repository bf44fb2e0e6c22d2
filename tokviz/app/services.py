"""`WindowServices`: what every controller of a window may use besides its own models.

Controllers get this record and the models and panels they work with, never the window itself, so
their dependencies are explicit: the questions and messages to the user (`dialogs`), the stored
preferences (`settings`), and the status bar line (`status`).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QStatusBar

from tokviz.engine.settings import AppSettings

from .dialogs import Dialogs


@dataclass(frozen=True)
class WindowServices:
    dialogs: Dialogs
    settings: AppSettings
    status_bar: QStatusBar

    def status(self, text: str, ms: int = 0) -> None:
        """Show `text` in the status bar (for `ms` milliseconds; 0: until replaced)."""
        self.status_bar.showMessage(text, ms)
