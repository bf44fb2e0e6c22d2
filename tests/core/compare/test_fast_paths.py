"""The quick ways compare finds what it counts give what the plain ways give: token overlaps from
running counts of token starts, identifiers from their marks, numbers and indentation from the code
points, each character's byte offset from the UTF-8 lead bytes, and tokens placed by their lengths
alone (never for a text with a lone surrogate)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.compare import model_facts, text_facts
from tokviz.core.compare.code_metrics import IDENTIFIER, IDENTIFIER_PATTERN, INDENT
from tokviz.core.compare.numbers import NUMBER
from tokviz.core.compare.text import Overlaps, token_counts_per_word
from tokviz.core.compare.tokens import encode_positions
from tokviz.core.explain.loaded_timeline import as_timeline
from tokviz.core.text.digits import LIMIT, decimal_mask


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.integers(-3, 0), st.data())
def test_running_counts_of_token_starts_equal_the_binary_searches(lengths, first, data):
    """Tokens one after another from `first` (zero-length ones among them: the searches answer),
    spans that start inside them and are not empty (else the searches answer too)."""
    ends = first + np.cumsum(lengths)
    starts = ends - np.array(lengths)
    n = int(ends[-1])
    k = data.draw(st.integers(1, 12))
    if n <= first:
        lo = hi = np.zeros(0, dtype=np.int64)
    else:
        lo = np.array(data.draw(st.lists(st.integers(first, n - 1), min_size=k, max_size=k)), dtype=np.int64)
        hi = np.minimum(lo + np.array(data.draw(st.lists(st.integers(1, 5), min_size=k, max_size=k))), n)
    assert Overlaps(starts, ends)(lo, hi).tolist() == token_counts_per_word(starts, ends, lo, hi).tolist()


def test_tokens_spelling_the_text_are_placed_by_their_lengths_and_a_lone_surrogate_is_not():
    facts = text_facts("ab é 😀 ab")
    positions = encode_positions(model_facts(byte_level()), facts)
    assert positions.in_bytes and positions.ends[-1] == len(facts.data)
    assert not encode_positions(model_facts(byte_level()), text_facts("ab \ud800 ab")).in_bytes  # U+FFFD is not it


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="_aAzZ09é \n.-", max_size=40))
def test_identifiers_found_from_their_marks_are_the_patterns_matches(text):
    assert [m.span() for m in IDENTIFIER.finditer(text)] == [m.span() for m in IDENTIFIER_PATTERN.finditer(text)]


def byte_level():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b" a": 257}
    return as_timeline(RankBpeTokenizer(ranks, pattern=r" ?\w+| ?[^\w\s]+|\s+"))


# digits of several scripts, every kind of space and line break, lone surrogates, astral letters
_CHARS = st.sampled_from([*"0123456789a _\t\n\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000\u0663\u06f5\u0966\uff11",
                          "\U0001d7ce", "\U0001fbf9", "\U00011066", "\u00b2", "\u2155", "\ud800", "\U0001f600", "\u00e9"])


@settings(max_examples=400, deadline=None)
@given(st.text(_CHARS, max_size=40))
def test_numbers_and_indentation_from_the_code_points_are_the_patterns_matches(text):
    facts = text_facts(text)
    for finder in (NUMBER, INDENT):
        want = [m.span() for m in finder.pattern.finditer(text)]
        lo, hi = facts.matches(finder)
        assert list(zip(lo.tolist(), hi.tolist())) == want, finder.pattern.pattern


@settings(max_examples=300, deadline=None)
@given(st.text(_CHARS, max_size=40))
def test_byte_offsets_of_characters_are_their_utf8_lengths_added_up(text):
    lengths = [len(c.encode("utf-8", "surrogatepass")) for c in text]
    assert text_facts(text).char_bytes.tolist() == np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).tolist()


def test_the_decimal_table_is_str_isdecimal_for_every_code_point():
    codes = np.arange(0x110000, dtype=np.uint32)
    mask = decimal_mask(codes)
    assert mask.tolist() == [chr(c).isdecimal() for c in range(0x110000)]
    assert not mask[LIMIT:].any()


def _facts_one_by_one(timeline) -> tuple[list[int], list[int] | None]:
    """The unknown ids and byte-fallback ids by looking at every id's bytes and written form."""
    import re

    tok = timeline.tokenizer()
    vocab = [b if b is not None else b"" for b in timeline.token_bytes()]
    forms = [(tok.token_text(i) or "").encode() for i in range(len(vocab))] if tok.writes_token_text else vocab
    unk = sorted({i for i, b in enumerate(forms) if b in (b"[UNK]", b"<unk>")}
                 | {i for i, b in enumerate(vocab) if b in (b"[UNK]", b"<unk>")})
    byte_of: dict[int, int] = {}
    for i, b in enumerate(forms):
        m = re.fullmatch(rb"<0x([0-9A-Fa-f]{2})>", b)
        if m is not None:
            byte_of.setdefault(int(m.group(1), 16), i)
    return unk, (sorted(byte_of.values()) if len(byte_of) == 256 else None)


def test_model_facts_find_what_a_look_at_every_id_finds():
    from tests.real_tokenizers import hf_path, shared_file, tiktoken_path
    from tokviz.core.loading import open_timeline

    ranks = {bytes([b]): b for b in range(256)} | {b"<unk>": 256, b"[UNK]": 257, b"<0x41>": 258}
    paths = [hf_path("bert-base-uncased"), shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model"),
             hf_path("mistral-7b-v0.1"), tiktoken_path("o200k_base")]
    timelines = [as_timeline(RankBpeTokenizer(ranks, pattern=r"\S+|\s+"))] + [open_timeline(str(p)) for p in paths]
    for tl in timelines:
        facts = model_facts(tl)
        unk, byte_ids = _facts_one_by_one(tl)
        assert facts.unk_ids.tolist() == unk
        assert (facts.byte_ids.tolist() if facts.byte_ids is not None else None) == byte_ids
        assert facts.lengths.tolist() == [len(b) for b in facts.vocab]
    assert model_facts(timelines[0]).unk_ids.tolist() == [256, 257]
    assert model_facts(timelines[2]).byte_ids is not None and len(model_facts(timelines[1]).unk_ids) == 1
