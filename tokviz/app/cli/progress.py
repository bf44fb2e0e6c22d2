"""A text progress bar for ``tokviz train`` on stderr: merges done/total, merges/s, time left.

On a terminal it redraws one line; otherwise (pipes, CI logs) it prints a line now and then.
Before the bar, `ProgressBar.load_kernels` says when an algorithm's compiled kernels are being
compiled (the first run on a machine), which can otherwise look like a hang; `load_kernels_aside`
does the same on a thread of its own while the command goes on (checking its arguments, reading and
counting the corpus).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from tokviz.core.jit import on_compiling

COMPILING = "compiling fast kernels, once per machine: "

BAR_WIDTH = 28
REDRAW_SECONDS = 0.1
LOG_SECONDS = 5.0


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ProgressBar:
    """Progress of one training run. `total` None means "until no pair is frequent enough"."""

    def __init__(self, stream: TextIO, *, enabled: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled
        self.tty = enabled and hasattr(stream, "isatty") and stream.isatty()
        self.total: int | None = None
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.done = 0
        self.unit = "merges"  # "rounds" for Unigram
        self._notice_open = False  # a compile notice awaits its duration: other lines wait
        self._notice_closed = False  # ended early by `close_notice`: no duration follows

    def _emit(self, line: str, *, final: bool = False) -> None:
        if not self.enabled or self._notice_open:
            return
        if self.tty:
            self.stream.write("\r\x1b[2K" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def load_kernels(self, warm_up: Callable[[], object]) -> None:
        """Run an algorithm's warm-up (`AlgorithmSpec.warm_up`: it loads the compiled kernels);
        when numba has to compile them, say so before the wait and how long it took after it.
        A warm-up that fails changes nothing: the training loads what it needs or takes its
        plain path, and reports real problems itself."""
        t0 = time.perf_counter()
        said = []

        def started() -> None:
            said.append(True)
            if self.enabled:
                self._notice_open = True
                self.stream.write(("\r\x1b[2K" if self.tty else "") + COMPILING)  # over a stage's line
                self.stream.flush()

        ok = True
        with on_compiling(started):
            try:
                warm_up()
            except Exception:  # noqa: BLE001 - only a head start (see the docstring)
                ok = False
        if said and self.enabled and not self._notice_closed:
            took = f"{time.perf_counter() - t0:.1f} s"
            self.stream.write((took if ok else f"stopped after {took}; the training takes its own path") + "\n")
            self.stream.flush()
            self._notice_open = False

    def close_notice(self) -> None:
        """End the line of a compile notice still waiting for its duration (an error or Ctrl+C is
        about to be said on the next line); the duration is then not written."""
        if self._notice_open:
            self._notice_open, self._notice_closed = False, True
            self.stream.write("\n")
            self.stream.flush()

    def load_kernels_aside(self, warm_up: Callable[[], object]) -> Callable[[], None]:
        """`load_kernels` on a thread of its own, so that the rest of the start (the arguments'
        checks, reading and counting the corpus) runs meanwhile: numba's import and the kernels'
        loading read files and let go of the GIL, and so do counting and the seed's sorts (about
        0.14 s of a 0.83 s Unigram training). Returns the call that waits for it, made before the
        training's first step. The counting's own lines are left out while a compile notice waits
        for its duration."""
        thread = threading.Thread(target=self.load_kernels, args=(warm_up,), name="tokviz-warm-up", daemon=True)
        thread.start()
        return thread.join

    def stage(self, label: str) -> None:
        if self.tty:
            self._emit(f"{label}...")

    def counting(self, done_chars: int, total_chars: int) -> None:
        now = time.perf_counter()
        if self.tty and now - self.last >= REDRAW_SECONDS:
            self.last = now
            self._emit(f"counting chunks {100 * done_chars // max(1, total_chars)}%")

    def start(self, total: int | None) -> None:
        self.total = total
        self.t0 = self.last = time.perf_counter()

    def line(self, done: int) -> str:
        elapsed = max(1e-9, time.perf_counter() - self.t0)
        rate = done / elapsed
        if self.total:
            frac = min(1.0, done / self.total)
            filled = int(frac * BAR_WIDTH)
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            left = (self.total - done) / rate if rate > 0 else 0.0
            return f"[{bar}] {done}/{self.total} {self.unit}  {rate:,.0f}/s  {_duration(left)} left"
        return f"{done} {self.unit}  {rate:,.0f}/s"

    def update(self, done: int) -> None:
        self.done = done
        now = time.perf_counter()
        interval = REDRAW_SECONDS if self.tty else LOG_SECONDS
        if now - self.last >= interval:
            self.last = now
            self._emit(self.line(done))

    def finish(self, merges: int, vocab_size: int) -> None:
        elapsed = time.perf_counter() - self.t0
        if self.tty:
            self._emit(self.line(merges), final=True)
        self._emit(f"trained {merges} {self.unit} (vocabulary {vocab_size}) in {_duration(elapsed)}", final=True)
