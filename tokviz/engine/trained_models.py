"""`TrainedModels`: the models trained (or opened) in this session, to compare side by side.

Every finished run is remembered with a short name (``"WordPiece 8,000 · run 2"``), so the token
view can add any of them as a comparison row next to the current model: BPE, WordPiece and
Unigram on the same text. At most `MAX_MODELS` are kept (the oldest goes first).

What this leaves out: encoding (the token view) and files (the window's file controller).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

MAX_MODELS = 8


@dataclass
class TrainedModel:
    name: str
    timeline: object  # a finished Timeline, WordPieceTimeline or UnigramTimeline
    _tokenizer: object | None = field(default=None, repr=False)

    def tokenizer(self):
        """The model's tokenizer (final vocabulary), named after the model; built once."""
        if self._tokenizer is None:
            tok = self.timeline.tokenizer()
            tok.name = self.name
            self._tokenizer = tok
        return self._tokenizer


class TrainedModels(QObject):
    """The session's models, newest last. `changed` when one is added."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._models: list[TrainedModel] = []
        self._runs = 0

    @property
    def models(self) -> list[TrainedModel]:
        return list(self._models)

    def add(self, timeline, *, name: str | None = None) -> TrainedModel | None:
        """Remember a finished timeline (not a loaded pretrained tokenizer: it has its own rows)."""
        if not timeline.has_counts or not timeline.finished:
            return None
        if any(m.timeline is timeline for m in self._models):
            return None
        self._runs += 1
        if name is None:
            name = f"{timeline.title} {timeline.vocab_size:,} · run {self._runs}"
        model = TrainedModel(name, timeline)
        self._models = (self._models + [model])[-MAX_MODELS:]
        self.changed.emit()
        return model
