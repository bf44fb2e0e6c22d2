"""The chat-template child: renders untrusted templates for `TemplateRunner`, under hard limits.

Started as ``python -I -m tokviz.core.chat.child`` (`tokviz.core.processes.spawn.ChildProcess`);
it imports the sandbox and Jinja2, no tokenizer. Its first frame from the parent is the memory
limit in bytes: on Linux its address space is capped at what it holds then plus that
(``RLIMIT_AS``: an allocation past it is a `MemoryError`), core dumps are off, and it answers
``ready``. Then each job frame ``(source, variables, timeout, cpu_seconds)`` gets exactly one
event, ``("ok", (text, generation spans))`` or ``("failed", (kind, reason, line))`` with kind ``"error"``,
``"timeout"`` or ``"memory"``. Before each job the CPU-time limit (``RLIMIT_CPU``) is set to the
time used so far plus ``cpu_seconds``: a render that outlives it is ended by the kernel
(``SIGXCPU``) even when the parent cannot act. The end of input ends the child.

What this leaves out: the wall-clock deadline and the kill (the parent, `tokviz.core.chat.contained`).
"""

from __future__ import annotations

import math
import os
import sys

from tokviz.core.processes.pipes import read_frame, write_event
from tokviz.core.processes.spawn import JOB_ERRORS, child_pipes, exit_child

from .sandbox import TemplateError, TemplateOutOfMemory, TemplateTimeout, render_tracked

try:
    import resource
except ImportError:  # pragma: no cover - Windows: the parent's deadline alone
    resource = None


def held_bytes() -> int | None:
    """This process's address space now (Linux), or None where it cannot be read."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def _set_soft(which: int, soft: int) -> None:
    """Set a soft limit, never above the hard one (which only root could raise)."""
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def limit_memory(extra_bytes: int) -> None:
    """Cap the address space at what this process holds now plus `extra_bytes`; no core dumps
    (a render the kernel ends writes no multi-gigabyte core file)."""
    if resource is None:
        return
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    held = held_bytes()
    if held is None:  # macOS and others: the address space says little there; the deadline holds
        return
    try:
        _set_soft(resource.RLIMIT_AS, held + extra_bytes)
    except (ValueError, OSError):
        pass


def limit_cpu(seconds: float) -> None:
    """Let the kernel end this process once it has used `seconds` more of CPU time."""
    if resource is None:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    try:
        _set_soft(resource.RLIMIT_CPU, math.ceil(usage.ru_utime + usage.ru_stime + seconds))
    except (ValueError, OSError):
        pass


def answer(source: str, variables: dict, timeout: float) -> tuple[str, object]:
    """The event for one job: ``("ok", (text, generation spans))`` or ``("failed", (kind, reason, line))``."""
    try:
        rendered = render_tracked(source, variables, timeout=timeout)
        return "ok", (rendered.text, rendered.generation)
    except TemplateOutOfMemory as exc:
        return "failed", ("memory", exc.reason, exc.line)
    except TemplateTimeout as exc:
        return "failed", ("timeout", exc.reason, exc.line)
    except TemplateError as exc:
        return "failed", ("error", exc.reason, exc.line)
    except MemoryError:
        return "failed", ("memory", "the template needs more memory than this process may use", None)
    except Exception as exc:  # noqa: BLE001 - the parent gets one line, never a traceback
        return "failed", ("error", f"{type(exc).__name__}: {exc}", None)


def child_main() -> int:
    """Entry point (``python -m tokviz.core.chat.child``): see the module docstring."""
    fd_in, fd_out = child_pipes()
    # nothing of a render reaches the terminal: a crash under the limits is the parent's one line
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    sys.stderr = open(devnull, "w", closefd=False)  # noqa: SIM115 - lives as long as the child
    try:
        (memory_bytes,) = read_frame(fd_in)
    except JOB_ERRORS:
        return 1
    limit_memory(memory_bytes)
    try:
        write_event(fd_out, "ready")
        while True:
            try:
                source, variables, timeout, cpu_seconds = read_frame(fd_in)
            except JOB_ERRORS:  # the end of input: the parent is done with us
                return 0
            limit_cpu(cpu_seconds)
            write_event(fd_out, *answer(source, variables, timeout))
    except OSError:  # the parent went away
        return 1


if __name__ == "__main__":
    exit_child(child_main)
