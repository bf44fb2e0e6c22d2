"""Pre-tokenization ("split"): cutting text into chunks that BPE merges never cross.

Presets: ``none`` (the whole text is one chunk), ``whitespace`` (exactly ``str.split()``),
``gpt2``, ``gpt4`` (cl100k) and ``o200k`` (the patterns of tiktoken's ``openai_public.py``, kept
verbatim), or ``regex:PATTERN``. A chunk is what the pattern matches; text it does not match is
dropped (only ``whitespace`` and custom patterns can drop text). Special tokens are cut out before
splitting by `split_specials`.

Patterns match with the Unicode version of tiktoken's and tokenizers' Rust regex engines (16), not
the newer tables of the `regex` module: a letter new in Unicode 17 is not a letter (``\\p{L}``) here either
(`tokviz.core.text.unicode_tables.PinnedPattern`), so a model trained here and exported to
tokenizer.json or .tiktoken splits every text as those libraries do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import regex

from tokviz.core.errors import SplitError

from .literals import Literals
from .pattern_limits import limited, time_limit
from .presets import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN

# str.split() splits on exactly the characters for which str.isspace() is true; the last of them
# is U+3000 (a test checks the whole range), so scanning further would only slow start-up.
SPACE_SCAN_LIMIT = 0x3001
SPACE_CHARS = "".join(c for c in map(chr, range(SPACE_SCAN_LIMIT)) if c.isspace())
WHITESPACE_SPLIT_PATTERN = "[^" + regex.escape(SPACE_CHARS) + "]+"

SPLIT_PRESETS: dict[str, str | None] = {
    "none": None,
    "whitespace": WHITESPACE_SPLIT_PATTERN,
    "gpt2": GPT2_SPLIT_PATTERN,
    "gpt4": GPT4_SPLIT_PATTERN,
    "o200k": O200K_SPLIT_PATTERN,
}
LOSSLESS_PRESETS = frozenset({"none", "gpt2", "gpt4", "o200k"})
# presets `tokviz.core.text.fastsplit` splits on Python's `re` (ASCII or BMP classes) with the
# chunks of one pinned `regex` scan: counting a corpus takes a third of the time
FAST_PRESETS = frozenset({"gpt2", "gpt4", "o200k"})
SPLIT_CHOICES = "none|whitespace|gpt2|gpt4|o200k|regex:PATTERN"


def python_regex_pattern(pattern: str) -> str:
    """Adapt a tiktoken (Rust) pattern to Python's `regex`: there, `$` means end of text only."""
    return pattern.replace(r"\s++$", r"\s++\Z")


