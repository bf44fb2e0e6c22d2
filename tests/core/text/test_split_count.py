"""`Splitter.count` (what corpus counting uses) gives exactly ``Counter(Splitter.chunks(text))``,
including texts with characters new in Unicode 17, which need the pinned pattern."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.text.split import SPLIT_PRESETS, parse_split
from tokviz.core.text.unicode_tables import NEW_IN_UNICODE_17

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
