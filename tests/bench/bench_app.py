"""Desktop-app benchmark: event-loop stalls while a 30 MB corpus loads and trains, and launch time.

Run ``python tests/bench/bench_app.py [--corpus FILE] [--vocab-size N] [--launch-runs N]``. Prints
a table and writes ``tests/bench/results/bench_app.json``.

* Stalls: a 1 ms precise timer on the GUI thread records when it fires; the longest gap between two
  firings is the longest time the window could not react. Measured while the window opens the
  corpus (read + decode + statistics in a worker, read-only view) and while it trains on it
  (counting in worker processes, merges on a worker thread, vocabulary table filling live).
  Target: no stall over 50 ms.
* Launch: wall time from starting a fresh Python process to the main window being shown, with the
  same imports as the ``tokviz`` command, after one warm-up launch (bytecode cached, as on every
  start after the first). Target: under 1.5 s.

Uses ../shared/corpora/gutenberg30.txt when present, else generates a 30 MB text.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = HERE / "results"
SHARED_CORPUS = ROOT.parent / "shared" / "corpora" / "gutenberg30.txt"
STALL_TARGET_MS = 50.0
LAUNCH_TARGET_S = 1.5

LAUNCH_SNIPPET = r"""
import sys, time
from tokviz.app import cli  # the same imports as the `tokviz` command
from tokviz.app.gui import create_application, create_main_window
from PySide6.QtCore import QTimer
app = create_application()
window = create_main_window(None)
def shown():
    print(f"SHOWN {time.time():.6f} {int(window.isVisible())}", flush=True)
    window.close()
    app.quit()
QTimer.singleShot(0, shown)
app.exec()
"""


def make_corpus(folder: Path, size: int = 30 * 1024 * 1024) -> Path:
    """A 30 MB text of English-like lines (when the shared corpus is absent)."""
    import random

    rnd = random.Random(1)
    words = ("the of and to in a is that for it as was with be by on not he this are or his from at "
             "which but have an they you were her she there been one all we their has would when if "
             "so no will more said what up out into them can only other new some could time these "
             "two may then do first any my now such like our over man me even most made after also "
             "did many before must through back years where much your way well down should because "
             "each just those people how too little state good very make world still own see men "
             "work long get here between both life being under never day same another know while "
             "last might us great old year off come since against go came right used take three "
             "café naïve façade déjà vu über Straße 東京 ☕ 🚀").split()
    path = folder / "bench_corpus_30mb.txt"
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        while written < size:
            line = " ".join(rnd.choice(words) for _ in range(rnd.randint(6, 14))).capitalize() + ".\n"
            f.write(line)
            written += len(line.encode())
    return path


class StallMeter:
    """Records the gaps between firings of a 1 ms timer on the GUI thread."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.timer = QTimer(interval=1)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.phase = "idle"
        self.gaps: dict[str, list[float]] = {}
        self.worst: dict[str, float] = {}
        self.last = 0.0  # perf_counter() of the last tick (or of `start`)

    def start(self, phase: str) -> None:
        self.phase = phase
        self.gaps.setdefault(phase, [])
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        gap = (now - self.last) * 1000.0
        self.last = now
        self.gaps[self.phase].append(gap)

    def summary(self, phase: str) -> dict:
        g = sorted(self.gaps.get(phase, [0.0]))
        return {
            "max_ms": round(g[-1], 1),
            "p99_ms": round(g[min(len(g) - 1, int(0.99 * len(g)))], 1),
            "over_50ms": sum(1 for x in g if x > 50),
            "ticks": len(g),
        }


