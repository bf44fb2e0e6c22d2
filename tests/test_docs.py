"""The documents hold together: every relative link in the README and docs/ points to a file that
exists and, with ``#anchor``, to a heading of it; docs/benchmarks.md holds the current figures only
(history belongs in git: no "old -> new" figures, no session log)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of the headings of `path`: lower case, punctuation dropped, spaces as hyphens."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            for m in re.finditer(r"^#{1,6} +(.+?) *$", text, re.MULTILINE)}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_reach_their_files_and_headings(doc):
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        path = (doc.parent / path_part).resolve() if path_part else doc
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(target)
    assert broken == []


def test_the_benchmark_figures_are_current_only():
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    transitions = re.findall(r"\d[\d.,]*\s*(?:%|s|ms|µs|MB|MiB|GB|x)?\s*->\s*\d[\d.,]*", text)
    assert transitions == []
    assert re.findall(r"(?i)\b(?:this|previous|last|earlier|same|next) sessions?\b|tried and left out", text) == []
