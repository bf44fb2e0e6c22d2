"""How many processes a job may use: chosen once by the caller at the top, passed down as a number.

Core calls that can share their work with forked children (counting a corpus, encoding a big text
in two halves, Unigram's EM over two halves of its lattices, writing a long encoding's JSON) take
``processes``: 1 by default (everything in this process), more to allow forked children. They never
look at the machine themselves, so a call does the same thing from the command line, the window
or a test. The callers at the top (the command line, the engine's child processes) decide with
`choose_processes`; the window's own threads keep the default.

A call given more than one process still

- uses them only for an input big enough that the forks pay (its own threshold), and
- forks only where that is safe (`usable`: `fork.can_fork`, on Linux, from the main thread with
  no other Python thread running), and otherwise works alone with the same result.
"""

from __future__ import annotations

import os

from .fork import can_fork

SEQUENTIAL = 1


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def available_memory() -> int | None:
    """Bytes of memory the system can give without swapping (Linux: MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def busy_cores() -> float:
    """Cores other work keeps busy: the smaller of the last minute's load average and the threads
    runnable right now besides this one (the average lags a job that just ended, the snapshot
    catches a moment). 0 where neither is known."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            fields = f.read().split()
        return max(0.0, min(float(fields[0]), float(fields[3].split("/")[0]) - 1))
    except (OSError, IndexError, ValueError):
        pass
    try:
        return max(0.0, os.getloadavg()[0] - 1)
    except (AttributeError, OSError):
        return 0.0


LIMIT_VAR = "TOKVIZ_PROCESSES"  # at most this many processes for any job (1: everything in one process)


def choose_processes(*, limit: int | None = None, independent: bool = False) -> int:
    """How many processes a job started now should use (at most `limit`, and at most
    ``$TOKVIZ_PROCESSES`` when set to a whole number): this one, plus one for each core that other
    work leaves idle (rounded), at most the cores there are. Halves that wait for each other run
    slower, not faster, when one of them queues for a busy core.

    `independent`: the job's parts never wait for each other (models measured side by side), so
    it takes every core whatever the load: the scheduler shares a busy core, and no part waits for
    one that queues (three models on udhr2 with one of two cores kept busy: 2.6-2.8 s side by side,
    3.3-3.5 s in one process). It also makes the choice stable: the load read at one instant
    no longer turns a run into a one-process run at random."""
    setting = os.environ.get(LIMIT_VAR, "").strip()
    if setting.isdigit() and int(setting) > 0:
        limit = int(setting) if limit is None else min(limit, int(setting))
    return processes_for(available_cores(), 0.0 if independent else busy_cores(), limit=limit)


def processes_for(cores: int, busy: float, *, limit: int | None = None) -> int:
    """`choose_processes`'s rule for a machine of `cores` cores of which other work keeps `busy`
    busy: this process plus one per idle core (rounded), at most `cores` and `limit`.

    >>> processes_for(4, 1.2), processes_for(4, 2.6), processes_for(8, 0.0, limit=2)
    (3, 1, 2)
    """
    spare = max(0, round(cores - 1 - busy))
    n = min(cores, 1 + spare)
    return max(1, min(n, limit) if limit is not None else n)


def usable(processes: int) -> int:
    """How many of the `processes` a call was given it may use here and now: all of them where
    forking is safe (`fork.can_fork`), else 1."""
    return processes if processes > 1 and can_fork() else SEQUENTIAL
