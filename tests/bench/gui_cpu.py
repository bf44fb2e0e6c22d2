"""GUI-thread CPU per event, for the freeze benchmark.

Wall-clock stalls depend on the machine's load (a busy core can take the GUI thread off the CPU for
tens of milliseconds whatever the window does); the CPU time the GUI thread itself spends handling
one event depends on it far less (not at all only on an idle machine: shared caches and a busy
sibling hyperthread still slow the same work down, on a loaded two-vCPU machine by up to ~1.5x).
`CpuTimedApplication` wraps `QApplication.notify` and reads
`time.thread_time()` around every outermost delivery. Everything the GUI thread runs passes there:
input and paint events, `QTimer` timeouts (a `QTimerEvent` to the timer, whose Python slot runs
inside), zero-time single shots and queued signals from workers (`QMetaCallEvent`s). The benchmark's
own "hands" (a slider moved, a paste, a tokenizer switched) are timed the same way through
`CpuTimedApplication.action`. An event that runs an event loop of its own (a wait, a modal dialog)
is charged only its own work: the events that loop delivers are events of their own.

For each event over the budget a sampler thread records where the GUI thread's Python stack was
(every 2 ms once an event has run for 8 ms): the frames seen most often are a short profile of
that event. Work in Qt's C++ shows up as the Python frame that called into it; the event's biggest
nested deliveries (the paints of a window's update, two levels deep) are listed with it as `parts`.

Also here: `BareControl`, a bare PySide6 window (a QWidget and the same 1 ms timer, nothing else) in
a child process, whose stalls are measured phase by phase beside the app's under the same load.
"""

from __future__ import annotations

import gc
import heapq
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUDGET_MS = 16.0  # one frame at 60 Hz
PROFILE_MS = float(os.environ.get("GUI_CPU_PROFILE_MS", BUDGET_MS))  # events profiled (lower it to look closer)
SAMPLE_AFTER_S = 0.008
SAMPLE_EVERY_S = 0.002
WORST_KEPT = 5
OWN_FILES = (str(HERE / "gui_cpu.py"),)


def event_name(kind: int) -> str:
    from PySide6.QtCore import QEvent

    try:
        return QEvent.Type(kind).name
    except ValueError:
        return f"Event{kind}"


def describe(obj) -> str:
    """``Class(objectName)``, with the nearest named parent for unnamed ones (viewports)."""
    import shiboken6

    if obj is None or not shiboken6.isValid(obj):
        return "(deleted)"
    own = obj.objectName()
    name = f"{type(obj).__name__}({own})"
    if own and not own.startswith("qt_"):  # Qt's own names (qt_scrollarea_viewport) say little
        return name
    parent = obj.parent() if hasattr(obj, "parent") else None
    while parent is not None and (not parent.objectName() or parent.objectName().startswith("qt_")):
        parent = parent.parent()
    return name + (f" in {parent.objectName()}" if parent is not None else "")


class PhaseStats:
    """The GUI-CPU figures of one phase: every event's CPU, the worst few, those over budget."""

    def __init__(self) -> None:
        self.cpu_ms: list[float] = []
        self.worst: list[tuple[float, int, dict]] = []  # min-heap of (cpu ms, seq, record)
        self.over: list[dict] = []
        self.thread_cpu_s = 0.0  # the GUI thread's whole CPU in the phase (events + the rest)

    def add(self, cpu_ms: float, seq: int, record_fn) -> None:
        self.cpu_ms.append(cpu_ms)
        over = cpu_ms > BUDGET_MS
        if over or len(self.worst) < WORST_KEPT or cpu_ms > self.worst[0][0]:
            record = record_fn()
            if over:
                self.over.append(record)
            if len(self.worst) < WORST_KEPT:
                heapq.heappush(self.worst, (cpu_ms, seq, record))
            else:
                heapq.heappushpop(self.worst, (cpu_ms, seq, record))

    def summary(self) -> dict:
        c = sorted(self.cpu_ms) or [0.0]
        in_events = sum(c) / 1000
        by_what = Counter(r["what"] for r in self.over)
        return {
            "events": len(self.cpu_ms),
            "max_cpu_ms": round(c[-1], 2),
            "p99_cpu_ms": round(c[min(len(c) - 1, int(0.99 * len(c)))], 2),
            "over_16ms": len(self.over),
            "over_16ms_by_receiver": dict(by_what.most_common(10)),
            "cpu_in_events_s": round(in_events, 3),
            "cpu_outside_events_s": round(max(0.0, self.thread_cpu_s - in_events), 3),
            "worst": [r for _, _, r in sorted(self.worst, key=lambda t: (-t[0], t[1]))],
        }


