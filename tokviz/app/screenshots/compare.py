"""Screenshots of the Compare panel, for ``tokviz screenshot``.

When the UDHR corpus and the three tiktoken files are in ``../shared`` (next to the project),
compares r50k, cl100k and o200k on it by document and writes ``compare-<tab>-<theme>.png`` for
the premiums chart, the documents and the metrics; then the Why tab on a span. Without the files
it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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
    if not panel.run() or window.script.wait_for({"done": [panel.comparison_ready]}, 300_000) != "done":
        return []
    written = []
    dock = window.docks.dock("compare")
    for tab, name in ((panel.chart.parentWidget(), "chart"), (panel.documents_table, "documents"),
                      (panel.metrics_table, "metrics")):
        panel.tabs.setCurrentWidget(tab)
        settle()
        written.append(_save(dock, out_dir / f"compare-{name}-{theme}.png"))
    panel.tabs.setCurrentWidget(panel.why_tab)
    panel.why_tab.span.setText(WHY_SPAN)
    if panel.why_tab.run() and window.script.wait_for({"done": [panel.why_tab.ready]}, 120_000) == "done":
        settle()
        written.append(_save(dock, out_dir / f"compare-why-{theme}.png"))
    return written


def _save(widget, path: Path) -> Path:
    if not widget.grab().save(str(path)):
        raise OSError(f"cannot write {path}")
    return path
