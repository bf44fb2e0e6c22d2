"""Forked children: results in job order, errors reported, children killed when the consumer
stops, and forking refused while another Python thread runs (but not for fork-safe helper
threads, nor for threads that have ended)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from tests.conftest import skip_unless_fork
from tokviz.core.processes import fork
from tokviz.core.processes.fork import ChildFailed, can_fork, fork_call, fork_map, fork_safe_thread


def needs_fork():
    skip_unless_fork()


def test_results_come_back_in_job_order_from_other_processes():
    needs_fork()
    here = os.getpid()
    out = list(fork_map(lambda n: (n * n, os.getpid()), range(7), processes=3))
    assert [sq for sq, _ in out] == [0, 1, 4, 9, 16, 25, 36]
    pids = {pid for _, pid in out}
    assert here not in pids and len(pids) == 7  # one child per job


def test_children_see_what_the_parent_holds_without_pickling_it():
    needs_fork()
    big = "x" * 1_000_000
    unpicklable = threading.Lock()  # would fail a pickling pool on the way in
    assert list(fork_map(lambda k: (len(big) + k, unpicklable.locked()), [1, 2], processes=2)) == [
        (1_000_001, False), (1_000_002, False)]


def test_a_failing_child_raises_with_its_message():
    needs_fork()

    def work(n):
        if n == 2:
            raise ValueError("bad slice 2")
        return n

    results = fork_map(work, [1, 2, 3], processes=2)
    assert next(results) == 1
    with pytest.raises(ChildFailed, match="ValueError: bad slice 2"):
        next(results)


def test_a_child_that_dies_raises():
    needs_fork()
    with pytest.raises(ChildFailed, match="without a result"):
        fork_call(lambda: os._exit(3)).result()


def test_closing_early_kills_the_running_children(tmp_path):
    needs_fork()
    pids = tmp_path / "pids"

    def slow(n):
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\n")
        if n > 0:
            time.sleep(60)  # a child that would outlive the test if it were not killed
        return n

    results = fork_map(slow, [0, 1, 2], processes=3)
    assert next(results) == 0
    results.close()
    for pid in map(int, pids.read_text().split()):
        with pytest.raises(ChildProcessError):  # reaped: no child of ours is left behind
            os.waitpid(pid, os.WNOHANG)


def test_no_fork_while_another_python_thread_runs():
    needs_fork()
    release = threading.Event()
    t = threading.Thread(target=release.wait)
    t.start()
    try:
        assert can_fork() is False
    finally:
        release.set()
        t.join()
    assert can_fork() is True


def test_fork_safe_helper_threads_do_not_prevent_forking():
    needs_fork()
    release, started = threading.Event(), threading.Event()
    fork_safe_thread(lambda: (started.set(), release.wait()), name="reader")
    started.wait(10)
    try:
        assert can_fork() is True
        assert list(fork_map(lambda n: n + 1, [1], processes=1)) == [2]
    finally:
        release.set()


def test_threads_that_ended_but_left_an_entry_do_not_count():
    """A thread not started by `threading` (as Qt's are) that ran Python code leaves a ``Dummy-N``
    entry behind for good; once it has ended it must not prevent forking."""
    needs_fork()
    import _thread

    # (threading._active / _DummyThread: the stdlib has no public way to see or drop a native thread's entry)
    # entries other tests' native threads left behind: a new native thread that gets one of their
    # idents back would be handed that old entry (with the old native id) by current_thread()
    for ident, t in list(threading._active.items()):  # noqa: SLF001
        if isinstance(t, threading._DummyThread) and not os.path.exists(f"/proc/self/task/{t.native_id}"):  # noqa: SLF001
            threading._active.pop(ident, None)  # noqa: SLF001
    inside, release, entry = threading.Event(), threading.Event(), []

    def native():
        entry.append(threading.current_thread())  # creates the dummy entry
        inside.set()
        release.wait(10)

    _thread.start_new_thread(native, ())
    inside.wait(10)
    dummy = entry[0]
    try:
        assert isinstance(dummy, threading._DummyThread)  # noqa: SLF001
        assert can_fork() is False  # running
        release.set()
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/self/task/{dummy.native_id}") and time.monotonic() < deadline:
            time.sleep(0.01)  # the native thread's exit, not a timing assumption: bounded poll
        assert dummy in threading.enumerate()  # the entry is still there...
        assert can_fork() is True  # ...but it no longer counts
    finally:
        release.set()
        threading._active.pop(dummy.ident, None)  # noqa: SLF001 - tidy the stdlib's table


def test_a_stream_brings_each_item_as_it_is_made_and_reaps_the_child():
    needs_fork()
    here = os.getpid()

    def produce(send):
        for k in range(3):
            send((k, os.getpid()))

    stream = fork.fork_stream(produce)
    items = list(stream)
    assert [k for k, _ in items] == [0, 1, 2] and {pid for _, pid in items} == {stream.pid} != {here}
    with pytest.raises(ChildProcessError):
        os.waitpid(stream.pid, os.WNOHANG)  # reaped


def test_a_stream_reports_the_childs_error_after_its_items():
    needs_fork()

    def produce(send):
        send("first")
        raise ValueError("broken corpus")

    got = []
    with pytest.raises(ChildFailed, match="ValueError: broken corpus"):
        for item in fork.fork_stream(produce):
            got.append(item)
    assert got == ["first"]


def test_stopping_a_stream_from_another_thread_ends_a_waiting_read():
    needs_fork()

    def produce(send):
        send("started")
        time.sleep(60)

    stream = fork.fork_stream(produce)
    it = iter(stream)
    assert next(it) == "started"
    threading.Timer(0.05, stream.stop).start()
    t0 = time.monotonic()
    with pytest.raises(ChildFailed):
        next(it)  # waits for the next item until the child is killed
    assert time.monotonic() - t0 < 30
    with pytest.raises(ChildProcessError):
        os.waitpid(stream.pid, os.WNOHANG)


def test_a_server_answers_each_request_in_order_and_reports_errors():
    import doctest

    import numpy as np

    from tokviz.core.processes.fork import fork_server

    assert doctest.testmod(fork).failed == 0
    needs_fork()
    state = {"total": 0}

    def handle(kind, payload, array):
        if kind == "fail":
            raise ValueError("no such thing")
        state["total"] += int(array.sum())  # the child's own copy of `state` follows the requests
        return (state["total"], os.getpid()), array * payload

    server = fork_server(handle)
    try:
        server.send("add", 2, np.arange(3))
        (total, pid), doubled = server.receive()
        assert total == 3 and pid != os.getpid() and doubled.tolist() == [0, 2, 4]
        server.send("add", 1, np.arange(1000))
        assert server.receive()[0][0] == 3 + 499500
        assert state["total"] == 0  # the parent's copy is untouched
        server.send("fail")
        with pytest.raises(ChildFailed, match="ValueError: no such thing"):
            server.receive()
        server.send("add", 0, np.ones(200_000))  # bigger than a pipe's default buffer
        assert server.receive()[1].shape == (200_000,)
        server.send("add", 1, np.zeros((4, 0), dtype=np.int64))  # an empty array has no bytes
        assert server.receive()[1].shape == (4, 0)
    finally:
        server.close()
    with pytest.raises(ChildFailed):
        server.send("add", 1, np.arange(2))


def test_here_and_forked_runs_the_second_half_in_a_child_and_falls_back_here(monkeypatch):
    """`here_and_forked`: the second job in a child (its pid differs), the first here; a refused
    fork or a failing child leaves the second job to this process (`there_here` when given); an
    error here kills the child and is raised."""
    import os

    from tokviz.core.processes import fork

    skip_unless_fork()
    me = os.getpid()
    mine, theirs = fork.here_and_forked(os.getpid, os.getpid)
    assert mine == me and theirs != me

    def fails_in_child():
        if os.getpid() != me:
            raise RuntimeError("the child fails")
        return "here"

    assert fork.here_and_forked(lambda: 1, fails_in_child) == (1, "here")
    assert fork.here_and_forked(lambda: 1, fails_in_child, lambda: "instead") == (1, "instead")

    def refuse(fn):
        raise OSError("no more processes")

    monkeypatch.setattr(fork, "fork_call", refuse)
    assert fork.here_and_forked(lambda: 1, os.getpid) == (1, me)
    monkeypatch.undo()
    with pytest.raises(ValueError):
        fork.here_and_forked(lambda: int("x"), lambda: 2)


def test_a_child_dies_with_its_parent():
    """A child's own child (a half of an encode in a comparison's child, say) is killed when that
    child ends: a parent killed mid-job leaves nothing working on."""
    needs_fork()
    import select
    import signal

    hold_r, hold_w = os.pipe()  # never written: the grandchild waits on it until it is killed

    def parent_of_one() -> int:
        pid_r, pid_w = os.pipe()
        fork_call(lambda: (os.write(pid_w, str(os.getpid()).encode()), os.read(hold_r, 1)))  # never waited for
        return int(os.read(pid_r, 32))  # this child ends once it has the grandchild's pid (os._exit)

    try:
        grandchild = fork_call(parent_of_one).result()
        try:
            fd = os.pidfd_open(grandchild)
        except ProcessLookupError:
            return  # gone already
        try:
            assert select.select([fd], [], [], 30)[0], "the grandchild outlived its parent"
        finally:
            os.close(fd)
            try:
                os.kill(grandchild, signal.SIGKILL)  # (a failed test leaves no process behind)
            except ProcessLookupError:
                pass
    finally:
        os.close(hold_r)
        os.close(hold_w)