def bench_stalls(corpus: Path, vocab_size: int) -> dict:
    from tokviz.app.gui import create_application

    app = create_application()
    from tokviz.app.main_window import MainWindow
    from tokviz.core import TrainSettings
    from tokviz.engine.settings import AppSettings

    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(AppSettings.in_folder(tmp), load_default_sample=False)
        window.resize(1280, 800)
        window.show()
        for _ in range(5):
            app.processEvents()
        meter = StallMeter()
        meter.start("load")
        t0 = time.perf_counter()
        window.script.open_path(corpus)
        outcome = window.script.wait_for_file(120_000)
        load_s = time.perf_counter() - t0
        meter.start("train")
        t0 = time.perf_counter()
        window.script.start_training(TrainSettings(vocab_size=vocab_size))
        trained = window.script.wait_for_training(600_000)
        train_s = time.perf_counter() - t0
        meter.stop()
        merges = window.script.timeline.n_merges if window.script.timeline else 0
        rows = window.vocab_model.rowCount()
        read_only = window.corpus_panel.is_read_only
        window.close()
        window.shutdown()
    load, train = meter.summary("load"), meter.summary("train")
    return {
        "corpus": str(corpus),
        "corpus_bytes": corpus.stat().st_size,
        "read_only_view": read_only,
        "load_outcome": outcome,
        "load_seconds": round(load_s, 2),
        "train_outcome": trained,
        "train_seconds": round(train_s, 2),
        "vocab_size": vocab_size,
        "merges": merges,
        "vocab_rows": rows,
        "load_stall": load,
        "train_stall": train,
        "max_stall_ms": max(load["max_ms"], train["max_ms"]),
    }


def bench_launch(runs: int) -> dict:
    """Launch times with Python's bytecode cache in place (as on every start after the first: a
    PYTHONDONTWRITEBYTECODE in the environment is dropped) after one unmeasured warm-up launch."""
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TOKVIZ_SETTINGS_FILE=str(Path(tmp) / "s.ini"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for i in range(runs + 1):
            t0 = time.time()
            out = subprocess.run([sys.executable, "-c", LAUNCH_SNIPPET], env=env, capture_output=True,
                                 text=True, timeout=60, cwd=tmp)
            line = next((ln for ln in out.stdout.splitlines() if ln.startswith("SHOWN")), None)
            if line is None or line.split()[2] != "1":
                raise RuntimeError(f"window did not show:\n{out.stdout}\n{out.stderr}")
            if i:  # run 0 warms the bytecode and font caches
                times.append(float(line.split()[1]) - t0)
    return {
        "runs": runs,
        "median_s": round(statistics.median(times), 3),
        "max_s": round(max(times), 3),
        "min_s": round(min(times), 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, help="a ~30 MB text file (default: shared gutenberg30)")
    ap.add_argument("--vocab-size", type=int, default=5000)
    ap.add_argument("--launch-runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "bench_app.json")
    args = ap.parse_args(argv)

    launch = bench_launch(args.launch_runs)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus or (SHARED_CORPUS if SHARED_CORPUS.exists() else make_corpus(Path(tmp)))
        stalls = bench_stalls(corpus, args.vocab_size)

    result = {
        "benchmark": "bench_app",
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "launch": launch,
        "stalls": stalls,
        "targets": {"max_stall_ms": STALL_TARGET_MS, "launch_s": LAUNCH_TARGET_S},
        "pass": stalls["max_stall_ms"] <= STALL_TARGET_MS and launch["median_s"] <= LAUNCH_TARGET_S,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    mb = stalls["corpus_bytes"] / (1024 * 1024)
    rows = [
        ("launch to shown window (median)", f"{launch['median_s']:.2f} s", f"< {LAUNCH_TARGET_S} s"),
        ("launch to shown window (max)", f"{launch['max_s']:.2f} s", ""),
        (f"open {mb:.1f} MB corpus" + (" (read-only view)" if stalls["read_only_view"] else ""),
         f"{stalls['load_seconds']:.2f} s", ""),
        ("  longest stall while opening", f"{stalls['load_stall']['max_ms']:.1f} ms", f"<= {STALL_TARGET_MS:.0f} ms"),
        ("  p99 gap while opening", f"{stalls['load_stall']['p99_ms']:.1f} ms", ""),
        (f"train vocab {stalls['vocab_size']} ({stalls['merges']} merges)", f"{stalls['train_seconds']:.2f} s", ""),
        ("  longest stall while training", f"{stalls['train_stall']['max_ms']:.1f} ms", f"<= {STALL_TARGET_MS:.0f} ms"),
        ("  p99 gap while training", f"{stalls['train_stall']['p99_ms']:.1f} ms", ""),
        ("  gaps over 50 ms (open + train)",
         str(stalls["load_stall"]["over_50ms"] + stalls["train_stall"]["over_50ms"]), "0"),
    ]
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'value':>10}  target")
    for name, value, target in rows:
        print(f"{name:<{w}}  {value:>10}  {target}")
    print(f"{'PASS' if result['pass'] else 'FAIL'}  (written to {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
