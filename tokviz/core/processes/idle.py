"""How much of the machine sat idle lately: would a second process get a core of its own?

`IdleMeter()` reads the kernel's count of idle time (Linux ``/proc/stat``) when made; `cores()`
says how many cores, on average, were idle since then (None where there is no ``/proc/stat``).
A job cut in two halves that wait for each other (`tokviz.core.unigram.split`) runs slower, not
faster, when the second half has to queue for a core busy with other work.
"""

from __future__ import annotations

import os


def _read() -> tuple[int, int] | None:
    """(idle, total) clock ticks of all cores since boot, or None."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 5:
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return ticks[3] + (ticks[4] if len(ticks) > 4 else 0), sum(ticks)


class IdleMeter:
    """Idle cores, on average, from when it was made to each `cores()` call."""

    def __init__(self) -> None:
        self._start = _read()

    def cores(self) -> float | None:
        end = _read()
        if self._start is None or end is None or end[1] <= self._start[1]:
            return None
        return (os.cpu_count() or 1) * (end[0] - self._start[0]) / (end[1] - self._start[1])
