"""Benchmark of the merge timeline panel: jump + repaint, and playback at 60 steps/s.

Trains the 32k gutenberg30 timeline once with tokviz.core (or reuses ``--model PATH``), shows it
in a `TimelinePanel` offscreen with the first 2 MB of the corpus, then:

- jump: set a random step, refresh the panel and repaint the corpus view (visible window), the
  candidate table and the chart synchronously; target p95 < 50 ms;
- playback: play at 60 steps/s for 3 s; target: at least 95% of the expected steps advanced and
  at least 50 repaints per second.

Run: ``QT_QPA_PLATFORM=offscreen /work/venv/bin/python tests/bench/bench_timeline.py``. Writes
tests/bench/results/timeline.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SHARED = Path("/work/shared")
GUTENBERG = SHARED / "corpora" / "gutenberg30.txt"
RESULTS = Path(__file__).parent / "results"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="reuse a saved 32k model instead of training")
    ap.add_argument("--jumps", type=int, default=300)
    opts = ap.parse_args()

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from tokviz.core import TrainSettings
    from tokviz.core.bpe.timeline import train
    from tokviz.core.model_files import load_timeline, save_timeline
    from tokviz.engine.step_model import StepModel
    from tokviz.panels.timeline.panel import MAX_CORPUS_CHARS, TimelinePanel

    app = QApplication.instance() or QApplication([])
    text = GUTENBERG.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        if opts.model:
            timeline = load_timeline(opts.model)
            train_s = None
        else:
            print("training gutenberg30 to a vocabulary of 32,000 ...", flush=True)
            t0 = time.perf_counter()
            timeline = train(TrainSettings(split="gpt4", vocab_size=32_000), texts=[text])
            train_s = time.perf_counter() - t0
            path = Path(tmp) / "gutenberg32k.json"
            save_timeline(timeline, path)
            timeline = load_timeline(path)
    n = timeline.n_merges
    print(f"{n:,} merges", flush=True)

    model = StepModel()
    panel = TimelinePanel(model)
    panel.resize(1280, 420)
    panel.show()
    panel.set_corpus(text[:MAX_CORPUS_CHARS])
    t0 = time.perf_counter()
    model.set_timeline(timeline)
    panel.refresh()
    for _ in range(5):
        app.processEvents()
    load_ms = (time.perf_counter() - t0) * 1000

    def repaint() -> None:
        panel.corpus_view.viewport().repaint()
        panel.candidates.viewport().repaint()
        panel.chart.viewport().repaint()

    rng = random.Random(5)
    times = []
    for i in range(opts.jumps):
        k = rng.randint(0, n)
        if i % 10 == 0:  # also move the corpus window now and then
            panel.position_slider.setValue(rng.randint(0, panel.position_slider.maximum()))
        t = time.perf_counter()
        model.set_step(k)
        panel.refresh()
        repaint()
        times.append(time.perf_counter() - t)
    times.sort()
    p50 = statistics.median(times) * 1000
    p95 = times[int(len(times) * 0.95) - 1] * 1000
    worst = times[-1] * 1000

    # playback at 60 steps/s for 3 s
    refreshes = [0]
    orig = panel.parts.refresh

    def counted(step: int, phase: int | None = None) -> None:  # the event loop paints what changed, as in the app
        refreshes[0] += phase in (None, 2)  # the corpus view's part of a round (or a whole refresh)
        orig(step, phase)

    panel.parts.refresh = counted
    model.set_step(1000)
    panel.playback.set_speed(60)
    loop = QEventLoop()
    QTimer.singleShot(3000, loop.quit)
    t_play = time.monotonic()
    panel.playback.play()
    loop.exec()
    panel.playback.advance()  # the step due now
    secs = time.monotonic() - t_play
    panel.playback.pause()
    advanced = model.step - 1000
    expected = 60 * secs
    fps = refreshes[0] / secs

    rows = [
        {"row": "jump", "target": "p95 < 50 ms", "p50_ms": round(p50, 2), "p95_ms": round(p95, 2),
         "max_ms": round(worst, 2), "jumps": len(times), "met": p95 < 50},
        {"row": "playback_60", "target": ">= 95% of steps, >= 50 repaints/s",
         "steps_advanced": advanced, "steps_expected": round(expected), "repaints_per_s": round(fps, 1),
         "met": advanced >= 0.95 * expected - 1 and fps >= 50},
    ]
    machine = {"python": platform.python_version(), "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d"),
               "merges": n, "train_s": None if train_s is None else round(train_s, 1),
               "load_ms": round(load_ms, 1)}
    print(f"\nmachine: {machine}")
    print(f"{'row':<12} {'target':<36} result")
    for r in rows:
        rest = {k: v for k, v in r.items() if k not in ("row", "target")}
        print(f"{r['row']:<12} {r['target']:<36} {rest}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "timeline.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")
    panel.close()
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
