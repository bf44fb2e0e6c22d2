"""tiktoken's merge rule reimplemented: known answers, the step limit, explain, spans, round trips,
the heap loop and the threaded split against their simple versions."""

from __future__ import annotations

from functools import cache

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import TIKTOKEN_NAMES, corpus, load_ours, unicode_text
from tokviz.core import EncodeError
from tokviz.core.bpe.byte_ranks.one_chunk import bpe_parts, bpe_parts_heap
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.text import fastsplit
from tokviz.core.text.fastsplit import FastSplitter
from tokviz.core.text.split import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN
from tokviz.core.text.token_text import python_pattern
from tokviz.core.text.unicode_tables import NEW_IN_UNICODE_17, PinnedPattern, pin_pattern


def tiny() -> RankBpeTokenizer:
    """Bytes, then ab (256), bc (257), abc (258), aa (259) — abc is reachable from a+bc only."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 257, b"bc": 256, b"abc": 258, b"aa": 259})
    return RankBpeTokenizer(ranks, pattern=GPT2_SPLIT_PATTERN, name="tiny")


@cache
def _ranks(name: str) -> dict[bytes, int]:
    """``{token bytes: rank}`` of a shared vocabulary (copied once)."""
    return load_ours(name).mergeable_ranks


def test_byte_rank_rule_joins_any_neighbours_that_form_a_token():
    tok = tiny()
    # bc (256) joins first, then a + bc = abc (258): no merge list has (a, bc), the bytes rank does
    assert tok.encode_ids("abc") == [258]
    assert tok.explain("abc")[-1].ids == (258,)
    assert [(s.rank, s.pair, s.id) for s in tok.explain("abc")[1:]] == [(0, (98, 99), 256), (2, (97, 256), 258)]
    assert tok.merge_of(258) == (97, 256)
    assert tok.encode_ids("aaa") == [259, 97]  # leftmost of equal ranks first


def test_steps_limit_the_tokens_that_may_form():
    tok = tiny()
    assert tok.n_merges == 4
    assert tok.encode_ids("abc", step=0) == [97, 98, 99]
    assert tok.encode_ids("abc", step=1) == [97, 256]
    assert tok.encode_ids("abc", step=2) == [97, 256]  # ab (257) cannot join: bc came first
    assert tok.encode_ids("abc", step=3) == [258]
    assert tok.encode_ids("abc", step=99) == [258]
    m = tok.merge_list()
    assert [(x.index, x.id, x.pair, x.token) for x in m] == [
        (0, 256, (98, 99), b"bc"), (1, 257, (97, 98), b"ab"), (2, 258, (97, 256), b"abc"), (3, 259, (97, 97), b"aa"),
    ]
    assert all(x.count is None for x in m)


def test_whole_chunk_token_wins_even_when_no_merge_forms_it():
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"xabc": 258})  # xabc: x + ab + c never joins to it
    tok = RankBpeTokenizer(ranks, pattern=r"\S+|\s+")
    assert tok.merge_of(258) is None and tok.parts_of(258) == [120, 97, 256]
    assert tok.encode_ids("xabc") == [258]
    assert tok.encode_ids("xabc", step=2) == [120, 97, 256]
    steps = tok.explain("xabc")
    assert steps[-1].pair is None and steps[-1].ids == (258,)


def test_cl100k_step_scrubbing_is_monotone_and_ends_at_full():
    tok = load_ours("cl100k_base")
    text = "Tokenization with only the first k merges: unbelievable!"
    lengths = [len(tok.encode_ids(text, step=k)) for k in (0, 10, 100, 1000, 10_000, tok.n_merges)]
    assert lengths[0] == len(text.encode())
    assert lengths == sorted(lengths, reverse=True)
    assert tok.encode_ids(text, step=tok.n_merges) == tok.encode_ids(text)
    assert tok.encode(text, step=100).ids == tok.encode_ids(text, step=100)


def test_explain_ends_at_the_encoding():
    tok = load_ours("cl100k_base")
    for word in [" hello", " unbelievable", "SolidGoldMagikarp", "👋", " tokenization"]:
        steps = tok.explain(word)
        assert list(steps[-1].ids) == tok.encode_ids(word)
        assert steps[0].rank is None and len(steps[0].ids) == len(word.encode())
        assert all(tok.merge_ranks[s.rank] == s.id for s in steps[1:])  # a step is its token's place in the timeline


def test_derived_merges_rebuild_every_token():
    tok = load_ours("r50k_base")
    for tid in list(range(256, 2256)) + [43453]:
        pair = tok.merge_of(tid)
        if pair is not None:
            assert tok.token_bytes(pair[0]) + tok.token_bytes(pair[1]) == tok.token_bytes(tid)
            assert max(pair) < tid
        else:
            assert b"".join(map(tok.token_bytes, tok.parts_of(tid))) == tok.token_bytes(tid)


def test_special_tokens_follow_tiktoken_rules():
    tok = load_ours("cl100k_base")
    with pytest.raises(EncodeError, match="allowed_special"):
        tok.encode("a<|endoftext|>b")
    assert tok.encode("a<|endoftext|>b", allowed_special="all").ids == [64, 100257, 65]
    assert tok.encode("a<|endoftext|>b", disallowed_special=()).ids == tok.encode_ids("a<|endoftext|>b")
    with pytest.raises(EncodeError, match="not in the vocabulary"):
        tok.decode([100261])
    with pytest.raises(EncodeError, match="unknown special token"):
        tok.encode("x", allowed_special={"<|nope|>"})


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
@settings(max_examples=100, deadline=None)
@given(text=unicode_text())
def test_round_trip_and_spans(name, text):
    tok = load_ours(name)
    enc = tok.encode_ordinary(text)
    assert enc.ids == tok.encode_ids(text)
    assert tok.decode(enc.ids) == text and tok.decode_bytes(enc.ids) == text.encode()
    assert b"".join(enc.tokens) == text.encode()
    assert enc.lossless
    starts = [a for a, _ in enc.spans]
    assert starts == sorted(starts)
    for data, (a, b) in zip(enc.tokens, enc.spans):
        assert 0 <= a < b <= len(text)
        assert data in text[a:b].encode()  # whole characters around a partial token
    decoded, offsets = tok.decode_with_offsets(enc.ids)
    assert decoded == text and offsets == sorted(offsets)


def test_partial_utf8_tokens_share_the_character_span():
    tok = load_ours("cl100k_base")
    enc = tok.encode_ordinary("a 👋 b")  # the emoji is character 2, split over two tokens
    parts = [(t, s) for t, s in zip(enc.tokens, enc.spans) if s[0] <= 2 < s[1]]
    assert [s for _, s in parts] == [(1, 3), (2, 3)]
    assert b"".join(t for t, _ in parts) == " 👋".encode()


@settings(max_examples=300, deadline=None)
@given(data=st.binary(min_size=97, max_size=400) | st.text("ab \n", min_size=97, max_size=300).map(str.encode))
def test_heap_loop_equals_linear_loop(data):
    enc = _ranks("cl100k_base")
    import tokviz.core.bpe.byte_ranks.one_chunk as rb

    old = rb.LONG_PIECE
    try:
        rb.LONG_PIECE = 10**9
        linear = bpe_parts(enc, data, 1 << 62)
        limited = bpe_parts(enc, data, 5000)
    finally:
        rb.LONG_PIECE = old
    assert bpe_parts_heap(enc, data, 1 << 62) == linear
    assert bpe_parts_heap(enc, data, 5000) == limited


def test_long_whitespace_and_digit_runs():
    tok = load_ours("cl100k_base")
    for text in [" " * 5000 + "x", "\n" * 3000, "7" * 4001, "a" * 3000]:
        ids = tok.encode_ids(text)
        assert tok.decode(ids) == text


PATTERNS = [GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN, fastsplit.HF_GPT2_PATTERN]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=150, deadline=None)
@given(text=unicode_text(), words=st.lists(st.sampled_from(["ab cd", "it's so", "x y", "Q r"]), max_size=6))
def test_cutting_between_letters_changes_no_chunk(pattern, text, words):
    compiled = PinnedPattern(python_pattern(pattern))
    text = " ".join([text, *words, text])
    whole = compiled.findall(text)
    for cut in fastsplit.cut_points(text, piece_chars=3)[1:-1]:
        assert compiled.findall(text[:cut]) + compiled.findall(text[cut:]) == whole, cut


CLEAN = st.text(st.sampled_from(list("aAzZsStTlLdDmMvVrReE09 '\t\n\r\x0b\x0c\x1c/.,!?-") + ["\u2019", "\u201c", "\u2014", "\u00a9", "\u00ad", "\x85", "\u00e9", "\u0301", "\u00a0"]), max_size=60)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=CLEAN | unicode_text())
def test_ascii_patterns_equal_the_unicode_ones(pattern, text):
    fast = fastsplit.FastSplitter(pattern)
    assert fast.ascii is not None
    assert fast.findall(text) == PinnedPattern(python_pattern(pattern)).findall(text)
    if text.isascii():
        assert fast.ascii.findall(text) == fast.pinned.findall(text)


BMP = "".join(map(chr, range(0x10000)))  # every code point of the BMP, surrogates too
BMP_CHARS = st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",))
NEW17_BMP = [c for c in map(chr, range(0x10000)) if c in NEW_IN_UNICODE_17]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=CLEAN | unicode_text() | st.text(BMP_CHARS | st.sampled_from([*NEW17_BMP, "\u017f", "\ud800"])))
def test_bmp_patterns_equal_the_unicode_ones(pattern, text):
    """`bmp_pattern` (Python's re, classes as BMP ranges) splits like the pinned `regex` pattern:
    on random BMP text (with the letters Unicode 17 added, the long s, a lone surrogate)."""
    text = fastsplit.ASTRAL.sub("", text)
    assert fastsplit.bmp_pattern(pattern).findall(text) == PinnedPattern(python_pattern(pattern)).findall(text)


def test_bmp_classes_are_the_pinned_classes():
    """Every BMP code point is in a spelled-out class exactly when the pinned `regex` class has it."""
    import re

    bmp = "".join(map(chr, range(0x10000)))
    for name, props in fastsplit.BMP_CLASSES.items():
        ours = re.sub(f"[^{fastsplit.bmp_classes()[name]}]", "", bmp)
        pinned = regex.compile(pin_pattern(f"[{props}]"))
        assert ours == "".join(pinned.findall(bmp)), name
    assert fastsplit.bmp_pattern("x+") is None  # an unknown pattern has none


@settings(max_examples=25, deadline=None)
@given(points=st.sets(st.integers(0, 0xFFFF) | st.sampled_from(list(b"\\]-^[&~|")), max_size=300), runs=st.lists(st.tuples(st.integers(0, 0xFFFF),
       st.integers(1, 40_000)), max_size=4), flip=st.booleans())
def test_a_class_spelled_over_the_bmp_has_exactly_its_code_points(points, runs, flip):
    """`bmp_class_text`, as a class or as the complement of the rest (whichever lists fewer code
    points), matches exactly the code points of its mask: ASCII specials (``]``, ``-``, ``^``,
    ``\\``), surrogates, U+0000 and U+FFFF, the empty and the full mask."""
    import re

    mask = bytearray(0x10000)
    for c in points:
        mask[c] = 1
    for a, n in runs:
        mask[a : a + n] = b"\1" * len(mask[a : a + n])
    if flip:
        mask = bytearray(1 - b for b in mask)
    spelled = fastsplit.bmp_class_text(bytes(mask))
    assert [m.start() for m in re.finditer(spelled, BMP)] == [c for c in range(0x10000) if mask[c]]
    if 0 < sum(mask) < len(mask):  # (neither spelling lists nothing: the two ends are the next test's)
        assert spelled.startswith("[^") == (sum(mask) * 2 > len(mask))


@pytest.mark.parametrize("mask", [bytes(0x10000), b"\1" * 0x10000, b"\1" + bytes(0xFFFF), bytes(0xFFFF) + b"\1"])
def test_empty_full_and_end_masks_spell_classes(mask):
    import re

    found = [m.start() for m in re.finditer(fastsplit.bmp_class_text(mask), BMP)]
    assert found == [c for c in range(0x10000) if mask[c]]


def test_unclean_characters_are_the_non_ascii_ones_but_punctuation_symbols_and_controls():
    """A segment without them splits with the ASCII pattern: every BMP code point checked (a lone
    surrogate is unclean too: its segment takes the Unicode pattern)."""
    from tokviz.core.text.unicode_tables import WHITE_SPACE

    bmp = "".join(map(chr, range(0x10000)))
    found = set(fastsplit.unclean_chars().findall(bmp))
    other = regex.compile(r"[\p{P}\p{S}\p{C}]")
    surrogate = regex.compile(r"\p{Cs}")
    assert found == {c for c in bmp if ord(c) >= 0x80 and (c in WHITE_SPACE or surrogate.match(c) or not other.match(c))}


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
@pytest.mark.parametrize("run_chars", [fastsplit.RUN_CHARS, 2_000, 1])
@pytest.mark.parametrize("bmp", [False, True])
def test_segmented_split_equals_one_scan(name, run_chars, bmp, monkeypatch):
    """Runs of segments (ASCII pattern or Unicode one, at most RUN_CHARS each; with `bmp` the BMP
    pattern for the whole text, or the runs without astral characters) give the chunks of one scan;
    small RUN_CHARS cut the text at nearly every segment."""
    monkeypatch.setattr(fastsplit, "RUN_CHARS", run_chars)
    monkeypatch.setattr(fastsplit, "BMP_MIN_CHARS", 1000 if bmp else 1 << 40)
    monkeypatch.setattr(fastsplit, "BMP_DENSE_MIN_CHARS", 1000 if bmp else 1 << 40)
    split = FastSplitter(load_ours(name).pattern)  # as the tokenizer's, with its own tables
    for corpus_name in ("gutenberg30.txt", "udhr2_all.txt", "udhr2_all.txt (with emoji)"):
        text = corpus(corpus_name.split()[0], 300_000)
        assert not fastsplit.ASTRAL.search(text)
        if corpus_name.endswith("emoji)"):  # astral characters: the runs of segments again
            text = "\U0001f3f3\ufe0f\u200d\U0001f308 ".join(text[k : k + 50_000] for k in range(0, len(text), 50_000))
        parts = list(split.chunk_lists(text))
        assert len(parts) > (100 if run_chars <= 2_000 else 1)
        assert [c for p in parts for c in p] == split.pinned.findall(text)
        ascii_text = text.encode("ascii", "replace").decode()
        parts = list(split.chunk_lists(ascii_text))
        assert len(parts) > (100 if run_chars <= 2_000 else 0)
        assert [c for p in parts for c in p] == split.pinned.findall(ascii_text)


def test_a_text_of_other_scripts_takes_the_bmp_pattern_sooner():
    """A text most of whose segments need the Unicode pattern repays building the BMP one from a
    third of a million characters; mostly-English text from a million (it costs 15-27 ms)."""
    udhr, english = corpus("udhr2_all.txt", 500_000), corpus("gutenberg30.txt", 500_000)
    assert fastsplit.other_scripts(udhr) and not fastsplit.other_scripts(english)
    for text, built in ((udhr, True), (english, False), (udhr[:300_000], False)):
        split = FastSplitter(load_ours("cl100k_base").pattern)
        assert [c for p in split.chunk_lists(text) for c in p] == split.pinned.findall(text)
        assert (split.bmp is not None) is built


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(min_size=2, max_size=5), min_size=1, max_size=25, unique=True),
       st.sampled_from([GPT2_SPLIT_PATTERN, r"\S+|\s+", r"."]))
def test_unreachable_equals_encoding_each_tokens_own_text(extra, pattern):
    """`unreachable` answers a one-chunk token from its bytes alone; the same answers as encoding
    every token's text (`text_reason`): merges that end elsewhere, split-cut and partial UTF-8."""
    from tokviz.core.algorithm.reach import text_reason

    ranks = {bytes([b]): b for b in range(256)}
    for t in extra:
        ranks.setdefault(t, len(ranks))
    tok = RankBpeTokenizer(ranks, pattern=pattern, special_tokens={"<|x|>": len(ranks)})
    for i in range(len(ranks)):
        assert tok.unreachable(i) == text_reason(tok, i), (i, tok.token_bytes(i))
