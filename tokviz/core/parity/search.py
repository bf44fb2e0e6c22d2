"""Finding the first text on which two tokenizers disagree, shrunk to a minimal one and explained.

`find_difference(a, b, lines=..., fuzz=N, seed=...)` checks the given lines first, then `N`
generated texts (`tokviz.core.parity.generate`), stops at the first text the two `Side`\\ s
disagree on (`stages.disagree`), shrinks it (`shrink`) while the same first stage differs, and
returns a `ParityResult`: the minimal text, both sides' ids on it, the stage and its detail, both
Why traces (`tokviz.core.compare.trace`) and how many texts were checked. ``should_stop`` and
``progress(what, fraction)`` let a caller show progress and stop between texts.
What this leaves out: printing (`tokviz.core.parity.report`), threads.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

from tokviz.core.compare.trace import PipelineTrace, trace_pipeline
from tokviz.core.errors import Cancelled, TokvizError

from .generate import fuzz_inputs
from .shrink import shrink
from .stages import IGNORABLE, Side, disagree, first_stage, stage_view

VOCAB_SAMPLE = 2000  # vocabulary words drawn from each tokenizer for the random texts
MAX_SPECIALS = 64  # special-token strings put into the generated texts


@dataclass(frozen=True)
class Difference:
    """The first disagreement found: `text` (shrunk) and where it came from (`origin`, `original`)."""

    text: str
    original: str
    origin: str  # "line 3" or "fuzz 17 (digits)"
    ids_a: tuple[int, ...]
    ids_b: tuple[int, ...]
    stage: str
    detail: str
    traces: tuple[PipelineTrace, PipelineTrace]


@dataclass(frozen=True)
class ParityResult:
    """A search's end: the `difference` (None when the two agreed on every text) and `checked`,
    the number of texts compared before it (the differing one included)."""

    difference: Difference | None
    checked: int
    labels: tuple[str, str]


def _specials(side: Side) -> list[str]:
    found = side.tokenizer.special_tokens or {}
    return [s for s in found if s][:MAX_SPECIALS]


def _vocab_words(side: Side, rng: random.Random) -> list[str]:
    """Decodable tokens of the vocabulary, drawn at random (llama.cpp's random tests' words)."""
    tok = side.tokenizer
    n = tok.n_vocab
    words = []
    for tid in (rng.randrange(n) for _ in range(min(n, VOCAB_SAMPLE))) if n else ():
        try:
            word = tok.token_bytes(tid).decode("utf-8")
        except (UnicodeDecodeError, TokvizError, IndexError, KeyError):
            continue
        if word:
            words.append(word)
    return words


def candidates(a: Side, b: Side, lines: Iterable[str], *, fuzz: int, seed: int) -> Iterator[tuple[str, str]]:
    """``(origin, text)``: the lines (numbered from 1), then `fuzz` generated texts."""
    for k, line in enumerate(lines, start=1):
        yield f"line {k}", line
    if fuzz:
        rng = random.Random(seed)
        specials = sorted(set(_specials(a)) | set(_specials(b)))
        words = _vocab_words(a, rng) + _vocab_words(b, rng)
        for k, (kind, text) in enumerate(fuzz_inputs(fuzz, seed=seed, specials=specials, words=words), start=1):
            yield f"fuzz {k} ({kind})", text


def explain(a: Side, b: Side, text: str, *, ignore: Collection[str] = ()) -> tuple[str, str] | None:
    """``(stage, detail)`` when `a` and `b` disagree on `text`, else None."""
    out_a, out_b = a.outcome(text), b.outcome(text)
    if not disagree(out_a, out_b, ignore=ignore):
        return None
    return first_stage(stage_view(a, text, out_a), stage_view(b, text, out_b), ignore=ignore)


def find_difference(a: Side, b: Side, *, lines: Sequence[str] | Iterable[str] = (), fuzz: int = 0, seed: int = 0,
                    ignore: Collection[str] = (), total: int | None = None,
                    should_stop: Callable[[], bool] | None = None,
                    progress: Callable[[str, float], None] | None = None) -> ParityResult:
    """The first text of `lines`, then of `fuzz` generated ones, that `a` and `b` disagree on
    (see the module docstring). `ignore`: stages of `IGNORABLE` left out of the comparison.
    `total`: the number of texts, for progress, when `lines` has no length."""
    bad = set(ignore) - set(IGNORABLE)
    if bad:
        raise TokvizError(f"cannot ignore {', '.join(sorted(bad))}: only {', '.join(IGNORABLE)} may be ignored")
    if total is None:
        total = (len(lines) if isinstance(lines, Sequence) else 0) + fuzz
    checked = 0
    labels = (a.label, b.label)
    for origin, text in candidates(a, b, lines, fuzz=fuzz, seed=seed):
        if should_stop is not None and should_stop():
            raise Cancelled()
        checked += 1
        if progress is not None and checked % 16 == 1:
            progress(f"Checked {checked - 1:,} texts", min(1.0, (checked - 1) / max(total, 1)))
        found = explain(a, b, text, ignore=ignore)
        if found is None:
            continue
        stage = found[0]
        if progress is not None:
            progress(f"They differ on {origin}: shrinking it", 1.0)

        def same_stage(t: str) -> bool:
            again = explain(a, b, t, ignore=ignore)
            return again is not None and again[0] == stage

        small = shrink(text, same_stage, should_stop=should_stop)
        stage, detail = explain(a, b, small, ignore=ignore) or found
        traces = (trace_pipeline(a.timeline, small, step=a.step, label=a.label),
                  trace_pipeline(b.timeline, small, step=b.step, label=b.label))
        diff = Difference(small, text, origin, a.outcome(small).ids, b.outcome(small).ids, stage, detail, traces)
        return ParityResult(diff, checked, labels)
    return ParityResult(None, checked, labels)
