"""`Splitter.count` (what corpus counting uses) gives exactly ``Counter(Splitter.chunks(text))``,
including texts with characters new in Unicode 17, which need the pinned pattern."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.text import fastsplit
from tokviz.core.text.split import SPLIT_PRESETS, parse_split, python_regex_pattern
from tokviz.core.text.unicode_tables import NEW_IN_UNICODE_17, PinnedPattern

NEW17 = [chr(a) for a in NEW_IN_UNICODE_17.starts[:40]]  # letters, marks, digits tiktoken does not know
SPECS = [*SPLIT_PRESETS, r"regex:\w+|\S"]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("text", [
    "", "hello world", "Hello, world!\n\n  it's 1234 ok\r\n",
    "a" + NEW17[0] + "b c" + NEW17[5] + "1 " + NEW17[-1],
    "déjà vu — “quoted” ’tis 🜨",
])
def test_count_equals_counter_of_chunks(spec, text):
    s = parse_split(spec)
    got = s.count(text)
    assert got == Counter(s.chunks(text))
    assert list(got) == list(dict.fromkeys(s.chunks(text)))  # first-appearance order


def test_a_new_unicode_letter_changes_the_chunks_as_in_chunks():
    # U+0558 is a letter in Unicode 17, not in tiktoken's 16: it starts a chunk instead of
    # continuing the letter run (with the newer tables "a\u0558b" would be one chunk)
    s = parse_split("gpt4")
    text = "a\u0558b"
    assert s.count(text) == Counter(s.chunks(text)) == Counter(["a", "\u0558b"])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "B", " ", "\n", "\r", "1", "'", "s", ",", "é", "\u3000", "😀", *NEW17[:6]]),
               max_size=60),
       st.sampled_from(SPECS))
def test_count_matches_chunks_on_random_text(text, spec):
    s = parse_split(spec)
    assert s.count(text) == Counter(s.chunks(text))
    assert list(s.count(text)) == list(dict.fromkeys(s.chunks(text)))


def _mixed_text(n: int, astral: bool) -> str:
    """`n` or so characters of words, numbers, spaces, punctuation and non-ASCII letters (seeded)."""
    import random

    rng = random.Random(7)
    parts = ["the", " cat", "  ", "\n\n", "1234", " 56", "'s", "'LL", ",", "!?", " “", "”", "déjà", " Ελλάδα",
             "日本語", "\u3000", "\t", " — ", "ß", "\r\n", *NEW17[:3]] + (["😀"] if astral else [])
    out, size = [], 0
    while size < n:
        p = rng.choice(parts)
        out.append(p)
        size += len(p)
    return "".join(out)



@pytest.mark.parametrize("spec", ["gpt2", "gpt4", "o200k"])
@pytest.mark.parametrize("n,astral,bmp_from", [(3_000, False, 2_000), (3_000, True, 2_000), (3_000, False, None),
                                                (30_000, True, None), (200_000, False, 2_000)])
def test_fast_counting_of_long_texts_equals_one_pinned_scan(monkeypatch, spec, n, astral, bmp_from):
    """The presets count with the fast splitter (ASCII runs, BMP runs when the text is long enough,
    `bmp_from` standing in for the million characters, segments otherwise): the counts of one scan
    of the pinned pattern, in first-appearance order."""
    if bmp_from is not None:
        monkeypatch.setattr(fastsplit, "BMP_MIN_CHARS", bmp_from)
        monkeypatch.setattr(fastsplit, "BMP_DENSE_MIN_CHARS", bmp_from)
    s = parse_split(spec)
    text = _mixed_text(n, astral)
    reference = PinnedPattern(python_regex_pattern(s.pattern), trusted=True)
    expected = Counter(c for c in reference.findall(text) if c)
    got = s.count(text)
    assert got == expected
    assert list(got) == list(expected)
