"""Forked children: work on what this process already holds, without reloading or pickling it.

A forked child inherits the loaded tokenizer or the corpus as it is (copy-on-write), runs one
function, sends its result back as one frame (`pipes`) and leaves with ``os._exit``, running
none of the parent's clean-up. `fork_call` starts one such child; `here_and_forked` runs two
halves of a job, one in such a child, with the fallbacks every caller needs; `fork_map` runs a function
over many jobs, at most `processes` children at a time, and yields the results in job order;
`fork_stream` runs a producer whose items reach the parent as they are made; `fork_server` a
child answering requests one by one (the parent sends a request event ``(kind, payload, array)``,
does its own share of the work, then reads the answer ``handle(kind, payload, array) -> (payload,
array)``: exactly one answer per request, in order).

    >>> import numpy as np
    >>> if can_fork():
    ...     server = fork_server(lambda kind, payload, array: (payload * 2, array + 1))
    ...     server.send("double", 21, np.zeros(2)); answer = server.receive(); server.close()
    ... else:
    ...     answer = (42, np.ones(2))
    >>> answer[0], answer[1].tolist()
    (42, [1.0, 1.0])

Forking is only done where it is safe (`can_fork`): on Linux, from the main thread, while no
other Python thread runs, except the helper threads started by `fork_safe_thread`, which only
ever block in a raw ``os.read`` and set an event (the child never touches them). Threads that
have ended but left an entry behind (a Qt thread that once ran Python code stays in
``threading.enumerate()`` as ``Dummy-N``) do not count: on Linux a thread is alive while its
native id is listed in ``/proc/self/task``. Native threads of libraries (an idle BLAS pool) hold
no lock a child needs, so the deprecation warning Python 3.12 gives for forking a process with
threads is silenced for the fork call only. What this leaves out: the isolated fresh interpreter
the window uses for long jobs (`spawn`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from typing import TYPE_CHECKING

from .pipes import read_event, read_frame, write_event, write_frame

if TYPE_CHECKING:
    import numpy as np

_SAFE_THREADS: set[int] = set()  # idents of threads started by `fork_safe_thread`


class ChildFailed(Exception):
    """A forked child raised (the message is its exception) or went away without a result."""


def fork_safe_thread(target: Callable[[], None], *, name: str) -> threading.Thread:
    """Start a daemon thread that forking may ignore.

    Only for a thread that blocks in raw ``os.read`` (no Python-level lock held while it waits)
    and sets events: a forked child never runs it and needs nothing it could hold."""

    def run() -> None:
        _SAFE_THREADS.add(threading.get_ident())
        try:
            target()
        finally:
            _SAFE_THREADS.discard(threading.get_ident())

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def _alive(thread: threading.Thread) -> bool:
    """Is `thread` still running? ``is_alive()`` is always True for a dummy entry, so the
    kernel's list of this process's threads decides too."""
    native = thread.native_id
    return thread.is_alive() and (native is None or os.path.exists(f"/proc/self/task/{native}"))


def can_fork() -> bool:
    """True on Linux in the main thread when no other Python thread runs (see the module doc)."""
    if not (sys.platform.startswith("linux") and hasattr(os, "fork")):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    main = threading.main_thread()
    return all(t is main or t.ident in _SAFE_THREADS or not _alive(t) for t in threading.enumerate())


def _fork(body: Callable[[int], None]) -> tuple[int, int]:
    """Fork a child that runs ``body(write_fd)`` and leaves without running the parent's clean-up;
    an exception in `body` is sent as an ``("error", message)`` frame. Returns (pid, read_fd)."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        raise
    if pid == 0:  # the child
        status = 0
        try:
            _die_with(parent)
            os.close(read_fd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
            try:
                body(write_fd)
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                status = 1
                write_frame(write_fd, ("error", f"{type(exc).__name__}: {exc}"))
        except BaseException:  # noqa: BLE001 - nothing to report to: the parent sees EOF
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    return pid, read_fd


def _die_with(parent: int) -> None:
    """In a child: ask Linux to kill it when `parent` ends (``PR_SET_PDEATHSIG``), so that a
    parent killed mid-job (a cancelled window job after its grace time) leaves no child working on
    for nobody; best effort. A parent already gone: leave now."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)


class _Child:
    """The parent's handle on a forked child: `kill` ends it, `_reap` collects it once."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self._fd, self._done = pid, fd, False

    def _read(self) -> tuple[str, object]:
        try:
            return read_frame(self._fd)
        except (EOFError, OSError, ValueError) as exc:
            raise ChildFailed(f"the child process ended without a result ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - an unreadable frame
            raise ChildFailed(f"the child process sent an unreadable result ({exc})") from None

    def stop(self) -> None:
        """Kill the child without reaping it (any thread): a read waiting on it then ends."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """End the child now (it may be computing) and reap it."""
        if not self._done:
            self.stop()
            self._reap()

    def _reap(self) -> None:
        if self._done:
            return
        self._done = True
        os.close(self._fd)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


class Forked(_Child):
    """One forked child computing ``fn()``; `result()` waits for it, `kill()` ends it early."""

    def __init__(self, fn: Callable[[], object]) -> None:
        super().__init__(*_fork(lambda fd: write_frame(fd, ("ok", fn()))))

    def result(self) -> object:
        """The child's return value; `ChildFailed` if it raised or died."""
        try:
            kind, value = self._read()
        finally:
            self._reap()
        if kind != "ok":
            raise ChildFailed(value)
        return value


class ForkedStream(_Child):
    """A forked child running ``fn(send)``, where ``send(item)`` hands an item to the parent at
    once; iterating yields the items as they come (`ChildFailed` if the child raised or died) and
    reaps the child at the end. `stop()` from another thread ends a read waiting on it."""

    def __init__(self, fn: Callable[[Callable[[object], None]], None]) -> None:
        def body(fd: int) -> None:
            fn(lambda item: write_frame(fd, ("item", item)))
            write_frame(fd, ("end", None))

        super().__init__(*_fork(body))
        _widen(self._fd)  # a child that runs ahead of its reader waits later

    def __iter__(self) -> Iterator[object]:
        try:
            while True:
                kind, value = self._read()
                if kind == "end":
                    return
                if kind != "item":
                    raise ChildFailed(value)
                yield value
        finally:
            self._reap()


def fork_call(fn: Callable[[], object]) -> Forked:
    """Start ``fn()`` in a forked child (`OSError` when the system refuses the fork)."""
    return Forked(fn)


def here_and_forked(here: Callable[[], object], there: Callable[[], object],
                    there_here: Callable[[], object] | None = None) -> tuple[object, object]:
    """``(here(), there())``, `there` computed in a forked child while `here` runs in this
    process (two halves of one job on two cores). Where the system refuses the fork, or the
    child fails, `there_here` (by default `there`) runs here afterwards; if `here` raises, the
    child is killed. The caller checks `can_fork` first."""
    instead = there if there_here is None else there_here
    try:
        child = fork_call(there)
    except OSError:
        return here(), instead()
    try:
        mine = here()
    except BaseException:
        child.kill()
        raise
    try:
        theirs = child.result()
    except ChildFailed:
        theirs = instead()
    return mine, theirs


def fork_stream(fn: Callable[[Callable[[object], None]], None]) -> ForkedStream:
    """Start ``fn(send)`` in a forked child whose items stream back (see `ForkedStream`)."""
    return ForkedStream(fn)


def fork_map(
    fn: Callable[[object], object],
    jobs: Iterable[object],
    *,
    processes: int,
) -> Iterator[object]:
    """Yield ``fn(job)`` for each job in order, each computed in a forked child, at most
    `processes` children at once; `ChildFailed` if a child raises. Closing the generator early
    (``contextlib.closing``, or a ``for`` loop left by an exception) kills the children still running.

    >>> list(fork_map(lambda n: n * n, [1, 2, 3], processes=2)) if can_fork() else [1, 4, 9]
    [1, 4, 9]
    """
    pending = iter(jobs)
    running: deque[Forked] = deque()

    def start_next() -> None:
        for job in pending:
            running.append(fork_call(lambda job=job: fn(job)))
            return

    try:
        for _ in range(max(1, processes)):
            start_next()
        while running:
            child = running.popleft()
            value = child.result()
            start_next()
            yield value
    finally:
        for child in running:
            child.kill()


# -- a child answering requests ---------------------------------------------------------------

Handler = Callable[[str, object, "np.ndarray | None"], tuple[object, "np.ndarray | None"]]


PIPE_BYTES = 1 << 20  # a request this big is written without waiting for the child to read


def _widen(fd: int) -> None:
    """Ask Linux for a bigger pipe buffer (best effort: the default is 64 KiB)."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass


class ForkedServer(_Child):
    """The parent's handle on a child answering requests (`fork_server`): an exception in the
    handler is sent back and raised by `receive` as `ChildFailed`, so is a child that died."""

    def __init__(self, handle: Handler) -> None:
        req_read, req_write = os.pipe()

        def body(fd: int) -> None:
            os.close(req_write)
            while True:
                try:
                    kind, payload, array = read_event(req_read)
                except EOFError:
                    return  # the parent closed the requests: done
                try:
                    out, out_array = handle(kind, payload, array)
                except Exception as exc:  # noqa: BLE001 - reported to the parent
                    write_event(fd, "error", f"{type(exc).__name__}: {exc}")
                    continue
                write_event(fd, "ok", out, out_array)

        _widen(req_write)
        try:
            super().__init__(*_fork(body))
        except OSError:
            os.close(req_write)
            raise
        finally:
            os.close(req_read)
        _widen(self._fd)
        self._requests = req_write
        self._waiting = 0  # requests sent and not yet answered

    def send(self, kind: str, payload: object = None, array: np.ndarray | None = None) -> None:
        """Send one request (`ChildFailed` if the child is gone)."""
        try:
            write_event(self._requests, kind, payload, array)
        except OSError as exc:
            raise ChildFailed(f"the child process is gone ({exc})") from None
        self._waiting += 1

    def receive(self) -> tuple[object, np.ndarray | None]:
        """The answer to the oldest request not yet answered: ``(payload, array)``."""
        if not self._waiting:
            raise RuntimeError("no request is waiting for an answer")
        try:
            kind, payload, array = read_event(self._fd)
        except (EOFError, OSError, ValueError) as exc:
            raise ChildFailed(f"the child process ended without an answer ({exc})") from None
        self._waiting -= 1
        if kind != "ok":
            raise ChildFailed(payload)
        return payload, array

    def close(self) -> None:
        """End the child (whatever it is doing) and reap it."""
        if self._requests >= 0:
            os.close(self._requests)
            self._requests = -1
        self.kill()


def fork_server(handle: Handler) -> ForkedServer:
    """Fork a child answering requests with `handle` (`OSError` when the system refuses)."""
    return ForkedServer(handle)
