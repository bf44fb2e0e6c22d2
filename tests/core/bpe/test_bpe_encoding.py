"""Encoding and decoding: ids with token bytes and character spans, steps, special tokens,
[UNK] for character units, offsets, explain()."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import EncodeError, Encoding, TrainSettings, train
from tokviz.core.bpe.reference import oracle_encode_chunk, oracle_split

HYPOTHESIS = settings(max_examples=200, deadline=None, database=None)

# A small multilingual corpus built into the test, so these tests need no ../shared data.
SAMPLE = (
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs.\n"
    "Le renard brun saute par-dessus le chien paresseux. Él está aquí, ¿verdad?\n"
    "Быстрая коричневая лиса прыгает через ленивую собаку.\n"
    "敏捷的棕色狐狸跳过了懒狗。狐狸跳过了狗。 すばやい茶色の狐がのろまな犬を飛び越える。\n"
    "😀😀 emoji 😀 and 🇫🇷 flags 👩‍👩‍👧 families; numbers 12345 67890 12345.\n"
) * 8
SPECIALS = ("<|endoftext|>", "<|fim|>")


@pytest.fixture(scope="module")
def byte_tokenizers():
    """Byte-level tokenizers for each lossless split, 300 merges each, with special tokens."""
    out = {}
    for split in ("none", "gpt2", "gpt4", "o200k"):
        s = TrainSettings(units="bytes", split=split, merges=300, min_count=2, special_tokens=SPECIALS)
        out[split] = train(s, texts=[SAMPLE])
    return out


def reference_spans(text: str, tokens: list[bytes]) -> list[tuple[int, int]]:
    """Each token's span: the characters its bytes touch (byte units, no marker)."""
    char_of_byte = [i for i, c in enumerate(text) for _ in c.encode("utf-8")]
    spans, pos = [], 0
    for t in tokens:
        start, end = pos, pos + len(t)
        spans.append((char_of_byte[start], char_of_byte[end - 1] + 1))
        pos = end
    return spans


def tiktoken_offsets(tokens: list[bytes]) -> list[int]:
    """tiktoken's decode_with_offsets rule, written out."""
    offsets, n = [], 0
    for t in tokens:
        offsets.append(max(0, n - (0x80 <= t[0] < 0xC0)))
        n += sum(1 for c in t if not 0x80 <= c < 0xC0)
    return offsets


unicode_text = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8"), max_size=6),
        st.sampled_from(["The", " the", " fox", "狐狸", "😀", "собаку", " 12345", "\n", "  "]),
    ),
    max_size=20,
).map("".join)


# -- round trips (hypothesis) -----------------------------------------------------------------


@given(text=unicode_text, split=st.sampled_from(["none", "gpt2", "gpt4", "o200k"]), step=st.integers(0, 400))
@HYPOTHESIS
def test_byte_units_round_trip_arbitrary_unicode(byte_tokenizers, text, split, step):
    timeline = byte_tokenizers[split]
    tok = timeline.tokenizer()
    for k in (None, step):
        enc = tok.encode(text, step=k)
        assert tok.decode(enc.ids) == text
        assert tok.decode_bytes(enc.ids) == text.encode("utf-8")
        assert enc.tokens == tok.decode_tokens_bytes(enc.ids)
        assert b"".join(enc.tokens) == text.encode("utf-8")
        assert enc.spans == reference_spans(text, enc.tokens)
        assert enc.lossless and enc.unknown == [] and enc.special == [] and enc.dropped == []
        assert tok.encode_ordinary(text, step=k).ids == enc.ids
        assert tok.encode_ids(text, step=k) == enc.ids
        assert all(i < 256 + timeline.n_merges for i in enc.ids)
        if k is not None and k < timeline.n_merges:
            assert all(i < 256 + k for i in enc.ids)
        decoded, offsets = tok.decode_with_offsets(enc.ids)
        assert decoded == text
        assert offsets == tiktoken_offsets(enc.tokens) == [a for a, _ in enc.spans]


