"""Exact id parity with tiktoken (``encode_ordinary``) and tokenizers (``encode(text).ids``).

Known ids and the TestPlans file need no reference library; corpus samples and generated Unicode
compare against the library (skipped when it is not installed). ``TOKVIZ_FULL_PARITY=1`` runs
whole corpora.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.real_tokenizers import (
    CORPORA,
    HF_NAMES,
    TIKTOKEN_NAMES,
    corpus,
    full_only,
    load_ours,
    load_reference,
    load_test_plans,
    our_ids,
    reference_ids,
    unicode_text,
)

ALL_NAMES = TIKTOKEN_NAMES + HF_NAMES

KNOWN_IDS = [
    ("cl100k_base", "hello world", [15339, 1917]),
    ("cl100k_base", "Hello, world!", [9906, 11, 1917, 0]),
    ("r50k_base", " SolidGoldMagikarp", [43453]),
    ("o200k_base", "hello 👋 world 🌍", [24912, 61138, 233, 2375, 130321, 235]),
    ("bert-base-uncased", "Hello world", [101, 7592, 2088, 102]),
    ("mistral-7b-v0.1", "Hello world!", [1, 22557, 1526, 28808]),
    ("gpt2", " SolidGoldMagikarp", [43453]),
]


@pytest.mark.parametrize(("name", "text", "ids"), KNOWN_IDS)
def test_known_ids(name, text, ids):
    tok = load_ours(name)
    assert tok.encode(text).ids == ids
    assert our_ids(name, text) == ids


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_test_plans(name):
    plans = [(s, ids) for n, s, ids in load_test_plans() if n == name]
    assert len(plans) >= 50
    tok = load_ours(name)
    bad = [(s, tok.encode_ids(s), ids) for s, ids in plans if tok.encode_ids(s) != ids]
    assert bad == []


@pytest.mark.parametrize("name", HF_NAMES)
def test_test_plans_samples_hf(name):
    samples = sorted({s for _, s, _ in load_test_plans()})
    bad = [s for s in samples if our_ids(name, s) != reference_ids(name, s)]
    assert bad == []


def test_p50k_plans_need_their_file():
    """p50k is not in ../shared: its samples are checked through r50k's shared ranks only where
    the two agree (no runs of spaces, which p50k has extra tokens for)."""
    tok = load_ours("r50k_base")
    plans = [(s, ids) for n, s, ids in load_test_plans() if n == "p50k_base" and "  " not in s]
    assert plans
    assert [s for s, ids in plans if tok.encode_ids(s) != ids] == []


def _first_mismatch(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


@pytest.mark.parametrize("corpus_name", CORPORA)
@pytest.mark.parametrize("name", ALL_NAMES)
def test_corpus_sample(name, corpus_name):
    text = corpus(corpus_name)
    ours, ref = our_ids(name, text), reference_ids(name, text)
    at = _first_mismatch(ours, ref)
    assert ours == ref, f"first difference at token {at}: {ours[at:at + 5]} vs {ref[at:at + 5]}"


@pytest.mark.slow
@full_only
@pytest.mark.parametrize("corpus_name", CORPORA)
@pytest.mark.parametrize("name", ALL_NAMES)
def test_corpus_whole(name, corpus_name):
    text = corpus(corpus_name, None)
    ours, ref = our_ids(name, text), reference_ids(name, text)
    at = _first_mismatch(ours, ref)
    assert ours == ref, f"first difference at token {at}: {ours[at:at + 5]} vs {ref[at:at + 5]}"


# -- generated Unicode -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=unicode_text())
def test_generated_unicode(name, text):
    assert our_ids(name, text) == reference_ids(name, text)


@pytest.mark.parametrize("name", ALL_NAMES)
@settings(max_examples=60, deadline=None)
@given(text=unicode_text())
def test_decode_matches_reference(name, text):
    tok, ref = load_ours(name), load_reference(name)
    ids = reference_ids(name, text)
    if name in TIKTOKEN_NAMES:
        assert tok.decode(ids) == ref.decode(ids)
        assert tok.decode_bytes(ids) == ref.decode_bytes(ids)
    else:
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False)
        assert tok.decode(ids, skip_special_tokens=True) == ref.decode(ids)
