"""`WelcomeController`: when the first-run screen shows, and what its three paths do.

It shows over the window's panels when the settings have never seen the screen used or dismissed
(a first run), and from Help > Welcome Screen at any time. Train on a sample loads the default
sample and trains it; Open a real tokenizer opens File > Open Tokenizer's dialog; Start a lesson
starts the first built-in lesson. Choosing or dismissing hides the screen for good (settings).
Its dependencies come in explicitly: the screen, the settings and the commands it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject

from tokviz.engine.settings import AppSettings
from tokviz.panels.welcome.screen import WelcomeScreen


@dataclass(frozen=True)
class WelcomePaths:
    """What each path runs (each returns whether it started)."""

    train_sample: Callable[[], object]
    open_tokenizer: Callable[[], object]
    start_lesson: Callable[[], object]


class WelcomeController(QObject):
    def __init__(self, screen: WelcomeScreen, settings: AppSettings, paths: WelcomePaths,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.screen, self.settings, self.paths = screen, settings, paths
        screen.chosen.connect(self._on_screen_chosen)
        screen.dismissed.connect(self._on_screen_dismissed)

    @property
    def showing(self) -> bool:
        return not self.screen.isHidden()

    def state(self) -> dict:
        """What a check of a real window asks: is the screen showing, on top of the panels, and does a
        click on each path reach it; with its geometry in the window."""
        g = self.screen.geometry()
        return {"showing": self.showing, "on_top": self.screen.is_on_top(),
                "paths_reachable": self.screen.paths_reachable(), "geometry": [g.x(), g.y(), g.width(), g.height()]}

    def offer(self) -> bool:
        """Show the screen if it was never used or dismissed; returns whether it shows."""
        if not self.settings.welcome_done():
            self.show()
        return self.showing

    def show(self) -> None:
        self.screen.show()
        self.screen.raise_()

    def _done(self) -> None:
        self.settings.set_welcome_done(True)
        self.screen.hide()

    def _on_screen_dismissed(self) -> None:
        self._done()

    def _on_screen_chosen(self, key: str) -> None:
        self._done()
        {"sample": self.paths.train_sample, "tokenizer": self.paths.open_tokenizer,
         "lesson": self.paths.start_lesson}[key]()