@given(parts=st.lists(st.one_of(unicode_text, st.sampled_from(SPECIALS)), max_size=6))
@HYPOTHESIS
def test_round_trip_with_allowed_special_tokens(byte_tokenizers, parts):
    timeline = byte_tokenizers["gpt4"]
    tok = timeline.tokenizer()
    text = "".join(parts)
    enc = tok.encode(text, allowed_special="all")
    assert tok.decode(enc.ids) == text
    special_ids = set(timeline.special_ids.values())
    assert [i for i, t in enumerate(enc.ids) if t in special_ids] == enc.special
    for i in enc.special:
        a, b = enc.spans[i]
        assert text[a:b] in SPECIALS
        assert enc.tokens[i] == text[a:b].encode()
        assert enc.ids[i] == timeline.special_ids[text[a:b]]
    assert b"".join(enc.tokens) == text.encode("utf-8")
    assert [a for a, _ in enc.spans] == sorted(a for a, _ in enc.spans)


@given(text=st.text(alphabet="ab ", min_size=40, max_size=200), k=st.integers(0, 40))
@HYPOTHESIS
def test_long_chunks_encode_like_the_oracle(text, k):
    # chunks longer than 48 symbols take the heap-based path; it must agree with rank order
    timeline = train(TrainSettings(split="none", merges=40, min_count=1), texts=["abab aab ba" * 7 + text])
    tok = timeline.tokenizer()
    expected = oracle_encode_chunk(list(text.encode()), timeline.merges()[:k], 256) if text else []
    assert tok.encode(text, step=k).ids == expected


@pytest.fixture(scope="module")
def char_timelines():
    """Character-level tokenizers with no marker, a marker that is also a corpus character, and
    a multi-character marker."""
    out = {}
    for eow in (None, ".", "</w>"):
        s = TrainSettings(units="chars", split="gpt4", end_of_word=eow, merges=200)
        out[eow] = train(s, texts=[SAMPLE])
    return out


@given(
    text=st.text(alphabet=st.sampled_from(sorted(set(SAMPLE)) + ["Ω", "ß"]), max_size=60),
    eow=st.sampled_from([None, ".", "</w>"]),
    step=st.integers(0, 200),
)
@HYPOTHESIS
def test_chars_units_spans_cover_their_characters(char_timelines, text, eow, step):
    timeline = char_timelines[eow]
    tok = timeline.tokenizer()
    enc = tok.encode(text, step=step)
    known = set(timeline.base.symbols)
    assert enc.unknown == [i for i, c in enumerate(enc.ids) if c == timeline.unk_id]
    assert [text[a:b] for a, b in (enc.spans[i] for i in enc.unknown)] == [c for c in text if c not in known]
    for i, ((a, b), t) in enumerate(zip(enc.spans, enc.tokens)):
        if i in enc.unknown:
            assert b - a == 1 and t == b"[UNK]"
            continue
        piece = t.decode()
        assert text[a:b] == piece[: b - a]
        assert piece[b - a :] in ("", eow)  # what is left is the end-of-word marker
    # decoding gives every chunk back, each followed by the marker
    if not enc.unknown:
        marker = eow or ""
        assert tok.decode(enc.ids) == "".join(c + marker for c in oracle_split(text, "gpt4"))


@pytest.fixture(scope="module")
def byte_marker_timelines():
    out = {}
    for eow in ("</w>", "é"):  # ASCII, and a marker that is two bytes and a corpus character
        out[eow] = train(TrainSettings(units="bytes", split="gpt4", end_of_word=eow, merges=200), texts=[SAMPLE])
    return out


