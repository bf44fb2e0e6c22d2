"""tokviz.core.bpe.replay: incremental window segmentation equals encoding from scratch at every step."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import TrainSettings
from tokviz.core.bpe.replay import WindowSegmenter, decision_at, segment_text, series
from tokviz.core.bpe.timeline import train

TEXT = ("The quick brown fox jumps over the lazy dog. The dog sleeps; the fox thinks. "
        "Über naïve café — 東京 🙂 emoji and   spaces\n\ttabs.\n") * 8


def test_window_segmenter_matches_segment_text_on_any_walk():
    tl = train(TrainSettings(vocab_size=420, min_count=1), texts=[TEXT])
    tok = tl.tokenizer()
    window = TEXT[37:900]
    seg = WindowSegmenter(tok, window)
    rng = random.Random(7)
    k = 0
    for _ in range(300):
        k = max(0, min(tl.n_merges, k + rng.choice([1, 1, 1, 2, 5, 16, 17, -1, -30, 100])))
        got, want = seg.at(k), segment_text(tok, window, k)
        assert (got.ids, got.spans, got.fresh) == (want.ids, want.spans, want.fresh), k
    assert seg.at(k + 1 if k < tl.n_merges else k).step <= tl.n_merges


@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="aab c\u00e9\u6771\U0001f642", min_size=1, max_size=80),
       units=st.sampled_from(["bytes", "chars"]), k=st.integers(0, 60))
def test_unmerging_the_final_encoding_equals_encoding_at_the_step(text, units, k):
    tl = train(TrainSettings(units=units, merges=60, min_count=1), texts=[text * 3])
    tok = tl.tokenizer()
    for chunk in tok.chunks(text):
        final = tok.encode_chunk(chunk)[0]
        assert tok.unmerge_chunk(chunk, final, k) == tok.encode_chunk(chunk, step=k, cached=False)


def test_one_step_forward_reencodes_only_chunks_with_the_pair():
    tl = train(TrainSettings(vocab_size=300, min_count=1), texts=[TEXT])
    seg = WindowSegmenter(tl.tokenizer(), TEXT)
    seg.at(10)
    seg.at(11)
    assert 0 < seg.reencoded < len(tl.tokenizer().chunks(TEXT)) / 2


def test_series_and_decisions_line_up_with_the_timeline():
    tl = train(TrainSettings(units="chars", split="whitespace", merges=5), texts=["aa ab aa ab ac"])
    length, vocab, count = series(tl)
    assert len(length) == len(vocab) == len(count) == tl.n_merges + 1
    assert length[0] == tl.corpus_length and length[-1] == tl.steps[-1].length
    assert vocab == list(range(tl.base_size, tl.base_size + tl.n_merges + 1))
    assert decision_at(tl, 1).candidates[0].pair == tl.steps[0].pair


def test_a_segmenter_follows_a_training_run_that_moves_on():
    """The live view's case: tokenizers of the same run with more merges each time; the segmenter
    keeps its place and re-encodes only the chunks the new merges change, exactly."""
    tl = train(TrainSettings(vocab_size=420, min_count=1), texts=[TEXT])
    window = TEXT[11:700]
    seg = WindowSegmenter(_prefix(tl, 20), window)
    seg.at(20)
    assert tl.n_merges == 91
    for n in (20, 45, 46, 70, 91):
        tok = _prefix(tl, n)
        assert seg.follow(tok) and seg.tokenizer is tok
        got, want = seg.at(n), segment_text(tok, window, n)
        assert (got.ids, got.spans, got.fresh) == (want.ids, want.spans, want.fresh), n
    assert 0 < seg.reencoded < len(tok.chunks(window))  # 70 -> 91: only the chunks that changed
    other = train(TrainSettings(vocab_size=300, min_count=1, split="whitespace"), texts=[TEXT]).tokenizer()
    assert not seg.follow(other) and seg.tokenizer is tok  # another run's tokenizer is not adopted
    assert not seg.follow(_prefix(tl, 10))  # nor one with fewer merges


def _prefix(tl, n: int):
    """The tokenizer of the first `n` merges of `tl`, as a live training run hands it out."""
    from tokviz.core.bpe.tokenizer import BpeTokenizer

    full = tl.tokenizer()
    return BpeTokenizer(full.base, full.merges[:n], full.splitter, special_tokens=full.special_tokens,
                        unk_id=full.unk_id, name="trained")


def test_a_jump_back_splits_only_the_chunks_holding_later_merges():
    """Scrubbing back a few steps re-splits the chunks holding a token merged after the new step;
    the others keep their encoding (exactly: nothing from that step on was applied to them)."""
    tl = train(TrainSettings(vocab_size=420, min_count=1), texts=[TEXT])
    tok = tl.tokenizer()
    seg = WindowSegmenter(tok, TEXT)
    n = tl.n_merges
    seg.at(n)
    for k in (n - 1, n - 3, n // 2, 0):
        got, want = seg.at(k), segment_text(tok, TEXT, k)
        assert (got.ids, got.spans, got.fresh) == (want.ids, want.spans, want.fresh), k
    seg.at(n)
    seg.at(n - 1)
    assert 0 < seg.reencoded < len(tok.chunks(TEXT)) / 4
