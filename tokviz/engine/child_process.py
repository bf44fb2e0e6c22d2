"""Work in a child Python process that talks to its parent through pipes: both sides.

The protocol: length-prefixed pickles ("frames") on raw file descriptors, and events: a frame
``(kind, payload, (shape, dtype) or None)``, followed by the array's raw bytes when there is one.
A child runs ``python -I`` (isolated: neither the working directory nor PYTHON* variables reach its
``sys.path``, so a ``regex.py`` planted where tokviz was started is never imported) with this tokviz's
folder put first, then the module as ``__main__``; its stdin carries the job, then any frame or the end of input
means "stop" (`watch_parent`); its stdout carries events ending with ``done`` (or a last event
the caller names), ``cancelled``, ``failed`` (message) or ``error`` (traceback).

Child side: `child_pipes`, `watch_parent`, `run_child`, `exit_child`. Parent side: `ChildProcess`
(start at a chosen CPU priority, thread-safe sends that never wait, events, stop and reap) and
`ChildWorkerMixin` (a worker's cancel reaches its child). Used by the training (`training_child`)
and embedding (`embedding_child`) workers.

Pure Python + numpy (no Qt): child processes import this module.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

import tokviz
from tokviz.core import Cancelled, TokvizError
from tokviz.core.io.pipes import read_exact, write_all

CHILD_EXIT_SECONDS = 3.0  # after a stop, how long the child may take before it is killed
LAST_EVENTS = ("done", "finished", "cancelled", "failed", "error")  # the child ends after these
JOB_ERRORS = (EOFError, pickle.UnpicklingError, ValueError, TypeError)  # a bad or missing job

# -- frames on raw descriptors (`tokviz.core.io.pipes`): a thread blocked reading can never deadlock a
# process forked meanwhile (a counting pool), and no read-ahead buffer can swallow a "stop".

_HEADER = struct.Struct("<Q")


def write_frame(fd: int, obj: object) -> None:
    """Write one pickled object to `fd`."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    write_all(fd, _HEADER.pack(len(data)) + data)


def read_frame(fd: int) -> object:
    """Read one object written by `write_frame`; `EOFError` when the pipe is closed."""
    (n,) = _HEADER.unpack(read_exact(fd, _HEADER.size))
    return pickle.loads(read_exact(fd, n))


def write_event(fd: int, kind: str, payload: object = None, array: np.ndarray | None = None) -> None:
    """One frame ``(kind, payload, (shape, dtype) or None)``, then the array's bytes."""
    if array is None:
        write_frame(fd, (kind, payload, None))
        return
    a = np.ascontiguousarray(array)
    write_frame(fd, (kind, payload, (a.shape, a.dtype.str)))
    write_all(fd, a)


def read_event(fd: int) -> tuple[str, object, np.ndarray | None]:
    """Read what `write_event` wrote; `EOFError` when the pipe is closed."""
    kind, payload, spec = read_frame(fd)
    if spec is None:
        return kind, payload, None
    array = np.empty(spec[0], dtype=np.dtype(spec[1]))
    view, done = memoryview(array).cast("B"), 0
    while done < len(view):
        if hasattr(os, "readv"):  # straight into the array; the GIL is free while it waits
            n = os.readv(fd, [view[done:]])
        else:  # pragma: no cover - Windows
            chunk = os.read(fd, len(view) - done)
            n = len(chunk)
            view[done : done + n] = chunk
        if n == 0:
            raise EOFError("the other side closed the pipe")
        done += n
    return kind, payload, array


# -- the child's side ------------------------------------------------------------------------------


def child_pipes() -> tuple[int, int]:
    """Take stdin and stdout for frames; return their (in, out) descriptors.

    Stray prints then go to stderr, never into the event pipe, and Ctrl+C in the terminal is
    left to the window.
    """
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdin = None  # a forked pool worker would otherwise try to close it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return fd_in, fd_out


def watch_parent(fd_in: int, stop: threading.Event, on_frame: Callable[[object], bool] = lambda _: False) -> None:
    """Read the parent's frames on a daemon thread; set `stop` at the first frame `on_frame` does
    not accept (returns False), at the end of input (the window went away) or on garbage."""

    def watch() -> None:
        try:
            while on_frame(read_frame(fd_in)):
                pass
        except Exception:  # noqa: BLE001 - end of input or garbage: stop either way
            pass
        stop.set()

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def run_child(body: Callable[[], None], fd_out: int, *, memory_hint: str) -> int:
    """Run `body`, ending the event stream for how it ended; return the exit status."""
    try:
        body()
    except Cancelled:
        write_event(fd_out, "cancelled")
    except TokvizError as exc:
        write_event(fd_out, "failed", str(exc))
    except MemoryError:
        write_event(fd_out, "failed", f"out of memory: {memory_hint}")
    except OSError:  # the window went away
        return 1
    except Exception:  # noqa: BLE001 - report, never leave the parent waiting
        try:
            write_event(fd_out, "error", traceback.format_exc())
        except OSError:
            pass
        return 1
    return 0