@given(text=unicode_text, eow=st.sampled_from(["</w>", "é"]), step=st.integers(0, 200))
@HYPOTHESIS
def test_byte_units_with_marker_spans_and_decoding(byte_marker_timelines, text, eow, step):
    tok = byte_marker_timelines[eow].tokenizer()
    enc = tok.encode(text, step=step)
    chunks = oracle_split(text, "gpt4")
    assert tok.decode(enc.ids) == "".join(c + eow for c in chunks)
    expected, i, offset = [], 0, 0
    for chunk in chunks:
        # the marker's bytes belong to no character: they map to the end of the chunk
        char_of_byte = [k for k, c in enumerate(chunk) for _ in c.encode()] + [len(chunk)] * len(eow.encode())
        pos, data = 0, chunk.encode() + eow.encode()
        while pos < len(data):
            end = pos + len(enc.tokens[i])
            start_c = char_of_byte[pos]
            end_c = max(start_c, char_of_byte[end - 1] + (1 if end - 1 < len(chunk.encode()) else 0))
            expected.append((offset + start_c, offset + end_c))
            pos, i = end, i + 1
        assert pos == len(data)  # tokens never cross a chunk boundary
        offset += len(chunk)
    assert enc.spans == expected and i == len(enc.ids)


# -- agreement with the oracle on real text -----------------------------------------------------


def oracle_encode(text: str, timeline, split: str, step: int | None = None) -> list[int]:
    merges = timeline.merges(step)
    base = timeline.base
    out = []
    for chunk in oracle_split(text, split):
        if base.units == "bytes":
            ids = list(chunk.encode() + (base.end_of_word or "").encode())
        else:
            index = base.index()
            ids = [index[c] for c in chunk] + ([index[base.end_of_word]] if base.end_of_word else [])
        out += oracle_encode_chunk(ids, merges, timeline.base_size)
    return out


@pytest.mark.parametrize(
    ("units", "split", "eow"),
    [("bytes", "gpt4", None), ("bytes", "none", None), ("chars", "whitespace", "</w>"), ("bytes", "o200k", "_")],
)
def test_encoding_matches_oracle_on_unseen_real_text(corpus_text, units, split, eow):
    text = corpus_text("udhr2_all.txt", 24_000)
    train_part, test_part = text[:20_000], text[20_000:]
    timeline = train(TrainSettings(units=units, split=split, end_of_word=eow, merges=150), texts=[train_part])
    tok = timeline.tokenizer()
    if units == "chars":  # keep to characters the vocabulary knows
        known = set(timeline.base.symbols)
        test_part = "".join(c for c in test_part if c in known)
    pieces = [test_part[i : i + 500] for i in range(0, len(test_part), 500)]
    for step in (None, 1, 75):
        for piece in pieces:
            assert tok.encode(piece, step=step).ids == oracle_encode(piece, timeline, split, step)


def test_step_k_is_the_tokenizer_trained_with_k_merges():
    full = train(TrainSettings(split="gpt4", merges=120), texts=[SAMPLE])
    tok = full.tokenizer()
    text = SAMPLE[100:600]
    for k in (0, 1, 17, 60, 120):
        short = train(TrainSettings(split="gpt4", merges=k), texts=[SAMPLE])
        assert short.merges() == full.merges(k)
        assert tok.encode(text, step=k).ids == short.tokenizer().encode(text).ids
    assert tok.encode(text, step=0).ids == list(text.encode())
    assert tok.encode(text, step=10_000).ids == tok.encode(text).ids
    assert tok.encode(text, step=-3).ids == list(text.encode())


def test_step_caches_do_not_leak_between_steps():
    timeline = train(TrainSettings(split="gpt4", merges=120), texts=[SAMPLE])
    tok = timeline.tokenizer()
    text = "The quick brown fox"
    results = {k: timeline.tokenizer().encode(text, step=k).ids for k in range(0, 121, 10)}
    for _ in range(2):
        for k in list(range(0, 121, 10))[::-1]:  # more step limits than the tokenizer keeps caches
            assert tok.encode(text, step=k).ids == results[k]
            assert tok.encode_ids(text, step=k) == results[k]


# -- special tokens -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def special_tok(byte_tokenizers):
    return byte_tokenizers["gpt4"].tokenizer()


def test_disallowed_special_is_a_clear_error(special_tok):
    with pytest.raises(EncodeError) as info:
        special_tok.encode("hi <|endoftext|>")
    assert str(info.value) == (
        "text contains special token '<|endoftext|>'; pass allowed_special={'<|endoftext|>'} to "
        "encode it as a special token, or disallowed_special=() to encode it as text"
    )


