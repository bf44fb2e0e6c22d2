"""The comparison in a child process: what the Compare panel runs, both sides of it.

In a fresh isolated interpreter (`tokviz.core.processes.spawn.ChildProcess`) the window's thread
never waits for the GIL while 5 MB are encoded, and the child's main thread may fork
(`tokviz.core.processes.parallel.choose_processes`): two models or more are measured side by side on
every core. Child side:
`child_main` reads one job frame ``(text or Path, [ModelSpec, ...], by_document, reference)``
(specs whose ``open`` pickles: ``functools.partial`` of a module function), then any frame or the
end of input means "stop"; it writes ``("progress", (what, fraction))`` and
``("partial", CompareBatch)`` events (what is measured so far, batched), then
``("result", Comparison)``, ending with ``done``, ``cancelled``, ``failed`` or ``error``. Parent
side: `start_job`, used by `tokviz.engine.compare_engine`. Imports no Qt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from tokviz.core.compare import ModelSpec
from tokviz.core.processes.parallel import choose_processes
from tokviz.core.processes.pipes import read_frame, write_event, write_frame
from tokviz.core.processes.spawn import JOB_ERRORS, child_pipes, exit_child, run_child, watch_parent

from .compare_task import open_any_model, run_comparison

PROGRESS_SECONDS = 0.05


def _identity(value):
    return value


def path_spec(label: str, path: str, step: int | None = None) -> ModelSpec:
    """A spec that opens `path` wherever it runs (it pickles)."""
    return ModelSpec(label, partial(open_any_model, str(path)), step)


def timeline_spec(label: str, timeline, step: int | None = None) -> ModelSpec:
    """A spec for a timeline held in memory (pickled whole to the child)."""
    return ModelSpec(label, partial(_identity, timeline), step)


def child_main() -> int:
    """Entry point (``python -m tokviz.engine.compare_child``): see the module docstring."""
    fd_in, fd_out = child_pipes()
    stop = threading.Event()
    try:
        text, specs, by_document, reference = read_frame(fd_in)
    except JOB_ERRORS:
        return 1
    watch_parent(fd_in, stop)
    processes = choose_processes(independent=True)  # the models never wait for each other
    last = [0.0]

    def progress(what: str, fraction: float) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            write_event(fd_out, "progress", (what, fraction))

    def run() -> None:
        result = run_comparison(text, specs, by_document=by_document, reference=reference,
                                should_stop=stop.is_set, progress=progress, processes=processes,
                                partial=lambda batch: write_event(fd_out, "partial", batch))
        write_event(fd_out, "result", result)
        write_event(fd_out, "done")

    return run_child(run, fd_out, memory_hint="try fewer models or a smaller text")


def start_job(child, text: str | Path, specs: Sequence[ModelSpec], by_document: bool,
              reference: int | str | None, should_stop) -> None:
    """Send the job to a started `ChildProcess`."""
    child.write_job(lambda fd: write_frame(fd, (text, list(specs), by_document, reference)), should_stop)


if __name__ == "__main__":
    from tokviz.engine.compare_child import child_main as main  # pickles name that module

    exit_child(main)
