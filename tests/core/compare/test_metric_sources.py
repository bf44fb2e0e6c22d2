"""The compare metrics against their sources: every metric of ``tokenization-scorer`` on the same
tokenized texts (to 1e-9, several real tokenizers), and known answers worked out by hand for STRR,
UTF-8 integrity, number splits and code (swiss-ai/tokenizer-intrinsic-evals' definitions)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tests.real_tokenizers import corpus, hf_path, tiktoken_path
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.compare import ModelSpec, compare, encode_positions, iter_compare, model_facts, text_facts
from tokviz.core.compare import distribution as dist
from tokviz.core.compare.metrics import id_counts
from tokviz.core.compare.utf8_integrity import crosses_character_boundary, utf8_tables
from tokviz.core.explain.loaded_timeline import as_timeline
from tokviz.core.loading import open_timeline

scorer = pytest.importorskip("tokenization_scorer")

TOKENIZERS = {
    "gpt2": lambda: hf_path("gpt2"),
    "bert-base-uncased": lambda: hf_path("bert-base-uncased"),
    "mistral-7b-v0.1": lambda: hf_path("mistral-7b-v0.1"),
    "cl100k_base": lambda: tiktoken_path("cl100k_base"),
}
_OPENED: dict[str, object] = {}


def timeline(name: str):
    if name not in _OPENED:
        _OPENED[name] = open_timeline(TOKENIZERS[name]())
    return _OPENED[name]


def texts() -> dict[str, str]:
    udhr = corpus("udhr2_all.txt", None)
    return {"taylorswift": corpus("taylorswift.txt", 20_000), "udhr": udhr[2_000_000:2_020_000]}


def scorer_text(ids: np.ndarray, starts: np.ndarray, line_of: np.ndarray, lines: int) -> str:
    """The tokens as the package reads them: one line of space-separated token names per text line."""
    out: list[list[str]] = [[] for _ in range(lines)]
    for i, s in zip(ids.tolist(), starts.tolist()):
        out[line_of[min(s, len(line_of) - 1)]].append(f"t{i}")
    return "\n".join(" ".join(line) for line in out)


@pytest.mark.parametrize("text_name", ["taylorswift", "udhr"])
@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_every_scorer_metric_on_the_same_tokens(name, text_name):
    text = texts()[text_name]
    tl = timeline(name)
    model = model_facts(tl)
    facts = text_facts(text)
    pos = encode_positions(model, facts)
    # the text line each token position falls in (bytes or chars, as the positions are)
    unit = text.encode("utf-8") if pos.in_bytes else text
    newline = b"\n"[0] if pos.in_bytes else "\n"
    line_of = np.cumsum([0, *(1 if u == newline else 0 for u in unit)])[:-1]
    lines = text.count("\n") + 1
    tokenized = scorer_text(pos.ids, pos.starts, line_of, lines)
    counts = id_counts(pos.ids)
    v = model.vocab_size

    def ref(metric, **kw):
        return float(scorer.score(tokenized, metric=metric, **kw))

    m = compare(text, [ModelSpec(name, lambda: tl)]).results[0].metrics
    assert m.tokens == len(pos.ids)
    close = {"abs": 1e-9, "rel": 0}
    assert m.shannon_efficiency_observed == pytest.approx(ref("shannon_efficiency"), **close)
    assert m.shannon_efficiency == pytest.approx(ref("shannon_efficiency", vocab=v), **close)
    assert m.renyi_efficiency_observed == pytest.approx(ref("renyi", power=2.5), **close)
    assert m.renyi_efficiency == pytest.approx(ref("renyi", power=2.5, vocab=v), **close)
    for alpha in (0.5, 2.5, 3.0):
        assert dist.efficiency(counts, alpha) == pytest.approx(ref("renyi_efficiency", power=alpha), **close)
        assert dist.efficiency(counts, alpha, v) == pytest.approx(ref("renyi", power=alpha, vocab=v), **close)
        assert dist.renyi_entropy(counts, alpha) == pytest.approx(ref("renyi_entropy", power=alpha), **close)
    assert dist.shannon_entropy(counts) == pytest.approx(ref("shannon_entropy"), **close)
    for start, end in ((0.03, 0.83), (0.3, 0.6)):
        got = dist.percentile_frequency(counts, start, end)
        assert got == pytest.approx(ref("percentile_freq", perc_start=start, perc_end=end), **close)
    assert dist.bits(counts) == pytest.approx(ref("bits"), rel=1e-12)
    assert dist.sequence_length(len(pos.ids), lines) == pytest.approx(ref("seq_len"), **close)


def test_the_scorer_examples_of_its_own_tests():
    """The package's own test texts ("pick @@ed ..."), as token counts."""
    for text in ("pick @@ed pick @@l @@ed pick @@les", "pick @@e @@d pick @@l @@e @@d pick @@l @@e @@s"):
        words = text.split()
        counts = np.array([words.count(w) for w in dict.fromkeys(words)])
        assert dist.efficiency(counts, 2.5) == pytest.approx(scorer.score(text, metric="renyi", power=2.5), abs=1e-12)
        assert dist.bits(counts) == pytest.approx(scorer.score(text, metric="bits"), abs=1e-12)
    assert dist.efficiency(np.array([3, 2, 1, 1]), 2.5) == pytest.approx(0.8265064834225245, abs=1e-12)


