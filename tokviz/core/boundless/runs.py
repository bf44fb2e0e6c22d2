"""The corpus as the supermerge side of BoundlessBPE sees it: runs of adjacent pretokens.

A supermerge joins two adjacent *complete* pretokens, so this side needs the order of the
pretokens, which the deduplicated chunk counts of ordinary BPE throw away. Only pretokens a
superword may contain can ever be joined (`SuperwordRule`); any other pretoken (punctuation, line
breaks, numbers under the paper's rule) ends a run for good, and so do the ends of a text and
special tokens. A corpus is then a table of distinct runs of two or more such pretokens, counted:
``(("␣of", "␣the"), 812)``, in order of first appearance (the supermerge tie-break relies on it).

    >>> from tokviz.core.text.split import parse_split
    >>> count_runs(["I saw the cat, the cat saw me."], parse_split("gpt4"), LETTERS)
    {('I', ' saw', ' the', ' cat'): 1, (' the', ' cat', ' saw', ' me'): 1}

What this leaves out: when a pretoken becomes a single token (the trainer decides that).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import regex

from tokviz.core.errors import Cancelled
from tokviz.core.text.chunks import ShouldStop, safe_slices
from tokviz.core.text.split import Splitter, split_specials

# The paper's rule for what a superword may hold (its code's IMPROVED_MERGE_PATTERN, with the
# reviewer's `.*`, so that a one-letter pretoken such as "I" qualifies too): a letter at least,
# otherwise only letters, combining marks, spaces, underscores and apostrophes.
LETTERS_PATTERN = r"^(?=.*\p{L})[\p{L}\p{M} _'\u2019]+$"
SUPERWORD_RULES = ("letters", "any")
SLICE_CHARS = 1_000_000  # a large text is split into pretokens a slice at a time (bounded memory)
SLICEABLE_SPLITS = ("gpt2", "gpt4", "o200k", "whitespace")  # splits whose chunks never cross a safe cut


class SuperwordRule:
    """Which pretokens may be part of a superword: ``letters`` (the paper's) or ``any``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._pattern = regex.compile(LETTERS_PATTERN) if name == "letters" else None

    def allows(self, pretoken: str) -> bool:
        return self._pattern is None or self._pattern.match(pretoken) is not None


LETTERS = SuperwordRule("letters")


def _pretokens(text: str, splitter: Splitter, spec: str) -> Iterable[list[str]]:
    """The chunks of `text` in order, a slice at a time for the splits where that is exact."""
    if spec in SLICEABLE_SPLITS and len(text) > 2 * SLICE_CHARS:
        for a, b in safe_slices(text, 0, len(text), SLICE_CHARS):
            yield splitter.chunks(text[a:b])
    else:
        yield splitter.chunks(text)


def count_runs(texts: Iterable[str], splitter: Splitter, rule: SuperwordRule, *,
               specials: tuple[str, ...] = (), spec: str = "", chunks: dict[str, int] | None = None,
               should_stop: ShouldStop | None = None) -> dict[tuple[str, ...], int]:
    """``{run of pretokens: count}`` of `texts`, in order of first appearance; runs of one
    pretoken are left out (they have nothing to join). `chunks`, when given, receives every
    pretoken's count in order of first appearance (`tokviz.core.text.chunks.count_chunks`'s
    result for a split in `SLICEABLE_SPLITS`), from the same pass over the text."""
    runs: dict[tuple[str, ...], int] = {}
    # pretoken -> itself when the rule allows it, else "" (asked once per distinct pretoken); runs
    # hold that one copy of each string, not one per occurrence
    allowed: dict[str, str] = {}
    for text in texts:
        for start, end, is_special in split_specials(text, specials):
            if is_special:
                continue
            run: list[str] = []
            for pretokens in _pretokens(text[start:end], splitter, spec):
                if should_stop is not None and should_stop():
                    raise Cancelled()
                if chunks is not None:
                    for c, n in Counter(pretokens).items():
                        chunks[c] = chunks.get(c, 0) + n
                for c in pretokens:
                    same = allowed.get(c)
                    if same is None:
                        same = allowed[c] = c if rule.allows(c) else ""
                    if same:
                        run.append(same)
                        continue
                    if len(run) > 1:
                        key = tuple(run)
                        runs[key] = runs.get(key, 0) + 1
                    run = []
            if len(run) > 1:
                key = tuple(run)
                runs[key] = runs.get(key, 0) + 1
    return runs