class _Sampler:
    """Samples the GUI thread's Python stack while one outermost event runs long."""

    def __init__(self, app) -> None:
        self.app = app
        self.main = threading.main_thread().ident
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="gui-cpu-sampler")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            started, seq = self.app.event_started, self.app.event_seq
            if not started or time.perf_counter() - started < SAMPLE_AFTER_S:
                continue
            frame = sys._current_frames().get(self.main)
            stack = []
            while frame is not None and len(stack) < 40:
                code = frame.f_code
                if code.co_filename not in OWN_FILES:
                    stack.append(f"{_short(code.co_filename)}:{frame.f_lineno} {code.co_name}")
                frame = frame.f_back
            if seq == self.app.event_seq and self.app.event_started:
                self.app.samples.append(tuple(stack))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _short(path: str) -> str:
    for marker in ("/tokviz/", "/site-packages/", "/tests/bench/"):
        if marker in path:
            return path.split(marker, 1)[1] if marker != "/tokviz/" else "tokviz/" + path.split(marker, 1)[1]
    return Path(path).name


def short_profile(samples: list[tuple[str, ...]], top: int = 6) -> dict:
    """The innermost frames seen most often, and the most common stack (innermost first)."""
    if not samples:
        return {"samples": 0}
    leaves = Counter(s[0] for s in samples if s)
    own = Counter(next((f for f in s if f.startswith("tokviz/")), "(no tokviz frame)") for s in samples)
    stacks = Counter(s[:12] for s in samples)
    return {
        "samples": len(samples),
        "innermost": [f"{n}x {f}" for f, n in leaves.most_common(top)],
        "innermost_tokviz": [f"{n}x {f}" for f, n in own.most_common(top)],
        "stack": list(stacks.most_common(1)[0][0]),
    }


def cpu_timed_application(argv=None):
    """A `QApplication` whose `notify` measures the GUI thread's CPU per outermost event."""
    from PySide6.QtWidgets import QApplication

    class CpuTimedApplication(QApplication):
        def __init__(self, args) -> None:
            super().__init__(args)
            self.phase: str | None = None
            self.phases: dict[str, PhaseStats] = {}
            self.frames: list[dict] = []  # the outermost events being delivered, one per event loop level
            self._gui_thread = self.thread()
            self.event_seq = 0
            self.event_started = 0.0  # perf_counter of the running outermost event, 0 when none
            self.samples: list[tuple[str, ...]] = []
            self._phase_cpu0 = 0.0
            self._sampler = _Sampler(self)
            self.gc_ms = 0.0  # the GUI thread's time in the cyclic collector so far
            self.gc_oldest = -1  # the oldest generation it collected since the last event began
            self._gc_c0 = 0.0
            gc.callbacks.append(self._on_gc)

        def _on_gc(self, phase: str, info: dict) -> None:
            """Time the collector's passes that run on the GUI thread (an event's CPU may be a full
            collection of every object the window holds, not its own work)."""
            if threading.get_ident() != threading.main_thread().ident:
                return
            if phase == "start":
                self._gc_c0 = time.thread_time()
            else:
                self.gc_ms += 1000 * (time.thread_time() - self._gc_c0)
                self.gc_oldest = max(self.gc_oldest, info["generation"])

        def set_phase(self, phase: str | None) -> None:
            """Attribute the events that follow to `phase` (None: measure nothing)."""
            now = time.thread_time()
            if self.phase is not None:
                self.phases[self.phase].thread_cpu_s += now - self._phase_cpu0
            self.phase = phase
            self._phase_cpu0 = now
            if phase is not None:
                self.phases.setdefault(phase, PhaseStats())

        def _timed(self, deliver, what_fn):
            """Deliver, timing it when it is an outermost event: the first on the stack, or the
            first inside an event loop that a running event started (a modal dialog, a wait): the
            window reacts to those, so they are events of their own, not part of the one waiting."""
            if self.phase is None and not self.frames:
                return deliver()
            level = self._gui_thread.loopLevel()
            if self.frames and level <= self.frames[-1]["level"]:
                return self._nested(self.frames[-1], deliver, what_fn)
            w0 = time.perf_counter()
            frame = {"level": level, "w0": w0, "child_cpu": 0.0, "child_wall": 0.0, "samples": [],
                     "depth": 0, "parts": []}
            self.frames.append(frame)
            self.event_seq += 1
            seq = self.event_seq
            self.samples, self.event_started = frame["samples"], w0
            gc0, self.gc_oldest = self.gc_ms, -1
            c0 = time.thread_time()
            try:
                return deliver()
            finally:
                gc_ms, gc_gen = self.gc_ms - gc0, self.gc_oldest
                total_cpu = 1000 * (time.thread_time() - c0)
                total_wall = 1000 * (time.perf_counter() - w0)
                self.frames.pop()
                cpu, wall = total_cpu - frame["child_cpu"], total_wall - frame["child_wall"]
                if self.frames:  # the event whose inner loop ran this one goes on
                    parent = self.frames[-1]
                    parent["child_cpu"] += total_cpu
                    parent["child_wall"] += total_wall
                    self.samples, self.event_started = parent["samples"], parent["w0"]
                else:
                    self.event_started = 0.0
                if self.phase is not None:
                    samples = frame["samples"]

                    def record():
                        out = {"cpu_ms": round(cpu, 2), "wall_ms": round(wall, 2), "what": what_fn()}
                        if gc_ms > 0.5:  # the collector's share (generation 2: every object)
                            out["gc_ms"], out["gc_generation"] = round(gc_ms, 2), gc_gen
                        if len(self.frames) or level > 1:
                            out["event_loop_level"] = level
                        if cpu > PROFILE_MS:
                            out["profile"] = short_profile(samples)
                            parts = sorted(frame["parts"], reverse=True)[:8]
                            out["parts"] = [f"{ms:.1f} ms {what}" for ms, _, what in parts]
                        return out

                    self.phases[self.phase].add(cpu, seq, record)

        def _nested(self, frame, deliver, what_fn):
            """A delivery inside the running event (a child widget's paint, a sent event): the
            biggest direct ones are listed with the event, where its time went in Qt's C++."""
            frame["depth"] += 1
            c0 = time.thread_time()
            try:
                return deliver()
            finally:
                frame["depth"] -= 1
                ms = 1000 * (time.thread_time() - c0)
                if frame["depth"] <= 1 and ms > 1.0:  # the event's direct deliveries, and theirs (paints)
                    frame["parts"].append((ms, len(frame["parts"]), "  " * frame["depth"] + what_fn()))

        def notify(self, receiver, event):
            kind = event.type()
            cls = type(receiver).__name__
            return self._timed(lambda: super(CpuTimedApplication, self).notify(receiver, event),
                               lambda: f"{describe(receiver) if receiver is not None else cls} {event_name(kind)}")

        def action(self, name: str, fn) -> None:
            """Run a benchmark 'hand' (a paste, a slider move) as one timed event."""
            self._timed(fn, lambda: f"action {name}")

        def summaries(self) -> dict[str, dict]:
            self.set_phase(self.phase)  # close the running phase's CPU total
            return {p: s.summary() for p, s in self.phases.items()}

        def close_sampler(self) -> None:
            self._sampler.stop()

    return CpuTimedApplication(list(argv or sys.argv[:1]))


