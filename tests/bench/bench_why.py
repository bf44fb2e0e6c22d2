"""Why tab benchmark: wall time of tracing a 20-character span, as a user runs it in the window.

For each real tokenizer (GPT-2's tokenizer.json, Mistral's SentencePiece tokenizer.model, and both
at once), in a fresh process: a window with only that model in the Compare list, then the Why
tab's Trace from the click to the table filled. "first" is the first trace after the model was
added (opening the file included); "warm" is the median of the next traces (other spans, same
model). Target: under 0.5 s for both. The trace alone (core, model already open) is given for
scale.

Run ``python tests/bench/bench_why.py``; prints a table and writes
``tests/bench/results/why.json``. Needs ../shared.
"""

from __future__ import annotations

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
SHARED = ROOT.parent / "shared" / "vocab" / "hf"
MODELS = {
    "gpt2 tokenizer.json": (SHARED / "gpt2" / "tokenizer.json",),
    "mistral tokenizer.model": (SHARED / "mistral-7b-v0.1" / "tokenizer.model",),
    "both": (SHARED / "gpt2" / "tokenizer.json", SHARED / "mistral-7b-v0.1" / "tokenizer.model"),
}
SPANS = ("Hello world, 12345 o", "the cat sat on a mat", "Grüße aus Köln! 2024", "naïve café résumé ok",
         "don't stop:  tabs\tx", "ab  cd  ef  gh  ij k")
TARGET_S = 0.5
sys.path.insert(0, str(ROOT))


def measure(paths: list[str]) -> dict:
    """In this process: a window, the models added, one trace per span."""
    from PySide6.QtWidgets import QApplication

    from tokviz.app.main_window import MainWindow
    from tokviz.app.waiting import wait_for_signals
    from tokviz.core.compare.trace import trace_pipeline
    from tokviz.core.loading import open_timeline
    from tokviz.engine.settings import AppSettings

    app = QApplication.instance() or QApplication([])
    window = MainWindow(AppSettings.in_folder(tempfile.mkdtemp()))
    window.show()
    panel = window.script.select_panel("compare")
    for p in paths:
        panel.add_path(p)
    tab = panel.why_tab
    panel.tabs.setCurrentWidget(tab)
    app.processEvents()
    times = []
    for span in SPANS:
        tab.span.setText(span)
        t0 = time.perf_counter()
        assert tab.run()
        outcome = wait_for_signals({"done": [tab.ready]}, 120_000)
        app.processEvents()
        times.append(time.perf_counter() - t0)
        if outcome != "done" or tab.outcome != "finished":
            raise SystemExit(f"trace did not finish: {tab.status.text()}")
    window.shutdown()
    timelines = [open_timeline(p) for p in paths]
    t0 = time.perf_counter()
    for span in SPANS:
        for tl in timelines:
            trace_pipeline(tl, span)
    core = (time.perf_counter() - t0) / len(SPANS)
    return {"first_s": round(times[0], 3), "warm_s": round(statistics.median(times[1:]), 3),
            "warm_max_s": round(max(times[1:]), 3), "trace_only_s": round(core, 4)}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(measure(sys.argv[2:])))
        return 0
    if not all(p.is_file() for paths in MODELS.values() for p in paths):
        print(f"needs the tokenizer files under {SHARED}")
        return 1
    rows = {}
    for name, paths in MODELS.items():
        out = subprocess.run([sys.executable, __file__, "--one", *map(str, paths)], capture_output=True, text=True,
                             check=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
        rows[name] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"Why tab, a 20-character span, click to table (target < {TARGET_S} s):")
    print(f"{'models':<26}{'first':>8}{'warm':>8}{'warm max':>10}{'trace only':>12}")
    for name, r in rows.items():
        print(f"{name:<26}{r['first_s']:>8.3f}{r['warm_s']:>8.3f}{r['warm_max_s']:>10.3f}{r['trace_only_s']:>12.4f}")
    result = {"rows": rows, "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "why.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
