"""Benchmark: the GUI thread's own work per event, and the freezes it leaves, in the window's big flows
under load.

Busy-loop child processes run for the whole benchmark (``--load 1``: one, a laptop doing other work;
``--load 4``: four, with everything pinned to two cores, an oversubscribed machine). Two measures:

* GUI-thread CPU per event (`gui_cpu`): ``time.thread_time()`` around every outermost
  ``QApplication.notify`` (input, paint, timer callbacks, queued signals) and around the benchmark's
  own "hands". It does not depend on the load, so it is the figure to hold under budget: every event
  under 16 ms. Each event over budget is listed with its receiver, event type and a sampled profile.
* Wall stalls: a 1 ms precise timer on the GUI thread records the gaps between its firings
  (`StallMeter` of `bench_app`); beside it, the same timer in a bare PySide6 window in another
  process (`gui_cpu.BareControl`), measured over the same phases in the same run, shows what the load
  alone does to a window that does nothing.

Flows, in order:

0. nothing, for 3 s (the noise floor);
1. open gutenberg30 (31.8 MB) as the corpus;
2. train on it (vocabulary 5,000) in the window;
3. paste 1 MB into the token view (until it is encoded, compared and laid out);
4. switch tokenizers while typing: 40 keystrokes 30 ms apart into a 100 KB text, the current model
   switching between the trained one and GPT-2 every 8 keystrokes;
5. scrub the timeline: 120 slider moves 16 ms apart across the trained model's merges.

``--runs N`` repeats flows 3-5 (the cheap ones); flows 1-2 run once per launch. Prints a table and
writes tests/bench/results/freezes_load{N}.json.

Run: QT_QPA_PLATFORM=offscreen python tests/bench/bench_freezes.py --load 1|4 [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_app import StallMeter
from gui_cpu import BUDGET_MS, BareControl, busy_children, cpu_timed_application, pin_to_two_cores

ROOT = HERE.parents[1]
SHARED = ROOT.parent / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
GUTENBERG = SHARED / "corpora" / "gutenberg30.txt"
SHAKESPEARE = SHARED / "corpora" / "tinyshakespeare.txt"
GPT2 = SHARED / "vocab" / "gpt2-data-gym" / "vocab.bpe"
RESULTS = HERE / "results"


def run_until(app, predicate, timeout_s: float) -> bool:
    """Turn the event loop until `predicate()` holds, sleeping between events as `exec()` does (a
    busy `processEvents` loop would itself keep a core busy and fight the workers for the GIL)."""
    from PySide6.QtCore import QEventLoop, Qt, QTimer

    end = time.monotonic() + timeout_s
    if predicate():
        return True
    loop = QEventLoop()
    poll = QTimer(interval=2)
    poll.setTimerType(Qt.TimerType.PreciseTimer)
    poll.timeout.connect(lambda: (predicate() or time.monotonic() > end) and loop.quit())
    poll.start()
    loop.exec()
    poll.stop()
    return predicate()


def spaced(app, actions, interval_ms: int) -> None:
    """Run each action `interval_ms` apart while the event loop turns (like a user's hands)."""
    for act in actions:
        act()
        run_until(app, lambda: False, interval_ms / 1000)


def token_view_done(panel, n_chars: int):
    def done() -> bool:
        r = panel.result
        return (r is not None and not getattr(r, "partial", False) and len(r.request.text) == n_chars
                and not panel.engine.is_pending and panel.view.is_laid_out)
    return done


def flow_paste(app, window, meter, text: str, run: int) -> float:
    from PySide6.QtGui import QGuiApplication

    panel = window.script.panel("token_view")
    panel.set_text("")
    run_until(app, lambda: not panel.engine.is_pending, 30)
    QGuiApplication.clipboard().setText(text)
    panel.editor.setFocus()
    meter.start(f"paste-{run}")
    t0 = time.perf_counter()
    app.action("paste", panel.editor.paste)
    ok = run_until(app, token_view_done(panel, len(text)), 120)
    meter.stop()
    return (time.perf_counter() - t0) if ok else float("nan")


def flow_switch_while_typing(app, window, meter, base: str, trained, loaded, run: int) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    panel = window.script.panel("token_view")
    panel.set_text(base)
    run_until(app, token_view_done(panel, len(base)), 60)
    editor = panel.editor
    editor.setFocus()
    cursor = editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    editor.setTextCursor(cursor)
    models = [trained, loaded]
    actions = []
    for i in range(40):
        if i % 8 == 0:
            model = models[(i // 8 + run) % 2]
            actions.append(lambda m=model: app.action("switch tokenizer", lambda: window.step_model.set_timeline(m)))
        actions.append(lambda i=i: QTest.keyClick(editor, Qt.Key(Qt.Key.Key_A + i % 26)))
    meter.start(f"switch-{run}")
    spaced(app, actions, 30)
    run_until(app, lambda: not panel.engine.is_pending, 60)
    meter.stop()


def flow_scrub(app, window, meter, trained, run: int) -> None:
    window.step_model.set_timeline(trained)
    slider = window.timeline_panel.transport.slider
    n = trained.n_steps
    steps = [int(n * ((i * 37 + run * 11) % 120) / 120) for i in range(120)]
    meter.start(f"scrub-{run}")
    spaced(app, [lambda k=k: app.action("move slider", lambda: slider.setValue(k)) for k in steps], 16)
    run_until(app, lambda: True, 1)
    meter.stop()


def _profile(meter_cls, flow: str) -> None:
    """Wrap `StallMeter.start` so the GUI thread is profiled while `flow` runs (for finding freezes)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    start, stop = meter_cls.start, meter_cls.stop

    def start_(self, phase):
        if phase.split("-")[0] == flow:
            prof.enable()
        elif getattr(self, "_profiling", False):
            prof.disable()
        self._profiling = phase.split("-")[0] == flow
        start(self, phase)

    def stop_(self):
        if getattr(self, "_profiling", False):
            prof.disable()
            self._profiling = False
            stats = pstats.Stats(prof)
            stats.sort_stats("tottime").print_stats(25)
            stats.sort_stats("cumtime").print_stats(45)
        stop(self)

    meter_cls.start, meter_cls.stop = start_, stop_


class StallWatch:
    """A watchdog thread: when the GUI thread has not ticked the meter for `threshold_ms`, it records
    the GUI thread's Python stack (what the window was busy with) and the innermost frames of the
    other threads (a worker holding the GIL in one long C call). ``--watch`` prints them."""

    def __init__(self, meter, threshold_ms: float = 60.0) -> None:
        import threading

        self.meter, self.threshold = meter, threshold_ms / 1000
        self.main = threading.main_thread().ident
        self.samples: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import traceback

        sampled = 0.0  # when the current gap was last sampled
        while not self._stop.wait(0.01):
            last = self.meter.last
            now = time.perf_counter()
            if self.meter.timer.isActive() and now - last > self.threshold and now - max(sampled, last) > 0.05:
                sampled = now  # a long gap is sampled every 50 ms: where the time goes, not only where it began
                frames = sys._current_frames()
                frame = frames.get(self.main)
                stack = "".join(traceback.format_stack(frame, limit=14)) if frame is not None else "?"
                for ident, other in frames.items():  # a worker holding the GIL in one long C call
                    if ident not in (self.main, self._thread.ident):
                        stack += f"  [thread {ident}]\n" + "".join(traceback.format_stack(other)[-4:])
                self.samples.append((f"{self.meter.phase} at {1000 * (now - last):.0f} ms", stack))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()




class Phases:
    """Starts and stops a phase on every meter at once: the stall timer, the GUI-CPU accounting and
    the bare-Qt control."""

    def __init__(self, app, meter: StallMeter, control: BareControl) -> None:
        self.app, self.meter, self.control = app, meter, control

    def start(self, phase: str) -> None:
        self.control.start(phase)
        self.app.set_phase(phase)
        self.meter.start(phase)

    def stop(self) -> None:
        self.meter.stop()
        self.app.set_phase(None)
        self.control.stop()


LABELS = {"idle": "idle window (noise floor)", "open": "open gutenberg30 (31.8 MB)", "train": "train it",
          "paste": "paste 1 MB into the token view", "switch": "switch tokenizers while typing",
          "scrub": "scrub the timeline"}


def flow_rows(phases_of: dict[str, list[str]], cpu: dict, stalls: StallMeter, control: dict) -> list[dict]:
    """One row per flow: GUI-CPU over all its runs, wall stalls of the app and of the bare control."""
    rows = []
    for name, phases in phases_of.items():
        cpus = [cpu.get(p, {}) for p in phases]
        walls = [stalls.summary(p) for p in phases]
        bare = [control.get(p, {"max_ms": float("nan"), "p99_ms": float("nan")}) for p in phases]
        worst = sorted((w for c in cpus for w in c.get("worst", [])), key=lambda w: -w["cpu_ms"])[:5]
        by_receiver: dict[str, int] = {}
        for c in cpus:
            for k, v in c.get("over_16ms_by_receiver", {}).items():
                by_receiver[k] = by_receiver.get(k, 0) + v
        rows.append({
            "flow": name, "label": LABELS[name], "runs": len(phases),
            "events": sum(c.get("events", 0) for c in cpus),
            "max_cpu_ms": max(c.get("max_cpu_ms", 0.0) for c in cpus),
            "p99_cpu_ms": max(c.get("p99_cpu_ms", 0.0) for c in cpus),
            "over_16ms": sum(c.get("over_16ms", 0) for c in cpus),
            "over_16ms_by_receiver": by_receiver,
            "cpu_outside_events_s": round(sum(c.get("cpu_outside_events_s", 0.0) for c in cpus), 3),
            "stall_max_ms": max(w["max_ms"] for w in walls),
            "stall_median_max_ms": statistics.median(w["max_ms"] for w in walls),
            "stall_p99_ms": statistics.median(w["p99_ms"] for w in walls),
            "bare_stall_max_ms": max(b["max_ms"] for b in bare),
            "bare_stall_p99_ms": statistics.median(b["p99_ms"] for b in bare),
            "worst_events": worst,
        })
    return rows


def print_rows(rows: list[dict], load: int, loadavg: list[str]) -> None:
    print(f"--load {load}: load average {' '.join(loadavg)}; GUI-thread CPU per event (budget {BUDGET_MS:.0f} ms)"
          " and wall stalls beside a bare PySide6 window in the same run")
    print(f"  {'flow':<32} {'events':>7} {'maxCPU':>8} {'p99CPU':>7} {'>16ms':>6} {'stall':>8} {'bare':>7}")
    for r in rows:
        print(f"  {r['label']:<32} {r['events']:>7} {r['max_cpu_ms']:>6.1f}ms {r['p99_cpu_ms']:>5.1f}ms "
              f"{r['over_16ms']:>6} {r['stall_max_ms']:>6.1f}ms {r['bare_stall_max_ms']:>5.1f}ms")
    for r in rows:
        for w in r["worst_events"]:
            if w["cpu_ms"] <= BUDGET_MS:
                continue
            prof = w.get("profile", {})
            where = (prof.get("innermost_tokviz") or ["?"])[0]
            gc_part = f", {w['gc_ms']:.1f} ms of it a generation-{w['gc_generation']} collection" if "gc_ms" in w else ""
            print(f"    {r['flow']}: {w['cpu_ms']:.1f} ms CPU ({w['wall_ms']:.1f} wall{gc_part}) {w['what']} -- {where}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, choices=(1, 4), default=1,
                    help="busy processes: 1, or 4 with everything pinned to two cores")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--vocab-size", type=int, default=5000)
    ap.add_argument("--flows", default="open,train,paste,switch,scrub",
                    help="comma-separated flows to measure (train needs open; switch and scrub need train)")
    ap.add_argument("--out", type=Path, help="results JSON (default tests/bench/results/freezes_load{N}.json)")
    ap.add_argument("--watch", action="store_true", help="print the GUI thread's stack during each stall")
    ap.add_argument("--profile", help="print a cProfile of the GUI thread during this flow (open, train, paste, "
                                      "switch, scrub)")
    args = ap.parse_args(argv)
    flows = set(args.flows.split(","))
    if args.profile:
        _profile(meter_cls=StallMeter, flow=args.profile)
    for f in (GUTENBERG, SHAKESPEARE, GPT2):
        if not f.exists():
            print(f"needs {f}")
            return 1
    cores = pin_to_two_cores() if args.load == 4 else None
    app = cpu_timed_application()
    from tokviz.app.gui import create_application

    create_application()
    from tokviz.app.main_window import MainWindow
    from tokviz.core import TrainSettings
    from tokviz.engine.pretrained_tasks import load_any_timeline
    from tokviz.engine.settings import AppSettings

    children = busy_children(args.load)
    control = BareControl()
    meter = StallMeter()
    phases = Phases(app, meter, control)
    watch = StallWatch(meter) if args.watch else None
    seconds = {}
    bare: dict = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            window = MainWindow(AppSettings.in_folder(tmp), load_default_sample=False)
            window.resize(1280, 800)
            window.show()
            run_until(app, lambda: False, 1.0)  # the deferred panels are built
            phases.start("idle")  # the noise floor: nothing to do but the busy children and the machine's load
            run_until(app, lambda: False, 3.0)
            phases.start("open")
            t0 = time.perf_counter()
            app.action("open", lambda: window.script.open_path(GUTENBERG))
            seconds["open"] = (window.script.wait_for_file(180_000), time.perf_counter() - t0)
            phases.stop()
            trained = None
            if "train" in flows:
                phases.start("train")
                t0 = time.perf_counter()
                app.action("train", lambda: window.script.start_training(TrainSettings(vocab_size=args.vocab_size)))
                seconds["train"] = (window.script.wait_for_training(600_000), time.perf_counter() - t0)
                phases.stop()
                trained = window.script.timeline
            loaded = load_any_timeline(str(GPT2))  # as File > Open does (its tables built while loading)
            shakespeare = SHAKESPEARE.read_text(encoding="utf-8")
            mb = (shakespeare * 2)[:1_000_000]
            for run in range(args.runs):
                if "paste" in flows:
                    seconds[f"paste-{run}"] = ("done", flow_paste(app, window, phases, mb, run))
                if "switch" in flows and trained is not None:
                    flow_switch_while_typing(app, window, phases, shakespeare[:100_000], trained, loaded, run)
                if "scrub" in flows and trained is not None:
                    flow_scrub(app, window, phases, trained, run)
            window.close()
            window.shutdown()
    finally:
        for child in children:
            child.kill()
            child.wait()
        bare = control.finish()
        app.close_sampler()
        if watch is not None:
            watch.stop()
            for phase, stack in watch.samples:
                print(f"--- stall in {phase}:\n{stack}")
    loadavg = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    cpu = app.summaries()
    phases_of = {name: [p for p in cpu if p.split("-")[0] == name]
                 for name in ("idle", "open", "train", "paste", "switch", "scrub")}
    rows = flow_rows({k: v for k, v in phases_of.items() if v}, cpu, meter, bare)
    print_rows(rows, args.load, loadavg)
    print("  " + ", ".join(f"{k} {v[0]} in {v[1]:.1f} s" for k, v in seconds.items()))
    out = args.out or RESULTS / f"freezes_load{args.load}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "load": args.load, "busy_processes": args.load, "pinned_to_cores": cores, "cpus": os.cpu_count(),
        "loadavg_after": loadavg, "budget_cpu_ms": BUDGET_MS, "vocab_size": args.vocab_size, "runs": args.runs,
        "pass": all(r["over_16ms"] == 0 for r in rows), "flows": rows,
        "seconds": {k: [v[0], round(v[1], 2)] for k, v in seconds.items()}}, indent=2), encoding="utf-8")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
