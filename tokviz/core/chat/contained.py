"""`TemplateRunner`: chat templates rendered in a child process that can be killed, with hard limits.

A template is a program from someone else. The sandbox's own checks (`tokviz.core.chat.sandbox`)
stop most runaway templates quickly and name the line, but work done inside one filter or
operator (``'%1000000000d' % 1``, ``replace('', ...)``, ``tojson(indent=...)``) escapes them, and
a thread cannot be stopped. So every render runs in a warm child (`tokviz.core.chat.child`,
started once through `tokviz.core.processes.spawn.ChildProcess` and reused: an ordinary render
costs a round trip through two pipes) under three limits:

- a wall-clock deadline kept here: a render still running `KILL_GRACE` after its `timeout` is
  killed and reaped (`TemplateStopped`, ``limit == "time"``);
- CPU time (``RLIMIT_CPU``) and address space (``RLIMIT_AS``, `MEMORY_LIMIT_BYTES` beyond what the
  child holds after start-up), set by the child on POSIX (on Linux for memory), so the kernel ends
  a render even when this process cannot act (``"cpu"``, ``"memory"``).

A cancelled render (`should_stop` true, checked when `wake` is called) gets `CANCEL_GRACE` to
answer, then is killed; `close` kills at once and for good (window close). After any other kill
the next render starts a fresh child. Answers are read by a helper thread that only blocks in ``os.read`` (a
`fork_safe_thread`), so waiting has a deadline on every platform and forking stays allowed.

What this leaves out: the template language and its in-process checks (`sandbox`), what is
rendered (`tokviz.core.chat.render`).
"""

from __future__ import annotations

import functools
import math
import queue
import signal
import threading
import time
import weakref
from collections.abc import Callable, Mapping

from tokviz.core.processes.fork import fork_safe_thread
from tokviz.core.processes.pipes import read_event
from tokviz.core.processes.spawn import ChildProcess
from tokviz.core.errors import Cancelled

from .sandbox import DEFAULT_TIMEOUT, Rendered, TemplateError, TemplateTimeout

MEMORY_LIMIT_BYTES = 512 << 20  # what a render may allocate (a 4k-token prompt needs well under 1 MB)
KILL_GRACE = 0.25  # seconds past the timeout before the kill: the sandbox's own timeout names the line
CANCEL_GRACE = 0.1  # seconds a cancelled render may take to finish before it is killed
START_SECONDS = 60.0  # a child not ready by then (a machine swapping hard) counts as crashed
_WAKE = object()  # queued by `wake`: look at should_stop
_ENDED = object()  # queued by the reader: the child's output ended


class TemplateStopped(TemplateError):
    """A template stopped because it passed a hard limit; `limit` is ``"time"``, ``"cpu"``,
    ``"memory"`` or ``"crash"`` (its process ended otherwise)."""

    def __init__(self, limit: str, reason: str) -> None:
        super().__init__(reason)
        self.limit = limit
        self.args = (f"chat template stopped: {reason}",)


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class _Child:
    """One running child and the thread that queues its answers."""

    def __init__(self, memory_bytes: int) -> None:
        self.process = ChildProcess("tokviz.core.chat.child")
        self.answers: queue.SimpleQueue = queue.SimpleQueue()
        self.ready = False
        self.killed = False  # ended by this process (close, deadline, cancel)
        self._kill_lock = threading.Lock()
        fd = self.process.proc.stdout.fileno()
        self.reader = fork_safe_thread(functools.partial(self._read, fd), name="chat-template-answers")
        self.process.send((memory_bytes,), wait=True)

    def _read(self, fd: int) -> None:
        try:
            while True:
                self.answers.put(read_event(fd))
        except BaseException:  # noqa: BLE001 - the end of output (or garbage): the child is done
            self.answers.put(_ENDED)

    def exit_code(self) -> int | None:
        """Wait for the child to end (its output has ended) and return its exit code."""
        try:
            return self.process.proc.wait(5)
        except Exception:  # noqa: BLE001 - still there: kill it
            self.kill()
            return self.process.proc.returncode

    def kill(self) -> None:
        """End the child now and reap it (any thread, once)."""
        with self._kill_lock:
            if self.killed:
                return
            self.killed = True
        self.process.proc.kill()
        self.process.proc.wait()
        self.reader.join(5)  # its read ends at once: only then may the pipe be closed
        self.process.close(kill_unfinished=True)


class _Slot:
    """The runner's current child (None before the first render and after a kill); the finalizer
    holds this, not the runner, so a runner dropped or left at exit still ends its child."""

    def __init__(self) -> None:
        self.child: _Child | None = None

    def close(self) -> None:
        child, self.child = self.child, None
        if child is not None:  # idle or not, it holds nothing worth a goodbye
            child.kill()