def test_allowed_special_subset(special_tok, byte_tokenizers):
    ids = byte_tokenizers["gpt4"].special_ids
    enc = special_tok.encode("a<|endoftext|>b<|fim|>", allowed_special={"<|endoftext|>"}, disallowed_special=())
    assert ids["<|endoftext|>"] in enc.ids
    assert ids["<|fim|>"] not in enc.ids
    assert enc.special == [enc.ids.index(ids["<|endoftext|>"])]
    assert special_tok.decode(enc.ids) == "a<|endoftext|>b<|fim|>"
    with pytest.raises(EncodeError, match="'<|fim|>'"):
        special_tok.encode("a<|endoftext|>b<|fim|>", allowed_special={"<|endoftext|>"})


def test_specials_as_text(special_tok, byte_tokenizers):
    text = "x<|endoftext|><|endoftext|>y"
    special_ids = set(byte_tokenizers["gpt4"].special_ids.values())
    for enc in (special_tok.encode(text, disallowed_special=()), special_tok.encode_ordinary(text)):
        assert not special_ids & set(enc.ids)
        assert enc.special == []
        assert special_tok.decode(enc.ids) == text


def test_adjacent_special_tokens_and_spans(special_tok, byte_tokenizers):
    ids = byte_tokenizers["gpt4"].special_ids
    enc = special_tok.encode("<|fim|><|endoftext|>", allowed_special="all")
    assert enc.ids == [ids["<|fim|>"], ids["<|endoftext|>"]]
    assert enc.spans == [(0, 7), (7, 20)]
    assert enc.special == [0, 1]
    assert enc.tokens == [b"<|fim|>", b"<|endoftext|>"]


def test_unknown_allowed_special_is_an_error(special_tok):
    with pytest.raises(EncodeError, match=r"unknown special token '<\|nope\|>'"):
        special_tok.encode("x", allowed_special={"<|nope|>"})


def test_special_ids_decode(special_tok, byte_tokenizers):
    timeline = byte_tokenizers["gpt4"]
    n = 256 + timeline.n_merges
    assert timeline.special_ids == {"<|endoftext|>": n, "<|fim|>": n + 1}
    assert special_tok.n_vocab == n + 2 == timeline.vocab_size
    assert special_tok.decode([n, 72, n + 1]) == "<|endoftext|>H<|fim|>"
    assert special_tok.token_bytes(n + 1) == b"<|fim|>"


# -- decoding errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["n_vocab", 10**9, -1, "5", 3.0, None])
def test_decode_rejects_ids_outside_the_vocabulary(special_tok, bad):
    bad = special_tok.n_vocab if bad == "n_vocab" else bad
    with pytest.raises(EncodeError) as info:
        special_tok.decode([65, bad])
    assert str(info.value) == f"id {bad} is not in the vocabulary (valid ids: 0..{special_tok.n_vocab - 1})"
    assert special_tok.decode([65, special_tok.n_vocab - 1]) == "A<|fim|>"


def test_decode_partial_utf8():
    tok = train(TrainSettings(split="none", merges=0), texts=["é"]).tokenizer()
    assert tok.decode([0xC3]) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode([0xC3], errors="strict")
    assert tok.decode_bytes([0xC3, 0xA9]) == "é".encode()
    assert tok.decode_with_offsets([104, 0xC3, 0xA9, 104]) == ("héh", [0, 1, 1, 2])


# -- character units ----------------------------------------------------------------------------


def test_chars_units_give_unk_with_lossy_positions():
    timeline = train(TrainSettings(units="chars", split="gpt4", merges=5), texts=["hello hello world"])
    tok = timeline.tokenizer()
    enc = tok.encode("hello Zürich")
    unk = timeline.unk_id
    assert unk == timeline.base_size + timeline.n_merges
    assert [enc.ids[i] for i in enc.unknown] == [unk] * len(enc.unknown)
    assert [enc.spans[i] for i in enc.unknown] == [(6, 7), (7, 8), (9, 10), (10, 11)]  # Z ü i c
    assert all(enc.tokens[i] == b"[UNK]" for i in enc.unknown)
    assert not enc.lossless
    assert tok.decode(enc.ids) == "hello [UNK][UNK]r[UNK][UNK]h"
    assert tok.encode("hello world").lossless


