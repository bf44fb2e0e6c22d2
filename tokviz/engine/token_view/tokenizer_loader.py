"""`TokenizerLoadEngine`: loads tokenizer files for the token view's extra rows off the GUI thread,
and `warm_up`, which builds a tokenizer's one-time tables on the thread that loaded it (so the
first long encode does not pay for them)."""

from __future__ import annotations

from PySide6.QtCore import Signal

from tokviz.engine.workers import BackgroundEngine, BackgroundWorker, background_mode


def warm_up(tok) -> None:
    """Build the one-time tables of `tok`'s first long encode now, on this worker thread (for the
    tokenizers that have them: ``warm_up()``)."""
    tok.warm_up()


class TokenizerLoadWorker(BackgroundWorker):
    """Loads one pretrained tokenizer file (``load(path)``) off the GUI thread."""

    def __init__(self, run_id: int, path: str, load) -> None:
        super().__init__(run_id)
        self.path = path
        self._load = load

    def work(self) -> object:
        with background_mode():
            tok = self._load(self.path)
            warm_up(tok)
            return tok


class TokenizerLoadEngine(BackgroundEngine):
    """Loads tokenizers for comparison rows; `loaded(tokenizer)`, `cancelled()` or `failed(message)`."""

    loaded = Signal(object)
    cancelled = Signal()
    failed = Signal(str)

    def load(self, path: str, load) -> int:
        """Start loading `path` with `load` (``tokviz.core.loading.load_tokenizer``)."""
        return self._launch(TokenizerLoadWorker(self._new_run_id(), str(path), load))

    def _on_result(self, result: object) -> None:
        self.loaded.emit(result)

    def _on_cancel(self) -> None:
        self.cancelled.emit()

    def _on_failure(self, message: str) -> None:
        self.failed.emit(message)