def test_type_token_ratio_and_average_rank_by_hand():
    counts = np.array([1, 5, 2])  # 8 tokens, 3 types; ranks: 5 -> 1, 2 -> 2, 1 -> 3
    assert dist.type_token_ratio(counts) == 3 / 8
    assert dist.average_rank(counts) == pytest.approx((5 * 1 + 2 * 2 + 1 * 3) / 8)
    assert dist.average_rank(np.zeros(0)) is None and dist.type_token_ratio(np.zeros(0)) is None


def tokeval_avg_token_rank(tokens: list[int]) -> float:
    """swiss-ai/tokenizer-intrinsic-evals' ``avg_token_rank`` (its unigram distribution metrics),
    written out as it defines it: rank the types by ``Counter.most_common()`` from 1, then average
    the rank of every token."""
    from collections import Counter

    rank = {t: r + 1 for r, (t, _) in enumerate(Counter(tokens).most_common())}
    return float(np.mean([rank[t] for t in tokens]))


def test_average_rank_is_tokevals_on_real_tokens():
    for name, path in (("gpt2", hf_path("gpt2")), ("cl100k", tiktoken_path("cl100k_base"))):
        tok = open_timeline(str(path)).tokenizer()
        ids = tok.encode_ids(corpus("taylorswift.txt", 20_000))
        assert dist.average_rank(id_counts(np.asarray(ids))) == pytest.approx(tokeval_avg_token_rank(ids), abs=1e-9), name


# -- known answers on a byte-level toy model ---------------------------------------------------------


def byte_model(merges: list[bytes], pattern: str = r"\S+|\s+"):
    """Byte-level BPE over the 256 bytes plus `merges` in that order: encodes any text losslessly."""
    ranks = {bytes([b]): b for b in range(256)} | {m: 256 + k for k, m in enumerate(merges)}
    return as_timeline(RankBpeTokenizer(ranks, pattern=pattern))


def measure(tl, text: str, **kw):
    r = compare(text, [ModelSpec("m", lambda: tl)], **kw).results[0]
    assert r.error is None
    return r


def test_strr_counts_words_kept_as_one_token():
    # "ab abc a": tokens ab | " " | ab c | " " | a: "ab" and "a" whole, "abc" in two
    m = measure(byte_model([b"ab"]), "ab abc a").metrics
    assert (m.strr, m.continued_words) == (pytest.approx(2 / 3), pytest.approx(1 / 3))


def test_utf8_integrity_by_hand():
    # "aé你" = 61 | c3 a9 | e4 bd a0; the merge a9+e4 fuses the tail of é with the lead of 你:
    # tokens 61 | c3 | a9e4 | bd | a0: one whole token of 5, one crossing, both characters split
    m = measure(byte_model([b"\xa9\xe4"]), "aé你").metrics
    assert (m.tokens, m.utf8_whole_token_rate, m.utf8_boundary_crossing_rate, m.utf8_split_char_rate) == (
        5, 1 / 5, 1 / 5, 1.0)
    # with é merged first: 61 | c3a9 | e4 | bd | a0: a and é whole, no crossing, only 你 split
    m = measure(byte_model([b"\xc3\xa9", b"\xa9\xe4"]), "aé你").metrics
    assert (m.utf8_whole_token_rate, m.utf8_boundary_crossing_rate, m.utf8_split_char_rate) == (2 / 5, 0.0, 1 / 2)
    assert measure(byte_model([]), "abc").metrics.utf8_split_char_rate is None  # no multi-byte character


