"""Baseline tokenizers (characters, words, with [UNK]) and batches (BOS/EOS, padding, masks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import Batch, CharTokenizer, EncodeError, SettingsError, WordTokenizer, make_batch

HYPOTHESIS = settings(max_examples=100, deadline=None, database=None)
CORPUS = ["the cat sat on the mat", "the dog sat"]


# -- character-level --------------------------------------------------------------------------


def test_char_vocabulary_is_sorted_corpus_characters_after_unk():
    tok = CharTokenizer.from_texts(CORPUS)
    assert tok.pieces == ["[UNK]", " ", "a", "c", "d", "e", "g", "h", "m", "n", "o", "s", "t"]
    assert tok.n_vocab == 13
    assert tok.unk_id == 0


def test_char_tokenizer_cannot_spell_unseen_characters():
    tok = CharTokenizer.from_texts(CORPUS)
    enc = tok.encode("flew cat")
    assert enc.ids == [0, 0, 5, 0, 1, 3, 2, 12]
    assert enc.unknown == [0, 1, 3]  # f, l, w
    assert enc.spans == [(i, i + 1) for i in range(8)]
    assert enc.tokens[0] == b"[UNK]" and enc.tokens[2] == b"e"
    assert not enc.lossless
    assert tok.decode(enc.ids) == "[UNK][UNK]e[UNK] cat"


@given(st.text(alphabet="the cat sonmgd", max_size=40))
@HYPOTHESIS
def test_char_tokenizer_round_trips_known_text(text):
    tok = CharTokenizer.from_texts(CORPUS)
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == text
    assert tok.decode_bytes(enc.ids) == text.encode()
    assert len(enc) == len(text) and enc.lossless


def test_char_tokenizer_unicode():
    tok = CharTokenizer.from_texts(["日本😀"])
    enc = tok.encode("😀日x")
    assert enc.ids == [3, 1, 0]
    assert tok.token_bytes(3) == "😀".encode()
    assert enc.spans == [(0, 1), (1, 2), (2, 3)]


# -- word-level -------------------------------------------------------------------------------


def test_word_vocabulary_by_frequency_then_first_seen():
    tok = WordTokenizer.from_texts(CORPUS)
    assert tok.pieces == ["[UNK]", "the", "sat", "cat", "on", "mat", "dog"]


def test_word_tokenizer_cannot_spell_unseen_words():
    tok = WordTokenizer.from_texts(CORPUS)
    enc = tok.encode("the cats  sat")
    assert enc.ids == [1, 0, 2]
    assert enc.unknown == [1]
    assert enc.spans == [(0, 3), (4, 8), (10, 13)]
    assert enc.dropped == [(3, 4), (8, 10)]  # the white space between words
    assert tok.decode(enc.ids) == "the [UNK] sat"


def test_word_vocabulary_max_size_includes_unk():
    tok = WordTokenizer.from_texts(CORPUS, max_size=3)
    assert tok.pieces == ["[UNK]", "the", "sat"]
    assert tok.n_vocab == 3
    assert tok.encode("the cat").ids == [1, 0]


@pytest.mark.parametrize("tok", [CharTokenizer.from_texts(CORPUS), WordTokenizer.from_texts(CORPUS)], ids=["chars", "words"])
def test_baseline_bad_ids(tok):
    with pytest.raises(EncodeError, match=rf"^id {tok.n_vocab} is not in the vocabulary \(valid ids: 0..{tok.n_vocab - 1}\)$"):
        tok.decode([1, tok.n_vocab])
    with pytest.raises(EncodeError, match="id -1 is not in the vocabulary"):
        tok.token_bytes(-1)


# -- batches ----------------------------------------------------------------------------------


def test_batch_bos_eos_right_padding():
    b = make_batch([[5, 6, 7], [8], []], pad_id=0, bos_id=1, eos_id=2)
    assert isinstance(b, Batch)
    assert b.ids.tolist() == [[1, 5, 6, 7, 2], [1, 8, 2, 0, 0], [1, 2, 0, 0, 0]]
    assert b.attention_mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 0, 0, 0]]
    assert b.lengths == [5, 3, 2]
    assert b.ids.dtype == np.int64 and b.attention_mask.dtype == np.int8


def test_batch_left_padding():
    b = make_batch([[5, 6, 7], [8]], pad_id=-1, eos_id=2, pad_side="left")
    assert b.ids.tolist() == [[5, 6, 7, 2], [-1, -1, 8, 2]]
    assert b.attention_mask.tolist() == [[1, 1, 1, 1], [0, 0, 1, 1]]


def test_batch_truncation_counts_bos_and_eos():
    b = make_batch([[5, 6, 7, 8], [9]], pad_id=0, bos_id=1, eos_id=2, max_length=3)
    assert b.ids.tolist() == [[1, 5, 6], [1, 9, 2]]
    assert b.lengths == [3, 3]
    assert b.attention_mask.tolist() == [[1, 1, 1], [1, 1, 1]]


def test_batch_pad_id_equal_to_a_real_id_is_told_apart_by_the_mask():
    b = make_batch([[0, 0], [0]], pad_id=0)
    assert b.ids.tolist() == [[0, 0], [0, 0]]
    assert b.attention_mask.tolist() == [[1, 1], [1, 0]]


def test_empty_batch():
    b = make_batch([], pad_id=0)
    assert b.ids.shape == (0, 0) and b.attention_mask.shape == (0, 0) and b.lengths == []
    b = make_batch([[], []], pad_id=3)
    assert b.ids.shape == (2, 0) and b.lengths == [0, 0]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"pad_side": "middle"}, "pad_side must be 'left' or 'right', got 'middle'"),
    ({"max_length": 0}, "max_length must be at least 1, got 0"),
])
def test_batch_bad_settings(kwargs, message):
    with pytest.raises(SettingsError, match=message):
        make_batch([[1]], pad_id=0, **kwargs)


@given(
    rows=st.lists(st.lists(st.integers(3, 99), max_size=8), max_size=5),
    side=st.sampled_from(["left", "right"]),
    bos=st.sampled_from([None, 1]),
    eos=st.sampled_from([None, 2]),
)
@HYPOTHESIS
def test_batch_mask_selects_exactly_the_real_tokens(rows, side, bos, eos):
    b = make_batch(rows, pad_id=0, bos_id=bos, eos_id=eos, pad_side=side)
    for i, row in enumerate(rows):
        full = ([bos] if bos is not None else []) + row + ([eos] if eos is not None else [])
        assert b.ids[i][b.attention_mask[i] == 1].tolist() == full
        assert (b.ids[i][b.attention_mask[i] == 0] == 0).all()
        assert b.lengths[i] == len(full) == int(b.attention_mask[i].sum())
    assert b.ids.shape == (len(rows), max(b.lengths, default=0))


@pytest.mark.parametrize("make", [CharTokenizer.from_texts, WordTokenizer.from_texts])
def test_baselines_fill_in_the_tokenizer_grid(make):
    from tokviz.core.algorithm.protocol import Tokenizer

    tok = make(["the cat sat on the mat"])
    assert isinstance(tok, Tokenizer)
    text = "the cat flew"
    enc = tok.encode(text, step=3, allowed_special="all")
    assert enc.ids == tok.encode_ordinary(text).ids == tok.encode_ids(text)
    assert b"".join(tok.decode_tokens_bytes(enc.ids)) == tok.decode_bytes(enc.ids)
    decoded, offsets = tok.decode_with_offsets(enc.ids)
    assert decoded == tok.decode(enc.ids)
    assert [decoded[o:o + 1] for o in offsets] == [tok.decode([i])[:1] for i in enc.ids]


def test_counting_in_slices_gives_the_counts_of_the_whole_text():
    """`CorpusUnits` counts slice by slice (so a worker never holds the interpreter lock for long):
    the same characters, words (and first-seen order), and bytes as counting the whole at once."""
    from collections import Counter
    from importlib import resources

    import numpy as np

    from tokviz.core.baselines import CorpusUnits, whitespace_slices

    sample = resources.files("tokviz.resources").joinpath("corpora", "multilingual.txt").read_text(encoding="utf-8")
    text = sample * (700_000 // len(sample)) + " tail" + "x" * 70_000 + "\u3000end\U0001f600 \ud800"
    slices = list(whitespace_slices(text))
    assert "".join(slices) == text and len(slices) > 10
    units = CorpusUnits.count([text])
    assert units.chars == Counter(text) and list(units.chars) == list(Counter(text))
    assert units.words == Counter(text.split()) and list(units.words) == list(Counter(text.split()))
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8)
    assert units.byte_counts == np.bincount(data, minlength=256).tolist()
    stops = []
    CorpusUnits.count([text], should_stop=lambda: stops.append(1))
    assert len(stops) == len(slices)
