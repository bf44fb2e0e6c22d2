"""Vocabulary health without model weights: which tokens a tokenizer can really produce and use.

Every token gets a round-trip category, after the Magikarp study (Land & Bartolo 2024, "Fishing
for Magikarp"): ``ok`` (its text encodes back to it alone), ``unreachable`` (its text encodes to
other tokens), ``undecodable`` (its bytes are partial UTF-8, not text on their own), ``special``.
On the user's corpus each token is counted as a token of the encoding (`count`) and as a part
inside the merge trees of longer tokens that occur (`inside`); their "intersection over self"
``inside / (inside + count)`` (as in Picky BPE, Chizhov et al. 2024) near 1 marks a token that
almost only lives inside longer ones. Flags: ``mostly inside`` (a merged token with IoS >= 0.9),
``early but unseen`` (made in the first half of the merges, yet neither counted nor inside on the
corpus), ``crosses pre-tokens`` (the tokenizer's own pre-tokenizer cuts its text: a merge across
a pre-token boundary, which ordinary text never produces).

`health_csv` and `health_markdown` write the findings. What this leaves out: the glitch panel's
ranked scan (`tokviz.core.glitch`, whose round trip this shares), drawing.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tokviz.core.glitch.evidence import CATEGORIES, round_trip_category
from tokviz.core.errors import Cancelled

FLAGS = {
    "mostly inside": "on the corpus it almost only occurs inside longer tokens (IoS >= 0.9)",
    "early but unseen": "made in the first half of the merges, never seen on the corpus",
    "crosses pre-tokens": "its text spans a pre-token boundary: a merge ordinary text never makes",
}
IOS_THRESHOLD = 0.9
COLUMNS = ("id", "token", "category", "rank", "count", "inside", "ios", "flags")


@dataclass(frozen=True)
class HealthRow:
    id: int
    token: bytes
    category: str  # a key of CATEGORIES
    rank: int | None  # the merge that made it (its step index); None for base units, specials
    count: int = 0  # as a token of the corpus encoding
    inside: int = 0  # inside longer tokens of the corpus encoding
    flags: tuple[str, ...] = ()

    @property
    def ios(self) -> float | None:
        total = self.inside + self.count
        return self.inside / total if total else None


@dataclass(frozen=True)
class HealthReport:
    rows: tuple[HealthRow, ...]  # the findings: every token not ``ok`` or with a flag
    totals: dict[str, int] = field(default_factory=dict)  # category -> tokens
    n_tokens: int = 0
    corpus_chars: int = 0


def _inside_counts(timeline, counts: np.ndarray) -> np.ndarray:
    """How often each id sits inside the merge tree of a token the corpus encoding used."""
    inside = np.zeros_like(counts)
    for i in np.flatnonzero(counts):
        tree = timeline.merge_tree(int(i))
        stack = list(tree.children) if tree is not None else []
        while stack:
            node = stack.pop()
            if node.id < len(inside):
                inside[node.id] += counts[i]
            stack.extend(node.children)
    return inside


def vocabulary_health(
    timeline,
    corpus: str,
    *,
    should_stop: Callable[[], bool] = lambda: False,
    progress: Callable[[str, float], None] = lambda what, f: None,
) -> HealthReport:
    """Check every token of `timeline` (finished) against itself and against `corpus`."""
    tok = timeline.tokenizer()
    vocab = [b or b"" for b in timeline.token_bytes()]
    special = set(timeline.special_ids.values())
    ids = np.asarray(tok.encode_ids(corpus), dtype=np.int64) if corpus else np.zeros(0, np.int64)
    counts = np.bincount(ids, minlength=len(vocab))[: len(vocab)] if ids.size else np.zeros(len(vocab), np.int64)
    progress("Following merge trees…", 0.1)
    inside = _inside_counts(timeline, counts)
    early = timeline.n_steps // 2 if timeline.lists_merges else -1
    rows, totals = [], dict.fromkeys(CATEGORIES, 0)
    for i, data in enumerate(vocab):
        if i % 512 == 0:
            if should_stop():
                raise Cancelled()
            progress("Checking tokens…", 0.1 + 0.9 * i / max(1, len(vocab)))
        if not data:
            continue
        category, text = round_trip_category(tok, i, data, special)
        totals[category] += 1
        rank = timeline.step_of(i)
        row = HealthRow(i, data, category, rank, int(counts[i]), int(inside[i]))
        flags = []
        if rank is not None and row.ios is not None and row.ios >= IOS_THRESHOLD:
            flags.append("mostly inside")
        if rank is not None and rank < early and row.count + row.inside == 0:
            flags.append("early but unseen")
        if text is not None and len(tok.chunks(text) or ()) > 1:  # None: no pre-tokenizer
            flags.append("crosses pre-tokens")
        if category != "ok" or flags:
            rows.append(HealthRow(i, data, category, rank, row.count, row.inside, tuple(flags)))
    progress("Done", 1.0)
    return HealthReport(tuple(rows), totals, sum(totals.values()), len(corpus))


def _cells(r: HealthRow) -> list[str]:
    ios = "" if r.ios is None else f"{r.ios:.3f}"
    shown = r.token.decode("utf-8", errors="backslashreplace")
    return [str(r.id), shown, r.category, "" if r.rank is None else str(r.rank), str(r.count), str(r.inside), ios,
            "; ".join(r.flags)]


def health_csv(report: HealthReport) -> str:
    """The findings as CSV (a header, one row per token)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(_cells(r) for r in report.rows)
    return buf.getvalue()


def health_markdown(report: HealthReport) -> str:
    """The totals, then the findings as a Markdown table (``|`` in tokens escaped)."""
    lines = [f"Vocabulary health: {report.n_tokens:,} tokens checked on {report.corpus_chars:,} characters.", ""]
    lines += [f"- {k}: {v:,} ({CATEGORIES[k]})" for k, v in report.totals.items()]
    lines += ["", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in report.rows:
        cells = [c.replace("|", "\\|").replace("\n", "\\n") for c in _cells(r)]
        cells[1] = f"`{cells[1]}`" if cells[1].strip() else repr(cells[1])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
