"""`EmbeddingSources`: keeps the embedding view's tokenized corpus in step with the tokenizer.

It follows the shared `StepModel` (a new timeline or step re-tokenizes the corpus, debounced) and
the current text (re-encoded alone when it changes). Both run on `TaskEngine` workers; the newest
request wins. While the view is not `wanted` (a tab behind another panel) changes are only noted,
and `catch_up` tokenizes once when it is back: a hidden view costs nothing while a run trains. ``corpus_ready(TokenizedCorpus)`` brings a new tokenization, ``text_ready`` the
same one with new current-text ids.

What this leaves out: where the texts come from (callables given to `attach`) and training.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from tokviz.core.registry import snapshot
from tokviz.engine.tasks import TaskEngine

from .embedding_engine import MAX_CORPUS_CHARS, TokenizedCorpus, encode_current_text, tokenize_corpus

RETOKENIZE_DELAY_MS = 400  # steps change quickly while a tokenizer trains
TEXT_DELAY_MS = 300  # typing in the token view


class EmbeddingSources(QObject):
    corpus_ready = Signal(object)  # TokenizedCorpus
    text_ready = Signal(object)  # TokenizedCorpus with new `text_ids`
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step_model = None
        self._corpus_text: Callable[[int], str] = lambda n: ""
        self._current_text: Callable[[], str] = lambda: ""
        self.tokenizer_engine = TaskEngine("embedding_tokenizer", self)
        self.tokenizer_engine.finished.connect(self.corpus_ready)
        self.tokenizer_engine.failed.connect(self.failed)
        self.text_engine = TaskEngine("embedding_text", self)
        self.text_engine.finished.connect(self.text_ready)
        self._retokenize_timer = QTimer(self, singleShot=True, interval=RETOKENIZE_DELAY_MS)
        self._retokenize_timer.timeout.connect(self.retokenize)
        self._text_timer = QTimer(self, singleShot=True, interval=TEXT_DELAY_MS)
        self._text_timer.timeout.connect(self._on_text_timer_timeout)
        self._corpus: TokenizedCorpus | None = None  # the last one handed out (for text updates)
        self.corpus_ready.connect(self._remember)
        self._wanted: Callable[[], bool] = lambda: True
        self._stale = False  # something changed while the view was not wanted

    def attach(self, step_model, corpus_text: Callable[[int], str], current_text: Callable[[], str],
               wanted: Callable[[], bool] = lambda: True) -> None:
        """`corpus_text(n)`: the first n characters of the corpus; `current_text()`: the text whose
        tokens the views show; `wanted()`: whether the view shows them now."""
        self.step_model = step_model
        self._corpus_text, self._current_text, self._wanted = corpus_text, current_text, wanted
        step_model.timeline_changed.connect(self.schedule)
        step_model.step_changed.connect(self.schedule)
        step_model.finished_changed.connect(self.schedule)
        self.schedule()

    def current_text(self) -> str:
        return self._current_text() or ""

    @property
    def wanted(self) -> bool:
        """Whether the view shows the tokens now (asks the `wanted` given to `attach`)."""
        return self._wanted()

    @property
    def pending(self) -> bool:
        """A re-tokenization is scheduled and waits out its pause."""
        return self._retokenize_timer.isActive()

    @Slot()
    def schedule(self, *_args) -> None:
        """Re-tokenize after a pause (once the view is wanted again, if it is not now)."""
        if not self._wanted():
            self._stale = True
            return
        self._retokenize_timer.start()

    @Slot()
    def text_changed(self, *_args) -> None:
        """The current text changed: re-encode it after a pause (a re-tokenization when the view
        is wanted again, if it is not now)."""
        if not self._wanted():
            self._stale = True
            return
        self._text_timer.start()

    @Slot()
    def catch_up(self) -> None:
        """The view is wanted again: re-tokenize if anything changed meanwhile."""
        if self._stale and self._wanted():
            self._stale = False
            self.schedule()

    @Slot()
    def retokenize(self) -> bool:
        """Tokenize now; False when there is no tokenizer yet."""
        self._retokenize_timer.stop()
        self._stale = False  # (asked for now: up to date once this one is done)
        sm = self.step_model
        if sm is None or sm.timeline is None:
            return False
        timeline = sm.timeline  # a finished one (or a loaded tokenizer) does not change
        if not timeline.finished:
            timeline = snapshot(timeline)  # a still-growing list: copy (any algorithm)
        self.tokenizer_engine.start(tokenize_corpus, timeline, sm.step, self._corpus_text(MAX_CORPUS_CHARS),
                                    self.current_text())
        return True

    @Slot(object)
    def _remember(self, corpus: TokenizedCorpus) -> None:
        self._corpus = corpus

    def set_corpus(self, corpus: TokenizedCorpus) -> None:
        """The corpus the next text update starts from (set by the panel)."""
        self._corpus = corpus

    @Slot()
    def _on_text_timer_timeout(self) -> None:
        c = self._corpus
        if c is not None and c.tokenizer is not None:
            self.text_engine.start(encode_current_text, c, self.current_text())

    def shutdown(self) -> None:
        self._retokenize_timer.stop()
        self._text_timer.stop()
        self.tokenizer_engine.shutdown()
        self.text_engine.shutdown()
