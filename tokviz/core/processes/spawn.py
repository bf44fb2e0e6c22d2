"""Work in a fresh, isolated child interpreter that talks to its parent through pipes: both sides.

A child runs ``python -I`` (isolated: neither the working directory nor PYTHON* variables reach its
``sys.path``, so a ``regex.py`` planted where tokviz was started is never imported) with this tokviz's
folder put first, then the module as ``__main__``; its stdin carries the job, then any frame or the
end of input means "stop" (`watch_parent`); its stdout carries events (`pipes`) ending with
``done`` (or a last event the caller names), ``cancelled``, ``failed`` (message) or ``error``
(traceback). The window uses it for long jobs (training, embeddings) because nothing of the
window's threads or Qt state is inherited; short jobs on loaded data fork instead (`fork`).

Child side: `child_pipes`, `watch_parent`, `run_child`, `exit_child`. Parent side: `ChildProcess`
(start at a chosen CPU priority, thread-safe sends that never wait, events, stop and reap).
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import tokviz
from tokviz.core.errors import TokvizError
from tokviz.core.errors import Cancelled

from .fork import fork_safe_thread
from .pipes import read_event, read_frame, write_event, write_frame

if TYPE_CHECKING:  # a child that sends no array (the chat-template child) starts without numpy
    import numpy as np

CHILD_EXIT_SECONDS = 3.0  # after a stop, how long the child may take before it is killed
LAST_EVENTS = ("done", "finished", "cancelled", "failed", "error")  # the child ends after these
JOB_ERRORS = (EOFError, pickle.UnpicklingError, ValueError, TypeError)  # a bad or missing job

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

    fork_safe_thread(watch, name="watch-parent")  # blocks in os.read only: counting may still fork


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
