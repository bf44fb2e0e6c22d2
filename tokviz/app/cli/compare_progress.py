"""Progress of ``tokviz compare`` on stderr: which model of how many, which document of how many,
time so far.

On a terminal one line is redrawn (at most every `REDRAW_SECONDS`, and whenever a model starts)
and wiped at the end, so only the results and errors stay; elsewhere (pipes, CI logs) a line is
printed now and then (every `LOG_SECONDS`), so a short run writes nothing. ``--quiet`` turns it
off. It only reads the `CompareEvent`s the comparison yields anyway: it never slows the run.
"""

from __future__ import annotations

import time
from typing import TextIO

REDRAW_SECONDS = 0.1
LOG_SECONDS = 5.0
WIPE = "\r\x1b[2K"


def _elapsed(seconds: float) -> str:
    m, s = divmod(max(0, int(seconds)), 60)
    return f"{m}:{s:02d}"


class CompareProgress:
    """What `tokviz compare` reports while it runs (module doc); `labels`: the models' names."""

    def __init__(self, stream: TextIO, labels: list[str], *, documents: int = 0, enabled: bool = True) -> None:
        self.stream, self.labels, self.documents, self.enabled = stream, labels, documents, enabled
        self.tty = enabled and bool(getattr(stream, "isatty", lambda: False)())
        self.t0 = self.last = time.perf_counter()
        self.model, self.done = 0, 0
        self.shown = False  # a redrawn line is on the terminal

    def line(self) -> str:
        """``compare: model 2/3 cl100k_base, document 45/380, 0:12``."""
        k = min(self.model, len(self.labels) - 1)
        parts = [f"compare: model {k + 1}/{len(self.labels)} {self.labels[k]}"]
        if self.documents:
            parts.append(f"document {min(self.done + 1, self.documents)}/{self.documents}")
        parts.append(_elapsed(time.perf_counter() - self.t0))
        return ", ".join(parts)

    def start(self) -> None:
        """The first model starts (shown on a terminal only)."""
        self._show(force=True)

    def update(self, model_index: int, done: int, total: int, *, finished: bool) -> None:
        """Model `model_index` has done `done` of `total`; `finished`: it is done (the next starts)."""
        if finished:
            self.model, self.done = model_index + 1, 0
            if self.model >= len(self.labels):
                return
        else:
            self.model, self.done = model_index, done
        self._show(force=finished)

    def _show(self, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if self.tty:
            if force or now - self.last >= REDRAW_SECONDS:
                self.last = now
                self.stream.write(WIPE + self.line())
                self.stream.flush()
                self.shown = True
        elif now - self.last >= LOG_SECONDS:
            self.last = now
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def clear(self) -> None:
        """Wipe the redrawn line (before an error line, and at the end)."""
        if self.shown:
            self.stream.write(WIPE)
            self.stream.flush()
            self.shown = False
