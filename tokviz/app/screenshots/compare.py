"""Screenshots of the Compare panel, for ``tokviz screenshot``.

When the UDHR corpus and the three tiktoken files are in ``../shared`` (next to the project),
compares r50k, cl100k and o200k on it by document and writes ``compare-<tab>-<theme>.png`` for
the premiums chart, the documents and the metrics; then the Why tab on a span. Each is the panel
alone, after the comparison (or the trace) has finished; one that fails is an error. Without the
files it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .capture import ShotError, save_panel_shot, wait_or_fail

SHARED = Path(__file__).resolve().parents[4] / "shared"
UDHR = SHARED / "corpora" / "udhr2_all.txt"
ENCODINGS = [SHARED / "vocab" / "tiktoken" / f"{n}.tiktoken" for n in ("r50k_base", "cl100k_base", "o200k_base")]
WHY_SPAN = "Hello  world 12345!"


def take_compare_screenshots(window, out_dir: Path, theme: str, settle: Callable[[], None]) -> list[Path]:
    if not UDHR.is_file() or not all(p.is_file() for p in ENCODINGS):
        return []
    panel = window.script.select_panel("compare")
    panel.specs.clear()
    panel.models_list.clear()
    for p in ENCODINGS:
        panel.add_path(p)
    panel.set_text_file(UDHR)
    panel.by_document.setChecked(True)
    if not panel.run():
        raise ShotError(f"the comparison could not start: {panel.status.text()}")
    wait_or_fail({"done": [panel.comparison_ready]}, "the comparison")
    if panel.outcome != "finished":
        raise ShotError(f"the comparison ended with {panel.outcome!r}: {panel.status.text()}")
    written = []
    for tab, name in ((panel.chart.parentWidget(), "chart"), (panel.documents_table, "documents"),
                      (panel.metrics_table, "metrics")):
        panel.tabs.setCurrentWidget(tab)
        written.append(save_panel_shot(window, "compare", out_dir / f"compare-{name}-{theme}.png", settle))
    why = panel.why_tab
    panel.tabs.setCurrentWidget(why)
    why.span.setText(WHY_SPAN)
    if not why.run():
        raise ShotError(f"the Why trace could not start: {why.status.text()}")
    wait_or_fail({"done": [why.ready]}, "the Why trace")
    if why.outcome != "finished":
        raise ShotError(f"the Why trace ended with {why.outcome!r}: {why.status.text()}")
    written.append(save_panel_shot(window, "compare", out_dir / f"compare-why-{theme}.png", settle))
    return written
