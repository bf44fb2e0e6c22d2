"""Compare panel benchmark: all of udhr2_all.txt by document with r50k, cl100k and o200k, in the
window, as a user runs it: wall time from Run to the first documents' rows on screen (they stream
in while the run goes on), and to the tables complete, and the longest event-loop stall meanwhile (a 1 ms timer on the GUI thread; target: none over 50 ms). tiktoken counting the
same text with the same three encodings is measured in the same run for scale.

Run ``python tests/bench/bench_compare_gui.py``; prints a table and writes
``tests/bench/results/bench_compare_gui.json``. Needs ../shared.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHARED = ROOT.parent / "shared"
UDHR = SHARED / "corpora" / "udhr2_all.txt"
NAMES = ("r50k_base", "cl100k_base", "o200k_base")
sys.path.insert(0, str(ROOT))


def tiktoken_seconds(text: str) -> float:
    """tiktoken encoding the whole text once with each encoding (files from ../shared)."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from tokviz.core.loading import KNOWN_ENCODINGS

    encs = []
    for name in NAMES:
        e = KNOWN_ENCODINGS[name]
        ranks = load_tiktoken_bpe(str(SHARED / "vocab" / "tiktoken" / f"{name}.tiktoken"))
        encs.append(tiktoken.Encoding(name, pat_str=e.pattern, mergeable_ranks=ranks, special_tokens={}))
    t0 = time.perf_counter()
    for enc in encs:
        enc.encode_ordinary(text)
    return time.perf_counter() - t0


def main() -> int:
    if not UDHR.is_file():
        print(f"needs {UDHR}")
        return 1
    from PySide6.QtWidgets import QApplication

    from tests.bench.bench_app import StallMeter
    from tokviz.app.main_window import MainWindow
    from tokviz.app.waiting import wait_for_signals
    from tokviz.engine.settings import AppSettings

    app = QApplication.instance() or QApplication([])
    window = MainWindow(AppSettings.in_folder(tempfile.mkdtemp()))
    window.show()
    panel = window.script.select_panel("compare")
    for name in NAMES:
        panel.add_path(SHARED / "vocab" / "tiktoken" / f"{name}.tiktoken")
    panel.set_text_file(UDHR)
    panel.by_document.setChecked(True)
    meter = StallMeter()
    real_show = panel.show_comparison

    def show(c):  # the rest of the run: the tables and the chart on the GUI thread
        meter.gaps.setdefault("showing", [])
        meter.phase = "showing"
        real_show(c)

    panel.show_comparison = show
    first_rows: list[float] = []
    batches = [0]

    def on_batch(batch):
        batches[0] += 1
        if batch.rows and not first_rows:
            first_rows.append(time.perf_counter() - t0)

    panel.engine.partial_ready.connect(on_batch)
    app.processEvents()
    meter.start("measuring")
    t0 = time.perf_counter()
    panel.run()
    outcome = wait_for_signals({"done": [panel.comparison_ready]}, 600_000)
    app.processEvents()  # the tables and the chart drawn
    seconds = time.perf_counter() - t0
    meter.stop()
    stalls = meter.summary("measuring")
    shown = meter.summary("showing")
    window.shutdown()
    ref = tiktoken_seconds(UDHR.read_text(encoding="utf-8"))
    first = round(first_rows[0], 2) if first_rows else None
    row = {"outcome": outcome, "status": panel.status.text(), "seconds": round(seconds, 2),
           "first_rows_seconds": first, "batches": batches[0],
           "tiktoken_seconds": round(ref, 2), "ratio": round(seconds / ref, 1), "measuring": stalls,
           "showing": shown,
           "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    print(f"Compare panel, udhr2 by document, 3 encodings: {seconds:.2f} s (target <= 10 s); "
          f"tiktoken counting the same: {ref:.2f} s ({seconds / ref:.1f}x)")
    print(f"first documents' rows on screen after {first} s; {batches[0]} batches of rows")
    for phase, st in (("while measuring", stalls), ("showing the results", shown)):
        print(f"{phase}: longest stall {st['max_ms']} ms, p99 {st['p99_ms']} ms, {st['over_50ms']} over 50 ms "
              f"({st['ticks']} ticks)")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_compare_gui.json").write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