@dataclass(frozen=True)
class Splitter:
    """A validated pre-tokenization rule. `spec` is the user-facing name (``gpt4``, ``regex:...``)."""

    spec: str
    pattern: str | None = field(default=None)

    @cached_property
    def _compiled(self):  # a PinnedPattern, or None
        if self.pattern is None:
            return None
        from tokviz.core.text.unicode_tables import PinnedPattern  # Unicode 16, as tiktoken

        return PinnedPattern(python_regex_pattern(self.pattern), trusted=self.spec in SPLIT_PRESETS)

    @cached_property
    def _fast(self):  # a FastSplitter of a preset OpenAI pattern (`FAST_PRESETS`)
        from .fastsplit import FastSplitter

        return FastSplitter(self.pattern, self._compiled)

    @property
    def lossless(self) -> bool:
        """True when the chunks always cover the whole text (nothing is dropped)."""
        return self.spec in LOSSLESS_PRESETS

    @property
    def safe_boundary(self) -> regex.Pattern | None:
        """Where a long text may be cut into slices counted apart without changing a chunk, for
        a split with a rule of its own (None: `tokviz.core.text.chunks.SAFE_BOUNDARY`)."""
        return None

    def chunks(self, text: str) -> list[str]:
        """The chunks of `text`, in order. ``none`` gives the whole text as one chunk."""
        if self._compiled is None:
            return [text] if text else []
        if self.spec == "whitespace":
            return text.split()
        # concurrent=True releases the GIL while matching: background tokenization then never
        # blocks the GUI thread for the length of a long findall.
        return [c for c in self._compiled.findall(text, concurrent=True) if c]

    def count(self, text: str) -> Counter:
        """``Counter`` of the chunks of `text` (what corpus counting needs, without the list).

        Same chunks as `chunks`; the choice between the fast and the pinned pattern looks at the
        set of distinct characters (a hash pass) rather than searching the text for the few
        hundred characters new in Unicode 17 (a character-class scan, about 8x slower).

        >>> parse_split("gpt4").count("the cat the")
        Counter({'the': 1, ' cat': 1, ' the': 1})
        """
        if self._compiled is None:
            return Counter([text] if text else [])
        if self.spec == "whitespace":
            return Counter(text.split())
        if self.spec in FAST_PRESETS:  # the same chunks, 3x as fast as one `regex` scan
            counts = Counter()
            for part in self._fast.chunk_lists(text):
                counts.update(part)
            counts.pop("", None)
            return counts
        pinned = self._compiled
        pattern = pinned.fast
        # the same choice as PinnedPattern.for_text: only property classes differ between the two
        properties = "\\p{" in pinned.pattern or "\\P{" in pinned.pattern
        if properties and not text.isascii() and _has_new_unicode(text):
            pattern = pinned.exact
        limit = time_limit(len(text))  # a pattern a user typed: it may backtrack without end
        with limited(pinned.pattern, limit, len(text)):
            counts = Counter(pattern.findall(text, concurrent=True, timeout=limit))
        counts.pop("", None)
        return counts

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans ``(start, end)`` of the chunks of `text`."""
        if self._compiled is None:
            return [(0, len(text))] if text else []
        return [m.span() for m in self._compiled.finditer(text, concurrent=True) if m.end() > m.start()]


def _has_new_unicode(text: str) -> bool:
    """Does `text` hold a character new in Unicode 17 (which the pinned pattern must see)?"""
    from tokviz.core.text.unicode_tables import NEW_IN_UNICODE_17

    first = min(NEW_IN_UNICODE_17.starts)
    return any(c in NEW_IN_UNICODE_17 for c in set(text) if ord(c) >= first)


def parse_split(spec: str) -> Splitter:
    """Turn ``gpt4`` / ``regex:\\w+`` / ... into a `Splitter`, or raise `SplitError` saying why."""
    if spec in SPLIT_PRESETS:
        return Splitter(spec, SPLIT_PRESETS[spec])
    if spec.startswith("regex:"):
        pattern = spec[len("regex:"):]
        if not pattern:
            raise SplitError("empty split regex; write --split 'regex:PATTERN', e.g. regex:\\w+|\\S")
        try:
            compiled = regex.compile(pattern)
        except (regex.error, OverflowError, RecursionError) as exc:
            raise SplitError(f"invalid split regex {pattern!r}: {exc}") from None
        if compiled.groups:
            # findall() would return groups instead of whole matches; make them non-capturing.
            raise SplitError(
                f"split regex {pattern!r} has capturing groups; use (?:...) instead of (...)"
            )
        return Splitter(spec, pattern)
    raise SplitError(f"unknown split {spec!r}; choose one of {SPLIT_CHOICES}")


@lru_cache(maxsize=64)
def _specials_table(specials: tuple[str, ...]) -> Literals:
    """The special-token strings, matched leftmost-longest (built once per set: encoding many
    short texts asks for the same set again and again)."""
    return Literals(specials)


def split_specials(text: str, specials: tuple[str, ...] | list[str]) -> list[tuple[int, int, bool]]:
    """Cut `text` around occurrences of the special-token strings.

    Returns ``(start, end, is_special)`` pieces covering the text; longer specials win at the same
    position.

    >>> split_specials("a<s>b", ["<s>"])
    [(0, 1, False), (1, 4, True), (4, 5, False)]
    """
    if not specials or not text:
        return [(0, len(text), False)] if text else []
    pieces: list[tuple[int, int, bool]] = []
    pos = 0
    for a, b, _ in _specials_table(tuple(sorted(specials))).finditer(text):
        if a > pos:
            pieces.append((pos, a, False))
        pieces.append((a, b, True))
        pos = b
    if pos < len(text):
        pieces.append((pos, len(text), False))
    return pieces
