"""The caller chooses how many processes a job uses (`choose_processes`, from the machine's cores
and its load); core calls only use what they are given, and only where forking is safe (`usable`);
no core module outside `tokviz.core.processes` looks at the machine or forks."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from tokviz.core.processes import parallel
from tokviz.core.processes.fork import can_fork


@pytest.mark.parametrize(("cores", "busy", "limit", "expected"), [
    (4, 0.0, None, 4),  # an idle machine: every core
    (4, 1.2, None, 3),  # about one core busy elsewhere
    (4, 2.6, None, 1),  # 0.4 of a core to spare: not worth a second process
    (4, 2.4, None, 2),
    (2, 0.3, None, 2),
    (2, 0.7, None, 1),
    (2, 5.0, None, 1),  # a busy machine: one process
    (8, 0.0, 2, 2),  # at most `limit`
    (1, 0.0, None, 1),
])
def test_choose_processes_counts_the_cores_other_work_leaves(monkeypatch, cores, busy, limit, expected):
    monkeypatch.delenv(parallel.LIMIT_VAR, raising=False)
    assert parallel.processes_for(cores, busy, limit=limit) == expected
    monkeypatch.setattr(parallel, "available_cores", lambda: cores)  # the same rule on this "machine"
    monkeypatch.setattr(parallel, "busy_cores", lambda: busy)
    assert parallel.choose_processes(limit=limit) == expected


@pytest.mark.parametrize(("cores", "busy", "limit", "expected"), [
    (2, 0.7, None, 2), (2, 5.0, None, 2), (4, 2.6, None, 4), (8, 9.0, 3, 3), (1, 0.0, None, 1)])
def test_independent_parts_take_every_core_whatever_the_load(monkeypatch, cores, busy, limit, expected):
    """Parts that never wait for each other (models side by side) use every core even on a busy
    machine, so a compare run does not fall back to one process when the load peaks."""
    monkeypatch.delenv(parallel.LIMIT_VAR, raising=False)
    monkeypatch.setattr(parallel, "available_cores", lambda: cores)
    monkeypatch.setattr(parallel, "busy_cores", lambda: busy)
    assert parallel.choose_processes(limit=limit, independent=True) == expected
    monkeypatch.setenv(parallel.LIMIT_VAR, "1")  # the user's cap still holds
    assert parallel.choose_processes(limit=limit, independent=True) == 1


@pytest.mark.parametrize(("setting", "limit", "expected"), [
    ("2", None, 2), ("1", None, 1), (" 3 ", 2, 2), ("0", None, 8), ("many", None, 8), ("", None, 8), ("-1", None, 8)])
def test_the_user_can_cap_the_processes(monkeypatch, setting, limit, expected):
    """``TOKVIZ_PROCESSES=N`` caps every job at N processes (a shared machine); anything but a
    whole number above zero is ignored."""
    monkeypatch.setattr(parallel, "available_cores", lambda: 8)
    monkeypatch.setattr(parallel, "busy_cores", lambda: 0.0)
    monkeypatch.setenv(parallel.LIMIT_VAR, setting)
    assert parallel.choose_processes(limit=limit) == expected


def test_the_machine_is_read_where_it_can_be():
    assert parallel.busy_cores() >= 0.0
    assert parallel.available_cores() >= 1
    assert 1 <= parallel.choose_processes() <= parallel.available_cores()


def test_usable_gives_the_processes_only_where_forking_is_safe():
    assert parallel.usable(1) == 1
    assert parallel.usable(0) == 1
    assert parallel.usable(3) == (3 if can_fork() else 1)
    seen = {}
    worker = threading.Thread(target=lambda: seen.update(n=parallel.usable(2)))
    worker.start()
    worker.join()
    assert seen["n"] == 1  # not from a second thread


def test_only_the_processes_package_decides_or_forks():
    """Core modules get their processes from the caller: none reads the load, counts cores, asks
    `can_fork` or forks by itself (the embeddings' thread pool is threads, not processes)."""
    core = Path(parallel.__file__).resolve().parents[1]
    pattern = re.compile(r"\bcan_fork\b|getloadavg|/proc/loadavg|/proc/stat|os\.fork\(|sched_getaffinity|IdleMeter")
    found = [str(path.relative_to(core)) for path in core.rglob("*.py")
             if "processes" not in path.relative_to(core).parts and pattern.search(path.read_text(encoding="utf-8"))]
    assert found == []