def test_chars_units_spans_and_tokens():
    timeline = train(TrainSettings(units="chars", split="gpt4", min_count=2), texts=["日本語 日本語 日本"])
    tok = timeline.tokenizer()
    enc = tok.encode("日本語の日本")
    assert [tok.decode([i]) for i in enc.ids] == ["日本語", "[UNK]", "日本"]
    assert enc.spans == [(0, 3), (3, 4), (4, 6)]
    assert enc.unknown == [1]


@pytest.mark.parametrize("units", ["bytes", "chars"])
def test_end_of_word_marker_spans(units):
    timeline = train(TrainSettings(units=units, split="whitespace", end_of_word="</w>", merges=3 if units == "chars" else 9),
                     texts=["ab ab ab"])
    tok = timeline.tokenizer()
    enc = tok.encode("ab ab")
    assert tok.decode(enc.ids) == "ab</w>ab</w>"
    assert enc.spans == [(0, 2), (3, 5)]
    assert [tok.decode([i]) for i in enc.ids] == ["ab</w>", "ab</w>"]
    enc = tok.encode("a x", step=0)
    # marker-only tokens: an empty span at the end of their chunk
    if units == "chars":
        assert enc.spans == [(0, 1), (1, 1), (2, 3), (3, 3)]
    else:
        assert enc.spans == [(0, 1)] + [(1, 1)] * 4 + [(2, 3)] + [(3, 3)] * 4


def test_chars_units_with_special_tokens_and_marker():
    timeline = train(TrainSettings(units="chars", split="gpt4", special_tokens=("<s>",), end_of_word="_"),
                     texts=["ab ab<s>ab"])
    assert timeline.base.symbols == (" ", "_", "a", "b")
    assert (timeline.unk_id, timeline.special_ids, timeline.vocab_size) == (6, {"<s>": 7}, 8)
    tok = timeline.tokenizer()
    enc = tok.encode("ab<s>zab", allowed_special="all")
    assert enc.ids == [5, 7, 6, 5]
    assert enc.tokens == [b"ab_", b"<s>", b"[UNK]", b"ab_"]
    assert enc.spans == [(0, 2), (2, 5), (5, 6), (6, 8)]
    assert (enc.unknown, enc.special) == ([2], [1])
    assert tok.decode_with_offsets(enc.ids) == ("ab_<s>[UNK]ab_", [0, 3, 6, 11])


def test_end_of_word_marker_that_also_occurs_in_the_text_chars():
    # "_" is both a corpus character and the marker: the literal "_" still covers one character
    timeline = train(TrainSettings(units="chars", split="whitespace", end_of_word="_", merges=0), texts=["a_b"])
    enc = timeline.tokenizer().encode("a_b")
    assert enc.tokens == [b"a", b"_", b"b", b"_"]
    assert enc.spans == [(0, 1), (1, 2), (2, 3), (3, 3)]


def test_custom_split_reports_dropped_text():
    timeline = train(TrainSettings(split=r"regex:\w+", merges=3), texts=["hi, hi you"])
    tok = timeline.tokenizer()
    enc = tok.encode("hi, you!")
    assert enc.dropped == [(2, 4), (7, 8)]
    assert not enc.lossless
    assert tok.decode(enc.ids) == "hiyou"
    assert [enc.spans[0][0], enc.spans[-1][1]] == [0, 7]
    assert all(a >= 4 for a, _ in enc.spans[1:]) and enc.spans[0] == (0, 2)


# -- explain ------------------------------------------------------------------------------------


