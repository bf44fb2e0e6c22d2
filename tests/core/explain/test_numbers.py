"""The number lens's core: a number's cut beside the place-value cut, and 1-1000 as a grid."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import shared_file
from tokviz.core.explain.numbers import (
    GRID_COLUMNS,
    OTHER,
    PATTERNS,
    NumberSplit,
    number_grid,
    right_aligned_boundaries,
    split_number,
)
from tokviz.core.loading import open_timeline


@pytest.fixture(scope="module")
def cl100k():
    return open_timeline(str(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))).tokenizer()


@pytest.fixture(scope="module")
def gpt2():
    return open_timeline(str(shared_file("vocab", "gpt2-data-gym", "vocab.bpe"))).tokenizer()


@given(st.integers(1, 30))
def test_place_value_cuts_leave_groups_of_three_from_the_right(n):
    cuts = sorted(right_aligned_boundaries(n))
    lengths = [b - a for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    assert all(length == 3 for length in lengths[1:]) and 1 <= lengths[0] <= 3


def test_a_split_knows_its_cuts_pattern_and_alignment():
    s = NumberSplit("1234567", ("1", "234", "567"), (1, 2, 3))
    assert s.cuts == {1, 4} == s.place_value_cuts and s.pattern == "1+3+3" and s.aligned
    assert not NumberSplit("1234567", ("123", "456", "7"), (1, 2, 3)).aligned
    assert NumberSplit("12345", ("12345",), (9,)).aligned  # whole: no cut across place value


def test_cl100k_cuts_from_the_left_and_gpt2_by_frequency(cl100k, gpt2):
    assert split_number(cl100k, "1234567").pieces == ("123", "456", "7")
    assert split_number(gpt2, "1234567").pieces == ("123", "45", "67")
    assert split_number(gpt2, "847").pieces == ("8", "47")
    assert split_number(cl100k, "1000").pieces == ("100", "0") and not split_number(cl100k, "1000").aligned


def test_a_sentencepiece_leading_marker_is_no_piece_of_its_own():
    mistral = open_timeline(str(shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json"))).tokenizer()
    s = split_number(mistral, "847")
    assert s.pieces == ("8", "4", "7") and len(s.ids) == 4  # "▁" "8" "4" "7"


def test_the_grid_lays_1_to_1000_out_by_hundreds(cl100k, gpt2):
    grid = number_grid(gpt2)
    codes, counts = grid.pattern_codes(), grid.token_counts()
    assert codes.shape == counts.shape == (1000 // GRID_COLUMNS + 1, GRID_COLUMNS)
    assert math.isnan(codes[0, 0]) and math.isnan(codes[10, 1]) and not math.isnan(codes[10, 0])
    assert PATTERNS[int(codes[8, 47])] == "1+2" and counts[8, 47] == 2  # 847 = 8|47
    assert grid.split_of(1000).pieces == ("1000",) and grid.split_of(0) is None
    s = grid.summary()
    assert s["one_token"] == pytest.approx(0.819) and s["aligned"] == s["one_token"]
    c = number_grid(cl100k).summary()
    assert c["one_token"] == pytest.approx(0.999) and c["tokens_per_number"] == pytest.approx(1.001)


def test_an_unknown_pattern_is_other():
    class Digits:  # cuts every digit: 1000 is 1+1+1+1, a pattern the table does not list
        def encode_ordinary(self, text):
            from types import SimpleNamespace

            return SimpleNamespace(ids=[ord(c) for c in text], spans=[(i, i + 1) for i in range(len(text))])

    grid = number_grid(Digits())
    assert int(grid.pattern_codes()[10, 0]) == OTHER and PATTERNS[int(grid.pattern_codes()[1, 23])] == "1+1+1"