CONTROL_SCRIPT = r"""
import json, os, sys, threading
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QWidget
from bench_app import StallMeter

app = QApplication(sys.argv[:1])
w = QWidget()
w.resize(400, 300)
w.show()
meter = StallMeter()

class Bridge(QObject):
    line = Signal(str)

def on_line(text):
    if text == "quit":
        meter.stop()
        print(json.dumps({p: meter.summary(p) for p in meter.gaps}), flush=True)
        app.quit()
    elif text == "stop":
        meter.stop()
    else:
        meter.start(text)

bridge = Bridge()
bridge.line.connect(on_line)

def read():
    try:
        for raw in sys.stdin:
            bridge.line.emit(raw.strip())
        bridge.line.emit("quit")
    except RuntimeError:  # the window has quit and taken the bridge with it
        pass

threading.Thread(target=read, daemon=True).start()
print("ready", flush=True)
app.exec()
"""


class BareControl:
    """A bare PySide6 window in a child process, its 1 ms timer's gaps measured phase by phase."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CONTROL_SCRIPT, str(HERE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the bare-Qt control did not start")

    def _send(self, line: str) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()

    def start(self, phase: str) -> None:
        self._send(phase)

    def stop(self) -> None:
        self._send("stop")

    def finish(self) -> dict[str, dict]:
        """Stop the child and return its stall summary per phase."""
        try:
            self._send("quit")
            out, _ = self.proc.communicate(timeout=30)
            last = [ln for ln in out.splitlines() if ln.startswith("{")]
            return json.loads(last[-1]) if last else {}
        except (subprocess.TimeoutExpired, ValueError, OSError):
            self.proc.kill()
            self.proc.wait()
            return {}


def busy_children(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def pin_to_two_cores() -> list[int]:
    """Keep this process and its children (busy loops, workers, the control) on two cores, as on a
    two-core laptop, so four busy processes oversubscribe the machine whatever its size."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    os.sched_setaffinity(0, cpus)
    return cpus