def test_boundary_crossing_follows_the_source():
    assert crosses_character_boundary(b"\xa9\xe4") and crosses_character_boundary(b"\xe4\xbd\xa0\xe5")
    assert not crosses_character_boundary(b"\xe4\xbd") and not crosses_character_boundary(b"\x80")
    t = utf8_tables([b"ab", b"\xe4\xbd", "你".encode(), b"\xbd\xa0a"])
    assert t.whole.tolist() == [True, False, True, False]
    assert t.crossing.tolist() == [False, False, False, True]


def test_number_splits_by_hand():
    # bytes only but the merge 4+2: 1|2|3|4|5|6|7 (boundaries 1..6, ideal {1, 4}: F1 2*2/(6+2) = 1/2),
    # 42 whole (no boundary, none ideal: 1), 1|7 (a boundary where none is ideal: 0)
    m = measure(byte_model([b"42"]), "1234567 42 17").metrics
    assert m.digit_boundary_f1 == pytest.approx((0.5 + 1 + 0) / 3)
    assert m.tokens_per_digit == pytest.approx((7 + 1 + 2) / 11)
    # length 7: one pattern (0 bits); length 2: two patterns, one number each (1 bit): (0*1 + 1*2) / 3
    assert m.digit_split_entropy == pytest.approx(2 / 3)
    groups = {g.group: (g.numbers, g.tokens_per_digit, g.split_entropy) for g in m.number_lengths}
    assert groups == {"2": (2, 3 / 4, 1.0), "7": (1, 1.0, 0.0)}


def test_right_aligned_groups_score_one():
    """Three-digit groups from the right (Singh & Strouse's right-to-left split): 1|234|567."""
    m = measure(byte_model([b"23", b"234", b"56", b"567"], r"\d{1,3}(?=(?:\d{3})*(?!\d))|\S+|\s+"),
                "1234567").metrics
    assert (m.tokens, m.digit_boundary_f1, m.tokens_per_digit) == (3, 1.0, 3 / 7)
    assert measure(byte_model([]), "no numbers").metrics.digit_boundary_f1 is None


def test_code_identifiers_and_indentation_by_hand():
    # bytes only: "    " is 4 tokens, "max_len" 7, "getValue" 8; "x" and "return" are no code identifiers
    m = measure(byte_model([]), "    x = max_len\n  return getValue\n").metrics
    assert m.identifier_fragmentation == pytest.approx((7 + 8) / 2)
    assert m.indentation_tokens == pytest.approx((4 + 2) / 2)
    m = measure(byte_model([b"ma", b"max", b"_l", b"_le", b"_len", b"  ", b"    "]), "    max_len\n").metrics
    assert (m.identifier_fragmentation, m.indentation_tokens) == (2.0, 1.0)


def test_documents_add_up_to_the_whole_text():
    """Each document's tallies are its own; their sums are the whole text's."""
    text = "One\n    12345 aé\n  \nTwo\n    max_len 42 ab\n"
    r = measure(byte_model([b"ab", b"42"]), text, by_document=True)
    assert len(r.documents) == 2
    assert [d.digit_boundary_f1 for d in r.documents] == [pytest.approx(2 / 5), 1.0]  # 1|2|3|4|5 vs {2}: 2/(4+1)
    f1 = [Fraction(2, 5), Fraction(1)]
    assert r.metrics.digit_boundary_f1 == pytest.approx(float(sum(f1) / 2))
    assert r.documents[0].utf8_split_char_rate == 1.0 and r.documents[1].utf8_split_char_rate is None
    assert r.metrics.utf8_split_char_rate == 1.0
    assert r.documents[1].identifier_fragmentation == 7.0 and r.documents[0].identifier_fragmentation is None
    assert sum(d.tokens for d in r.documents) == r.metrics.tokens


def test_several_renyi_orders():
    r = compare("ab ab abc", [ModelSpec("m", lambda: byte_model([b"ab"]))]).results[0]
    assert r.metrics.renyi_more == ()
    res = next(e.result for e in iter_compare("ab ab abc", [ModelSpec("m", lambda: byte_model([b"ab"]))],
                                              renyi_alphas=(3.0, 2.5)) if e.result is not None)
    d = res.metrics.as_dict()
    assert res.metrics.renyi_alpha == 3.0
    # tokens ab ab ab c and two spaces: counts 3, 2, 1 over 257 ids
    p = np.array([3, 2, 1]) / 6
    h3, h25 = math.log(np.sum(p**3)) / -2, math.log(np.sum(p**2.5)) / -1.5
    assert d["renyi_efficiency"] == pytest.approx(h3 / math.log(257))
    assert d["renyi_efficiency@2.5"] == pytest.approx(h25 / math.log(257))
    assert d["renyi_efficiency_observed@2.5"] == pytest.approx(h25 / math.log(3))
