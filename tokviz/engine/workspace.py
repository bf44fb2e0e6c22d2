"""`Workspace`: what panels share besides the step model: the corpus and "the current text".

One object per window. Panels talk to it, never to each other: the corpus editor says where the
corpus can be read (`set_corpus_reader`) and when it changed; the token view says what text it
shows (`set_current_text`). Panels that need them (embeddings, lessons, scripts) read
`corpus_sample(n)` and `current_text()` and listen to `corpus_changed` / `current_text_changed`.
The tokenizers are the step model's timeline (`step_model`) and the finished runs of this session
(`trained_models`).

What this leaves out: reading files (`tokviz.engine.corpus_files`) and any widget.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from .step_model import StepModel
from .trained_models import TrainedModels

CURRENT_TEXT_CHARS = 2_000  # "the current text" when no token view text is set: the corpus start


class Workspace(QObject):
    """The corpus, the current text and the tokenizers of one window, with change signals."""

    corpus_changed = Signal()  # a different corpus (typed, opened, or a sample)
    current_text_changed = Signal()  # the text the token view shows changed

    def __init__(self, step_model: StepModel | None = None, trained_models: TrainedModels | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step_model = step_model if step_model is not None else StepModel(self)
        self.trained_models = trained_models if trained_models is not None else TrainedModels(self)
        self._corpus_reader: Callable[[int], str] = lambda n: ""
        self._text_reader: Callable[[], str] = lambda: ""

    # -- the corpus -------------------------------------------------------------------------

    def set_corpus_reader(self, reader: Callable[[int], str]) -> None:
        """Where the corpus is read from: ``reader(n)`` gives its first n characters (for a
        30 MB file only the first pieces are joined). Does not emit; call `notify_corpus_changed`."""
        self._corpus_reader = reader

    def notify_corpus_changed(self) -> None:
        self.corpus_changed.emit()

    def corpus_sample(self, max_chars: int) -> str:
        """The first `max_chars` characters of the corpus."""
        return self._corpus_reader(max(0, int(max_chars)))[:max_chars]

    # -- the current text -------------------------------------------------------------------

    def set_current_text_reader(self, reader: Callable[[], str]) -> None:
        """Where the current text is read from (the token view's text), read only when needed:
        typing in a megabyte of text does not copy it on every keystroke."""
        self._text_reader = reader

    def notify_current_text_changed(self) -> None:
        self.current_text_changed.emit()

    def current_text(self, max_chars: int = CURRENT_TEXT_CHARS) -> str:
        """The token view's text when there is one, else the start of the corpus."""
        text = self._text_reader()
        if text and not text.isspace():  # strip() would copy a pasted megabyte
            return text[: max_chars * 10]
        return self.corpus_sample(max_chars)
