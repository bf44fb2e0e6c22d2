"""The metrics of the three shared ``.tiktoken`` encodings against figures computed from tiktoken's
own ids and token bytes (skipped without tiktoken or ../shared)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import TIKTOKEN_NAMES, load_reference, tiktoken_path
from tokviz.core.compare import ModelSpec, compare, model_facts
from tokviz.core.loading import open_timeline

SAMPLE = ("Whereas recognition of the inherent dignity  of all members\n\tof the human family…\n"
          "Все люди рождаются свободными 人人生而自由 كل الناس  हर व्यक्ति 👋🏽 <|endoftext|> ok\n")
_TIMELINES: dict[str, object] = {}


def timeline(name: str):
    if name not in _TIMELINES:
        _TIMELINES[name] = open_timeline(tiktoken_path(name))
    return _TIMELINES[name]


def reference_metrics(enc, text: str) -> dict:
    """The metrics from tiktoken's ids, by the definitions, with plain Python."""
    ids = enc.encode_ordinary(text)
    n = len(ids)
    counts: dict[int, int] = {}
    for i in ids:
        counts[i] = counts.get(i, 0) + 1
    h = math.log(sum((c / n) ** 2.5 for c in counts.values())) / (1 - 2.5)
    # which word each byte of the text belongs to (None: whitespace)
    owner: list[int | None] = []
    word = -1
    for k, ch in enumerate(text):
        if ch.isspace():
            owner += [None] * len(ch.encode())
        else:
            if k == 0 or text[k - 1].isspace():
                word += 1
            owner += [word] * len(ch.encode())
    per_word = [0] * (word + 1)
    pos = 0
    for i in ids:
        size = len(enc.decode_single_token_bytes(i))
        for w in {owner[b] for b in range(pos, pos + size)} - {None}:
            per_word[w] += 1
        pos += size
    words = len(text.split())
    return {
        "tokens": n, "words": words, "fertility": n / words if words else None,
        "continued_words": sum(1 for c in per_word if c >= 2) / words if words else None,
        "vocab_used": len(counts) / enc.n_vocab,
        "renyi_efficiency": h / math.log(enc.n_vocab),
        "bytes_per_token": len(text.encode()) / n,
    }


def check(name: str, text: str) -> None:
    enc = load_reference(name)
    got = compare(text, [ModelSpec(name, lambda: timeline(name))]).results[0]
    assert got.error is None
    expected = reference_metrics(enc, text)
    assert got.metrics.tokens == expected.pop("tokens") == len(enc.encode_ordinary(text))
    assert got.metrics.words == expected.pop("words")
    for key, value in expected.items():
        assert getattr(got.metrics, key) == (value if value is None else pytest.approx(value, rel=1e-12)), key
    assert (got.metrics.unk_rate, got.metrics.byte_fallback_rate) == (0.0, None)


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_sample_matches_tiktoken(name):
    check(name, SAMPLE)


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_udhr_sample_matches_tiktoken(name, corpus_text):
    check(name, corpus_text("udhr2_all.txt", 60_000))


@settings(max_examples=25, deadline=None)
@given(st.text(st.sampled_from("ab é\t\n字👋 .,'s"), min_size=1, max_size=30))
def test_random_texts_match_tiktoken(text):
    check("cl100k_base", text)


@pytest.mark.parametrize("name, size", [("r50k_base", 50_257), ("cl100k_base", 100_277), ("o200k_base", 200_019)])
def test_vocabulary_sizes_are_tiktokens(name, size):
    assert load_reference(name).n_vocab == size == model_facts(timeline(name)).vocab_size
    assert model_facts(timeline(name), 10).vocab_size == size - timeline(name).n_steps + 10
