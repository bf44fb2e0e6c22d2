"""The character tables that make tokviz split and normalize like tiktoken's and tokenizers'
Rust code. The default run checks samples; ``TOKVIZ_FULL_PARITY=1`` checks every code point."""

from __future__ import annotations

import sys

import pytest

from tests.real_tokenizers import HF_NAMES, TIKTOKEN_NAMES, full_only, our_ids, reference_ids
from tokviz.core.text import unicode_tables as ut

ALL = TIKTOKEN_NAMES + HF_NAMES


def contexts(c: str) -> str:
    return f"a{c}b {c}1 {c}{c} x{c}\n{c}'s A{c}a\t{c} é{c}"


def _code_points(step: int = 1):
    return [c for c in range(0x80, sys.maxunicode + 1, step) if not 0xD800 <= c <= 0xDFFF]


def _check(name: str, cps: list[int]) -> list[int]:
    bad = []
    for k in range(0, len(cps), 1024):
        block = cps[k : k + 1024]
        text = "".join(contexts(chr(c)) for c in block)
        if our_ids(name, text) != reference_ids(name, text):
            bad.extend(c for c in block if our_ids(name, contexts(chr(c))) != reference_ids(name, contexts(chr(c))))
    return bad


def test_tables_parse_into_sorted_ranges():
    for table in (ut.NEW_IN_UNICODE_17, ut.BERT_OTHER, ut.BERT_NONSPACING_MARK, ut.BERT_PUNCTUATION):
        assert table.starts == sorted(table.starts)
        assert all(a <= b for a, b in zip(table.starts, table.ends))
        assert all(b < a for b, a in zip(table.ends, table.starts[1:]))
    assert "\u0301" in ut.BERT_NONSPACING_MARK and "a" not in ut.BERT_NONSPACING_MARK
    assert "\u00bf" in ut.BERT_PUNCTUATION and "\u2e45" not in ut.BERT_PUNCTUATION  # P* since Unicode 10
    assert "\u00ad" in ut.BERT_OTHER and "\u0378" not in ut.BERT_OTHER  # unassigned is not "other"


def test_pinned_pattern_ignores_the_newest_letters():
    p = ut.PinnedPattern(r"\p{L}+|[^\s\p{L}]+|\s+")
    new = "\U0003d000"  # a letter only since Unicode 17
    assert p.fast.findall("ab" + new + "cd") == ["ab" + new + "cd"]
    assert p.findall("ab" + new + "cd") == ["ab", new, "cd"]
    assert p.findall("plain text") == ["plain", " ", "text"]


@pytest.mark.parametrize("name", ALL)
def test_every_table_range_edge(name):
    edges = set()
    for table in (ut.NEW_IN_UNICODE_17, ut.BERT_OTHER, ut.BERT_NONSPACING_MARK, ut.BERT_PUNCTUATION):
        for a, b in zip(table.starts, table.ends):
            edges.update({a - 1, a, b, b + 1})
    cps = sorted(c for c in edges if 0x80 <= c <= sys.maxunicode and not 0xD800 <= c <= 0xDFFF)
    assert _check(name, cps) == []


@pytest.mark.parametrize("name", ALL)
def test_a_sample_of_all_code_points(name):
    assert _check(name, _code_points(step=41)) == []


PLANES = [(0x80, 0x10000), (0x10000, 0x20000), (0x20000, 0x30000), (0x30000, 0x40000),
          (0x40000, 0xE0000), (0xE0000, sys.maxunicode + 1)]


@pytest.mark.slow
@full_only
@pytest.mark.parametrize("plane", PLANES, ids=lambda p: f"{p[0]:x}" if isinstance(p, tuple) else None)
@pytest.mark.parametrize("name", ALL)
def test_every_code_point(name, plane):
    cps = [c for c in range(*plane) if not 0xD800 <= c <= 0xDFFF]
    assert _check(name, cps) == []


def test_strip_accents_marks_match_tokenizers():
    normalizers = pytest.importorskip("tokenizers.normalizers")
    strip = normalizers.StripAccents()
    edges = set()
    for a, b in zip(ut.STRIP_ACCENTS_MARK.starts, ut.STRIP_ACCENTS_MARK.ends):
        edges.update({a - 1, a, b, b + 1})
    cps = sorted(c for c in edges | set(_code_points(step=53)) if c >= 0x80 and not 0xD800 <= c <= 0xDFFF)
    wrong = [c for c in cps if (strip.normalize_str(f"a{chr(c)}b") == "ab") != ut.is_mark(chr(c))]
    assert wrong == []
