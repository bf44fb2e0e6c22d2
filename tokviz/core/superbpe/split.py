"""The pre-tokenizer of SuperBPE's second stage: the chunks merges may cross spaces inside.

The authors' stage-2 script (PythonNut/superbpe, ``scripts/extend_tokenizer.sh``) trains with the
regex ``\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*| +(?!\\S)`` used by a Hugging Face ``Split``
pre-tokenizer whose matches are *isolated*: each match is a chunk and so is the text between two
matches. So digits stay in groups of up to three, runs of two or more punctuation marks (with the
newlines or slashes after them) stay apart, and so do the spaces before a space-led word; words,
single punctuation marks, the single spaces between words and newlines all join one chunk.

tokviz's `Splitter` keeps only what a pattern matches, so the isolated split is written as one
lossless pattern: the authors' alternatives, then "any run of characters at which none of them
matches" (the text between two matches). Splitting runs the authors' alternatives alone and
takes the text between two matches as it finds them, the same chunks at about twice the speed of
the lossless pattern (which tries every alternative again at each character between matches).

    >>> STAGE_TWO.chunks("Hello, world!! By 2025 it is")
    ['Hello, world', '!!', ' By ', '202', '5', ' it is']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import regex

from tokviz.core.text.split import Splitter
from tokviz.core.text.unicode_tables import PinnedPattern

# the authors' stage-2 regex, verbatim
AUTHORS_STAGE_TWO = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"
STAGE_TWO_PATTERN = AUTHORS_STAGE_TWO + r"|(?:(?!(?:" + AUTHORS_STAGE_TWO + r"))[\s\S])+"
# Where a long text may be cut for counting: between a letter and a digit or two punctuation marks.
# The run of text between matches that holds the letter ends there (a match starts), and no match
# or lookahead before the cut sees past the letter. Characters whose class every Unicode version
# agrees on, so the cut holds whichever tables the split matches with. (Stage-2 chunks run across
# line starts, where the stage-1 splits' texts are cut.)
_PUNCT = r"""[!-/:-@\[-`{-~\u2014\u2018\u2019\u201c\u201d]"""
STAGE_TWO_BOUNDARY = regex.compile(r"(?<=[A-Za-z])(?=" + _PUNCT + "{2}|[0-9])")


@dataclass(frozen=True)
class StageTwoSplitter(Splitter):
    """The stage-2 split: it covers every character, as the isolated split does."""

    @property
    def lossless(self) -> bool:
        return True

    @property
    def safe_boundary(self) -> regex.Pattern:
        return STAGE_TWO_BOUNDARY

    @cached_property
    def _matches(self) -> PinnedPattern:  # the authors' alternatives alone (tokviz's own: no time limit)
        return PinnedPattern(AUTHORS_STAGE_TWO, trusted=True)

    def chunks(self, text: str) -> list[str]:
        out, pos = [], 0
        for m in self._matches.for_text(text).finditer(text):
            a, b = m.span()
            if a > pos:  # the text between two matches
                out.append(text[pos:a])
            out.append(text[a:b])  # a match is never empty
            pos = b
        if pos < len(text):
            out.append(text[pos:])
        return out

    def count(self, text: str) -> Counter:
        return Counter(self.chunks(text))


STAGE_TWO = StageTwoSplitter("superbpe-stage2", STAGE_TWO_PATTERN)
