"""Item models with 100k rows: filling the vocabulary model, scrolling a table through it, and
reaching the last row of the merge table; the timings the unit tests leave out (they check that
the tables are virtual: only the rows on screen are read).

    QT_QPA_PLATFORM=offscreen python tests/bench/bench_tables.py

Targets: vocabulary model filled in < 2 s, four scroll jumps with repaints in < 0.5 s, last merge
row read in < 1 s. Medians of 3.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

N = 100_000


def _vocab(timeline) -> tuple[float, float]:
    """Seconds to fill a `VocabModel`, then to scroll a shown table to 1/4, 1/2, 3/4 and the end."""
    from PySide6.QtWidgets import QApplication, QTableView

    from tokviz.engine.tables.vocab_model import VocabModel

    vm = VocabModel()
    t0 = time.perf_counter()
    vm.set_timeline(timeline)
    fill = time.perf_counter() - t0
    view = QTableView()
    view.setModel(vm)
    view.verticalHeader().setDefaultSectionSize(20)
    view.resize(600, 400)
    view.show()
    QApplication.processEvents()
    t0 = time.perf_counter()
    for frac in (0.25, 0.5, 0.75, 1.0):
        view.verticalScrollBar().setValue(int(view.verticalScrollBar().maximum() * frac))
        view.viewport().repaint()
    scroll = time.perf_counter() - t0
    view.close()
    return fill, scroll


def _merge_last_row(timeline) -> float:
    """Seconds from handing a `MergeModel` a timeline of `N` merges to reading its last row."""
    from tokviz.engine.step_model import StepModel
    from tokviz.engine.tables.merge_model import COL_TOKEN, MergeModel

    step_model = StepModel()
    model = MergeModel()
    model.attach(step_model)
    t0 = time.perf_counter()
    step_model.set_timeline(timeline)
    model.index(model.rowCount() - 1, COL_TOKEN).data()
    return time.perf_counter() - t0


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from tokviz.core import MergeStep, TrainSettings, train

    app = QApplication.instance() or QApplication([])  # noqa: F841 - widgets need one
    steps = [MergeStep(r, (97, 98), 256 + r, b"ab" + r.to_bytes(3, "big"), N - r, 10**6 - r) for r in range(N)]
    timeline = replace(train(TrainSettings(merges=0), texts=["ab"]), steps=steps)
    runs = [_vocab(timeline) for _ in range(3)]
    fill = statistics.median(r[0] for r in runs)
    scroll = statistics.median(r[1] for r in runs)
    last = statistics.median(_merge_last_row(timeline) for _ in range(3))
    print(f"vocabulary model, {N:,} merges: filled in {fill:6.3f} s (target < 2), "
          f"4 scroll jumps {scroll:6.3f} s (target < 0.5)")
    print(f"merge model, {N:,} merges: last row read in {last:6.3f} s (target < 1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
