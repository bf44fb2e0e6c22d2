"""Merge trees, glitch tokens (unreachable, unused) and the vocabulary browser's queries."""

from __future__ import annotations

import numpy as np
import pytest

from tests.real_tokenizers import corpus, load_ours
from tokviz.core import TokvizError, TrainSettings, train
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.errors import Cancelled
from tokviz.core.explain.tokens import find_unreachable, find_unused, merge_tree, token_counts
from tokviz.core.explain.vocab_view import FILTERS, VocabIndex, token_flags


@pytest.mark.parametrize(("name", "word"), [
    ("cl100k_base", " understanding"), ("r50k_base", " SolidGoldMagikarp"), ("gpt2", " SolidGoldMagikarp"),
    ("mistral-7b-v0.1", "▁understanding"),
])
def test_merge_trees_rebuild_the_token(name, word):
    tok = load_ours(name)
    [tid] = tok.encode_ids(word.replace("▁", " ").lstrip() if name.startswith("mistral") else word)
    tree = merge_tree(tok, tid)
    assert tree.id == tid and tree.formed_by_merge
    assert b"".join(tok.token_bytes(i) for i in tree.leaves()) == tok.token_bytes(tid)
    assert tree.depth >= 4
    for node in [tree, *tree.children]:
        if node.children:
            assert node.children[0].token + node.children[1].token == node.token


def test_merge_tree_of_a_token_no_merge_forms():
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"xabc": 258})
    tok = RankBpeTokenizer(ranks, pattern=r"\S+|\s+")
    tree = merge_tree(tok, 258)
    assert not tree.formed_by_merge
    assert [c.id for c in tree.children] == [120, 97, 256]
    assert tree.children[2].children[0].id == 98


def test_merge_tree_of_a_trained_tokenizer():
    timeline = train(TrainSettings(merges=40), texts=[corpus("taylorswift.txt", 30_000)])
    tok = timeline.tokenizer()
    tree = merge_tree(tok, 256 + 39)
    assert b"".join(tok.token_bytes(i) for i in tree.leaves()) == tok.token_bytes(256 + 39)
    assert all(i < 256 for i in tree.leaves())


def test_solid_gold_magikarp_is_one_token_that_text_hardly_uses():
    tok = load_ours("r50k_base")
    assert tok.encode_ids(" SolidGoldMagikarp") == [43453]
    unused = find_unused(tok, [corpus("tinyshakespeare.txt", 200_000)])
    assert 43453 in unused
    assert tok.encode_ids(" the")[0] not in unused
    assert 50256 not in unused  # special tokens are not glitches
    counts = token_counts(tok, ["the the the"])
    assert counts[tok.encode_ids("the")[0]] == 1 and counts[tok.encode_ids(" the")[0]] == 2
    assert counts.sum() == 3 and isinstance(counts, np.ndarray)


def test_unreachable_tokens_with_reasons():
    tok = load_ours("o200k_base")
    found = {g.id: g for g in find_unreachable(tok, ids=[3413, 3914, 1734, 200, 15339])}
    assert found[3413].reason == "split" and found[3413].token == b" I'"
    assert found[3413].ids == tuple(tok.encode_ids(" I'"))
    assert found[3914].reason == "split"
    assert 15339 not in found
    partial = [g for g in find_unreachable(load_ours("cl100k_base"), ids=range(120, 260)) if g.reason == "partial_utf8"]
    assert partial and all(g.ids == () for g in partial)


def test_unreachable_in_a_pair_merge_tokenizer():
    """tokenizer.json models merge pairs: a token whose own symbols take another path is never made."""
    from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

    tok = HfTokenizer.from_json({
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "bc": 3, "ab": 4, "abc": 5},
                  "merges": ["b c", "a b", "ab c"]},
        "pre_tokenizer": {"type": "WhitespaceSplit"},
    })
    assert tok.encode_ids("abc") == [0, 3]  # b+c first; (a, bc) is no merge, so abc never forms
    [g] = find_unreachable(tok)
    assert (g.id, g.reason, g.ids, g.token) == (5, "merge", (0, 3), b"abc")
    gpt2 = find_unreachable(load_ours("gpt2"), ids=range(256, 3000))
    assert {g.reason for g in gpt2} <= {"merge", "split", "partial_utf8"}


def test_unreachable_is_cancellable_and_reports_progress():
    tok = load_ours("cl100k_base")
    seen = []
    find_unreachable(tok, ids=range(1000), progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 1000) and seen[-1] == (1000, 1000)
    with pytest.raises(Cancelled):
        find_unreachable(tok, should_stop=lambda: True)
    with pytest.raises(Cancelled):
        tok2 = load_ours("r50k_base")
        RankBpeTokenizer(tok2.mergeable_ranks, pattern=tok2.pattern).merge_list(should_stop=lambda: True)


def test_vocab_index_queries():
    tok = load_ours("cl100k_base")
    index = VocabIndex(tok)
    assert len(index) == 100256 + 5
    hits = index.query("magikarp")
    assert all("magikarp" in tok.token_bytes(int(i)).decode("utf-8", "replace").lower() for i in hits)
    assert len(index.query("Magikarp", case_sensitive=True)) <= len(hits)
    digits = index.query(filters=["digits"])
    assert len(digits) == index.count("digits") > 1000
    assert all(tok.token_bytes(int(i)).strip().isdigit() for i in digits[:200])
    specials = index.query(filters=["special"])
    assert sorted(map(int, specials)) == sorted(tok.special_tokens.values())
    longest = index.query(sort="length", descending=True)[:5]
    assert all(len(tok.token_bytes(int(i))) >= 64 for i in longest)
    by_bytes = index.query("^ab", use_regex=True, sort="bytes")
    texts = [tok.token_bytes(int(i)) for i in by_bytes]
    assert texts == sorted(texts) and all(t.lower().startswith(b"ab") for t in texts)
    both = index.query(filters=["partial_utf8", "whitespace"])
    assert len(both) == 0
    with pytest.raises(TokvizError, match="invalid search regex"):
        index.query("(", use_regex=True)
    with pytest.raises(TokvizError, match="unknown vocabulary filter"):
        index.query(filters=["emoji"])
    entry = index.entry(int(specials[0]))
    assert "special" in entry.flags


@pytest.mark.parametrize(("data", "flags"), [
    (b" 123", {"digits"}),
    (b"\xe4\xb8", {"partial_utf8"}),
    (b"\n\n  ", {"whitespace"}),
    (" привет".encode(), {"non_latin"}),
    (b" hello", set()),
    ("日本".encode(), {"non_latin"}),
])
def test_token_flags(data, flags):
    assert token_flags(data) == frozenset(flags)
    assert set(flags) <= set(FILTERS)


def test_vocab_index_for_every_kind():
    for name in ("gpt2", "bert-base-uncased", "mistral-7b-v0.1"):
        tok = load_ours(name)
        index = VocabIndex(tok)
        assert len(index) == tok.n_vocab
        assert index.count("special") >= 1