def test_explain_lists_merges_in_order_with_segmentations():
    timeline = train(TrainSettings(units="chars", split="whitespace", end_of_word="_"),
                     texts=["low low low low low lower lower lowest"])
    tok = timeline.tokenizer()
    vocab = timeline.token_bytes()

    def seg(ids):
        return [vocab[i].decode() for i in ids]

    steps = tok.explain("lower")
    assert steps[0].rank is None and steps[0].pair is None and steps[0].id is None
    assert seg(steps[0].ids) == ["l", "o", "w", "e", "r", "_"]
    assert [(s.rank, s.id) for s in steps[1:]] == [(0, 8), (1, 9), (3, 11), (4, 12), (5, 13)]
    assert [seg(s.ids) for s in steps[1:]] == [
        ["lo", "w", "e", "r", "_"],
        ["low", "e", "r", "_"],
        ["lowe", "r", "_"],
        ["lower", "_"],
        ["lower_"],
    ]
    assert [s.pair for s in steps[1:]] == [timeline.steps[r].pair for r in (0, 1, 3, 4, 5)]
    assert list(steps[-1].ids) == tok.encode("lower").ids
    short = tok.explain("lower", step=2)
    assert [seg(s.ids) for s in short] == [["l", "o", "w", "e", "r", "_"], ["lo", "w", "e", "r", "_"], ["low", "e", "r", "_"]]
    assert [s.ids for s in tok.explain("lower", step=0)] == [steps[0].ids]


def test_explain_overlapping_merge_in_bytes():
    tok = train(TrainSettings(split="none", merges=3), texts=["aaabdaaabac"]).tokenizer()
    steps = tok.explain("aaab")
    assert [(s.rank, s.ids) for s in steps] == [
        (None, (97, 97, 97, 98)),
        (0, (256, 97, 98)),
        (1, (257, 98)),
        (2, (258,)),
    ]


# -- the result object --------------------------------------------------------------------------


def test_encoding_to_json():
    enc = Encoding([104, 258], [b"h", b"\xc3\xa9"], [(0, 1), (1, 2)])
    assert enc.to_json() == {"ids": [104, 258], "tokens_hex": ["68", "c3a9"], "spans": [[0, 1], [1, 2]], "inserted": []}
    assert len(enc) == 2
    assert enc.lossless


def test_an_end_of_word_marker_alone_is_an_inserted_token():
    tl = train(TrainSettings(units="chars", split="whitespace", end_of_word="_", merges=0), texts=["low low"])
    enc = tl.tokenizer().encode("low")
    assert [t.decode() for t in enc.tokens] == ["l", "o", "w", "_"]
    assert enc.spans[3] == (3, 3) and enc.inserted == [3]  # covers no input: empty, where it was added
    assert enc.to_json()["inserted"] == [3]


@pytest.mark.parametrize("units", ["bytes", "chars"])
def test_a_tokenizer_extended_from_an_earlier_one_equals_one_built_anew(units):
    """A live view extends the tokenizer it made at fewer merges (`tokenizer_after`): the same
    vocabulary, merges and encodings as building it from every merge, [UNK] and specials moved up."""
    from dataclasses import replace

    tl = train(TrainSettings(units=units, merges=120, special_tokens=SPECIALS), texts=[SAMPLE])
    text = SAMPLE[:600] + "<|fim|> zebra ∑ 😀"
    for n in (0, 1, 37, 120):
        earlier = replace(tl, steps=tl.steps[:n]).tokenizer()
        for m in (n, min(n + 1, 120), 120):
            later = replace(tl, steps=tl.steps[:m])
            extended, fresh = later.tokenizer_after(earlier), later.tokenizer()
            assert extended.vocab() == fresh.vocab() and extended.merges == fresh.merges
            assert extended.special_tokens == fresh.special_tokens and extended.unk_id == fresh.unk_id
            for k in (0, m // 2, m):
                assert (extended.encode(text, step=k, allowed_special="all").ids
                        == fresh.encode(text, step=k, allowed_special="all").ids)
    other = train(TrainSettings(units=units, merges=60), texts=["abc abd abe " * 9]).tokenizer()
    assert tl.tokenizer_after(other).vocab() == tl.tokenizer().vocab()  # not its prefix: built anew
