"""The shrinker ends 1-minimal; the generated texts are seeded and cover every kind."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.errors import Cancelled
from tokviz.core.parity import KINDS, fuzz_inputs, shrink


def test_shrink_keeps_what_the_failure_needs():
    assert shrink("the quick brown fox", lambda s: "q" in s and "x" in s) == "qx"
    assert shrink("aaaa", lambda s: s.count("a") >= 3) == "aaa"
    assert shrink("z", lambda s: True) == ""


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcxyz", min_size=1, max_size=40), st.sets(st.sampled_from("abc"), min_size=1))
def test_shrink_is_one_minimal(text, needed):
    def fails(s: str) -> bool:
        return all(c in s for c in needed)

    if not fails(text):
        return
    small = shrink(text, fails)
    assert fails(small)
    assert all(not fails(small[:i] + small[i + 1:]) for i in range(len(small)))
    assert sorted(small) == sorted(needed)


def test_shrink_stops_when_asked():
    import pytest

    with pytest.raises(Cancelled):
        shrink("abcdef", lambda s: True, should_stop=lambda: True)


def test_fuzz_is_seeded_and_takes_every_kind_in_turn():
    first = list(fuzz_inputs(70, seed=3, specials=["<|endoftext|>"], words=["hello", "Ġx"]))
    assert first == list(fuzz_inputs(70, seed=3, specials=["<|endoftext|>"], words=["hello", "Ġx"]))
    assert first != list(fuzz_inputs(70, seed=4, specials=["<|endoftext|>"], words=["hello", "Ġx"]))
    assert [k for k, _ in first[: len(KINDS)]] == list(KINDS)
    texts = {kind: [t for k, t in first if k == kind] for kind in KINDS}
    assert all(len(v) == 10 and all(v) for v in texts.values())
    assert any("<|endoftext|>" in t for t in texts["special"])
    assert any(c.isdigit() for t in texts["digits"] for c in t)
    assert any(not t.isascii() for t in texts["script"])
    assert any(c in t for t in texts["whitespace"] for c in "\t\n\u00a0\u3000")