class TemplateRunner:
    """Renders templates in a warm child process with hard limits (see the module docstring).

    Thread-safe: renders run one at a time; `wake` and `close` may be called from any thread.
    `cpu_seconds` is the CPU time one render may use (default: its timeout rounded up, plus 1)."""

    def __init__(self, *, memory_bytes: int = MEMORY_LIMIT_BYTES, cpu_seconds: float | None = None) -> None:
        self.memory_bytes = memory_bytes
        self.cpu_seconds = cpu_seconds
        self._lock = threading.Lock()
        self._slot = _Slot()
        self._closed = False
        weakref.finalize(self, self._slot.close)

    @property
    def pid(self) -> int | None:
        """The current child's process id (None when there is none)."""
        child = self._slot.child
        return child.process.pid if child is not None else None

    @property
    def rendering(self) -> bool:
        """True while a render waits for its child."""
        return self._lock.locked()

    def start(self) -> None:
        """Start the child now, if none runs, without waiting for it (its start-up then overlaps
        other work: loading the model)."""
        if not self._closed and self._lock.acquire(blocking=False):
            try:
                self._child()
            finally:
                self._lock.release()

    def wake(self) -> None:
        """Make a render in progress look at its `should_stop` now (any thread)."""
        child = self._slot.child
        if child is not None:
            child.answers.put(_WAKE)

    def close(self) -> None:
        """Kill the child: a render in progress, and any later one, raises `Cancelled`."""
        self._closed = True
        child, self._slot.child = self._slot.child, None
        if child is not None:
            child.kill()

    def render(self, source: str, variables: Mapping[str, object], *, timeout: float = DEFAULT_TIMEOUT,
               should_stop: Callable[[], bool] | None = None) -> str:
        """`tokviz.core.chat.sandbox.render_template` in the child: the same text and the same
        `TemplateError`s, plus `TemplateStopped` for a template that passed a hard limit and
        `Cancelled` when `should_stop()` turned true (or `close` was called)."""
        return self.render_tracked(source, variables, timeout=timeout, should_stop=should_stop).text

    def render_tracked(self, source: str, variables: Mapping[str, object], *, timeout: float = DEFAULT_TIMEOUT,
                       should_stop: Callable[[], bool] | None = None) -> Rendered:
        """`render`, with the spans of the ``{% generation %}`` blocks
        (`tokviz.core.chat.sandbox.render_tracked` in the child)."""
        cpu = self.cpu_seconds if self.cpu_seconds is not None else math.ceil(timeout) + 1
        with self._lock:
            if self._closed or (should_stop is not None and should_stop()):
                raise Cancelled()
            child = self._ready_child(should_stop)
            if should_stop is not None and should_stop():  # while the child was starting
                raise Cancelled()
            child.process.send((source, dict(variables), timeout, cpu), wait=True)
            text, generation = self._wait(child, timeout + KILL_GRACE, should_stop, (timeout, cpu))
            return Rendered(text, tuple(generation))

    # -- inside a render (the lock held) ------------------------------------------------------

    def _child(self) -> _Child:
        if self._slot.child is None:
            try:
                self._slot.child = _Child(self.memory_bytes)
            except OSError as exc:  # no process to be had (too many, no memory)
                raise TemplateStopped("crash", f"its process could not start ({exc.strerror or exc})") from None
            if self._closed:  # closed from another thread meanwhile
                self.close()
                raise Cancelled()
        return self._slot.child

    def _ready_child(self, should_stop: Callable[[], bool] | None) -> _Child:
        """The child, started and idle, its queue emptied of earlier wake-ups; a fresh one when
        the last ended while idle (killed from outside)."""
        child = self._child()
        if child.ready:
            ended = child.process.proc.poll() is not None
            while True:
                try:
                    ended = child.answers.get_nowait() is _ENDED or ended
                except queue.Empty:
                    break
            if not ended:
                return child
            self._drop(child)
            child = self._child()
        self._wait(child, START_SECONDS, should_stop, None)
        return child

    def _drop(self, child: _Child) -> None:
        if self._slot.child is child:
            self._slot.child = None
        child.kill()

    def _wait(self, child: _Child, seconds: float, should_stop: Callable[[], bool] | None,
              limits: tuple[float, float] | None) -> tuple | None:
        """The child's next event, as ``(text, generation spans)`` or an exception; `limits` (timeout, cpu seconds) is
        None while waiting for ``ready``."""
        deadline = time.monotonic() + seconds
        cancelled = False
        while True:
            left = deadline - time.monotonic()
            try:
                item = child.answers.get(timeout=left) if left > 0 else None
            except queue.Empty:
                item = None
            if item is None:  # the deadline passed
                self._drop(child)
                if cancelled:
                    raise Cancelled()
                if limits is None:
                    raise TemplateStopped("crash", f"its process did not start within {seconds:g} s")
                raise TemplateStopped("time", f"it ran past the {limits[0]:g} s time limit")
            if item is _WAKE:
                if not cancelled and should_stop is not None and should_stop():
                    cancelled = True
                    deadline = min(deadline, time.monotonic() + CANCEL_GRACE)
                continue
            if item is _ENDED:
                self._ended(child, limits)
            kind, payload, _ = item
            if kind == "ready":
                child.ready = True
                return None
            if kind == "ok":
                return payload
            what, reason, line = payload
            if what == "memory":
                self._drop(child)  # a fresh child after an allocation failure: nothing half-made stays
                raise TemplateStopped("memory", f"it used more than {self.memory_bytes >> 20} MB of memory")
            raise (TemplateTimeout if what == "timeout" else TemplateError)(reason, line)

    def _ended(self, child: _Child, limits: tuple[float, float] | None) -> None:
        """The child's output ended before its answer: raise what ended it."""
        if self._slot.child is child:
            self._slot.child = None
        if child.killed:  # `close` from another thread
            raise Cancelled()
        code = child.exit_code()
        child.kill()
        xcpu = getattr(signal, "SIGXCPU", None)  # (POSIX only)
        if limits is not None and xcpu is not None and code == -xcpu:
            raise TemplateStopped("cpu", f"it ran past the {limits[1]:g} s CPU-time limit")
        raise TemplateStopped("crash", f"its process ended unexpectedly ({_describe_exit(code)})")


@functools.lru_cache(maxsize=1)
def default_runner() -> TemplateRunner:
    """The runner of this process's renders when none is given (the command line, scripts)."""
    return TemplateRunner()
