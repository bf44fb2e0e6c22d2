"""The memory of a process and every process it started, as benchmarks sample it from /proc."""

from __future__ import annotations

import os
import subprocess
import time


def tree_rss_kb(pid: int) -> int:
    """VmRSS of `pid` and all its descendants (kB): forked halves, counting children and compared
    models count in full."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def wait_sampled(proc: subprocess.Popen, every: float = 0.005) -> tuple[int, os.struct_rusage, int]:
    """Wait for `proc`, sampling its tree's memory every `every` seconds: ``(wait status, its
    resource usage (the children it waited for included), peak tree RSS in kB)``."""
    peak = 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return status, usage, peak
        peak = max(peak, tree_rss_kb(proc.pid))
        time.sleep(every)