def exit_child(main: Callable[[], int]) -> None:
    """Run a child's `main` and exit at once: a normal interpreter shutdown would wait on the
    thread blocked reading stdin."""
    status = main()
    sys.stderr.flush()
    os._exit(status)


# -- the parent's side -----------------------------------------------------------------------------


# The child's first lines: this tokviz first on the path (an isolated interpreter still sees
# site-packages, where an installed tokviz lives), then the module run as ``python -m`` would.
_BOOT = "import runpy, sys; sys.path.insert(0, sys.argv[1]); runpy.run_module(sys.argv[2], run_name='__main__')"


class ChildProcess:
    """An isolated ``python -m module`` with pipes, importing this tokviz, its BLAS leaving a core free.

    `niceness` lowers its CPU priority below the window's. The worker thread writes the job
    (`write_job`), reads `events` and finally `close`s; any thread may `send` (never waits).
    """

    def __init__(self, module: str, *, niceness: int = 0) -> None:
        env = dict(os.environ)
        root = str(Path(tokviz.__file__).resolve().parents[1])
        threads = str(max(1, (os.cpu_count() or 2) - 1))  # BLAS threads: one core stays free
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(name, threads)
        self.proc = subprocess.Popen([sys.executable, "-I", "-c", _BOOT, root, module], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, bufsize=0, cwd=root)
        if niceness and hasattr(os, "setpriority"):  # at once, before it spends CPU on its imports
            try:
                own = os.getpriority(os.PRIO_PROCESS, 0)
                os.setpriority(os.PRIO_PROCESS, self.proc.pid, min(19, own + niceness))
            except OSError:  # pragma: no cover - not allowed or already gone: normal priority
                pass
        self.ended = False  # the child sent its last event (or died): it exits on its own
        self._lock = threading.Lock()
        self._closed = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, obj: object, *, wait: bool = False) -> None:
        """Write one frame to the child; thread-safe. Skipped while another thread is writing
        (unless `wait`), and once the child is closed or gone."""
        if not self._lock.acquire(blocking=wait):
            return
        try:
            if not self._closed:
                write_frame(self.proc.stdin.fileno(), obj)
        except (OSError, ValueError):  # already gone or closed
            pass
        finally:
            self._lock.release()

    def write_job(self, write: Callable[[int], None], should_stop: Callable[[], bool]) -> None:
        """`write(fd)` the job; other threads' sends skip meanwhile, so a stop asked for meanwhile
        is sent afterwards."""
        with self._lock:
            write(self.proc.stdin.fileno())
        if should_stop():
            self.send("stop", wait=True)

    def events(self, check_cancelled: Callable[[], None]) -> Iterator[tuple[str, object, np.ndarray | None]]:
        """The child's events ``(kind, payload, array)`` until ``done``. Its ``cancelled``,
        ``failed`` and ``error`` raise `Cancelled`, `TokvizError` and `RuntimeError`; a child that
        ends without one raises `RuntimeError` with its exit code (after `check_cancelled()`)."""
        fd = self.proc.stdout.fileno()
        while True:
            try:
                kind, payload, array = read_event(fd)
            except EOFError:
                raise self.crash_error(check_cancelled) from None
            self.ended = kind in LAST_EVENTS
            if kind == "done":
                return
            if kind == "cancelled":
                raise Cancelled()
            if kind == "failed":
                raise TokvizError(payload)
            if kind == "error":
                raise RuntimeError(f"the training process failed:\n{payload}")
            yield kind, payload, array

    def crash_error(self, check_cancelled: Callable[[], None]) -> RuntimeError:
        """The error for a child that went away without a last event (after `check_cancelled()`:
        we may have asked it to)."""
        check_cancelled()
        self.ended = True
        return RuntimeError(f"the training process stopped unexpectedly (exit code {self.proc.wait()})")

    def close(self, *, kill_unfinished: bool = False) -> None:
        """Close the pipes and reap the child. One that has not ended gets the end of input (its
        "stop") and `CHILD_EXIT_SECONDS` to exit, or with `kill_unfinished` is killed at once (it
        may be blocked writing)."""
        with self._lock:
            self._closed = True
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        if kill_unfinished and not self.ended:
            self.proc.kill()
        try:
            self.proc.wait(CHILD_EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


class ChildWorkerMixin:
    """For a `BackgroundWorker` whose job runs in ``self._child`` (a `ChildProcess` while it
    runs): `cancel` tells the child to stop too. Thread-safe, never waits: while the job is still
    being written, `ChildProcess.write_job` sends the stop afterwards."""

    _child: ChildProcess | None = None

    def cancel(self) -> None:
        super().cancel()
        self.send_to_child("stop")

    def send_to_child(self, obj: object) -> None:
        """Send `obj` to the running child, if any (see `ChildProcess.send`)."""
        child = self._child
        if child is not None:
            child.send(obj)
