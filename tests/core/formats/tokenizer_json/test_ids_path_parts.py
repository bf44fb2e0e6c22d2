"""The parts of the tokenizer.json ids path against the general pipeline they shortcut: ▁ pieces
(`marker_pieces`) against `marker_cuts`, one-pass isolated splits (`PinnedPattern.isolated`)
against the match-by-match cut, BERT's one-pattern pre-tokenizer against its two Splits, words
kept before ByteLevel's mapping, Metaspace's words as strings against its pieces, and per-line
encoding of many languages against tokenizers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import shared_file
from tests.real_tokenizers import corpus, unicode_text
from tokviz.core.formats.tokenizer_json.markers import MARKER, marker_cuts, marker_pieces
from tokviz.core.formats.tokenizer_json.normalizers import NormStr
from tokviz.core.formats.tokenizer_json.pretokenizers import (
    BertPre,
    MetaspacePre,
    SequencePre,
    SplitPre,
    isolated_bounds,
)
from tokviz.core.loading import load_tokenizer
from tokviz.core.text import unicode_tables as ut
from tokviz.core.text.unicode_tables import PinnedPattern

_NEW17 = "\u0558\u1acf\U0001e6c0"  # letters/marks the pinned patterns treat as unknown


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.sampled_from(f"{MARKER}ab \n"), max_size=12), max_size=3))
def test_marker_pieces_are_the_pieces_between_marker_cuts(texts):
    want = []
    for t in texts:
        cuts = marker_cuts(t) or ([0, len(t)] if t else [])
        want.extend(t[a:b] for a, b in zip(cuts, cuts[1:]))
    assert marker_pieces(texts) == want


PATTERNS = [
    r"\p{N}{1,3}", r"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"x*", r"\b", r"(?<=a)", r"a|", r"(a)(b)?", r"(?P<w>\w+)", r"(?i)ab", r"\s+",
]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=150, deadline=None)
@given(text=st.one_of(unicode_text(), st.text(st.sampled_from(f"ab xA1 23\n\u4e00,.{_NEW17}"), max_size=16)))
def test_isolated_split_equals_the_matches_and_the_text_between(pattern, text):
    pp = PinnedPattern(pattern)
    assert pp.isolated(text) == [text[a:b] for a, b in isolated_bounds(text, pp)]


_BERT_CHARS = [*ut.WHITE_SPACE, *"ab!/:@[`{~x", "\u00a1", "\u3001", "\u0558", "\U00010100", "\U0001039f",
               "\U00020000", "\U0001f600", "\u00e9"]


@settings(max_examples=400, deadline=None)
@given(st.one_of(unicode_text(), st.text(st.sampled_from(_BERT_CHARS), max_size=14)))
def test_bert_pre_tokenizer_pattern_equals_its_two_splits(text):
    two = SequencePre([SplitPre(ut.is_white_space, "removed"), SplitPre(ut.is_bert_punctuation, "isolated")])
    assert BertPre().split_texts([text, text[::-1]]) == two.split_texts([text, text[::-1]])
    assert BertPre().split_unmapped([text]) == two.split_texts([text])


@pytest.mark.parametrize("scheme", ["always", "never", "first"])
@pytest.mark.parametrize("split", [True, False])
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.one_of(unicode_text(), st.text(st.sampled_from(f"{MARKER}ab \n\u3000"), max_size=12)),
                      max_size=3))
def test_metaspace_words_as_strings_equal_its_pieces(scheme, split, texts):
    pre = MetaspacePre(MARKER, scheme, split)
    words = pre.split_texts(texts)
    if scheme == "first":
        assert words is None
        return
    pieces = pre([NormStr.of(t) for t in texts])
    assert words == [p.text for p in pieces]
    assert pre.split_unmapped(texts) == words
    assert MetaspacePre("ab", scheme, split).split_texts(texts) is None  # not one character: no shortcut


def test_bert_ids_path_cuts_words_with_the_pattern():
    words = _hf("bert-base-uncased").pre_tokenizer.split_unmapped  # what the ids path cuts words with
    assert words.__func__ is BertPre.split_unmapped and words(["a,b  c"]) == ["a", ",", "b", "c"]


def _hf(name):
    return load_tokenizer(shared_file("vocab", "hf", name, "tokenizer.json"))


@pytest.mark.parametrize("name", ["gpt2", "deepseek-v3"])
def test_words_kept_before_the_byte_level_mapping(name):
    pre = _hf(name).pre_tokenizer
    assert pre.word_map is not None

    @settings(max_examples=150, deadline=None)
    @given(text=unicode_text())
    def check(text):
        assert list(map(pre.word_map, pre.split_unmapped([text]))) == pre.split_texts([text])

    check()


@pytest.mark.parametrize("name", ["gpt2", "bert-base-uncased", "mistral-7b-v0.1", "deepseek-v3"])
def test_one_encode_per_line_of_many_languages_equals_tokenizers(name):
    """Each line is new text for the word caches (the ``lines`` benchmark); the ids of every line,
    and of the aligned path, equal tokenizers'."""
    tk = pytest.importorskip("tokenizers")
    ref = tk.Tokenizer.from_file(str(shared_file("vocab", "hf", name, "tokenizer.json")))
    tok = _hf(name)
    lines = [ln for ln in corpus("udhr2_all.txt", 400_000).splitlines()[::7] if ln]
    assert len(lines) > 300
    for line in lines:
        want = ref.encode(line).ids
        assert tok.encode(line).ids == want, line
        assert tok.encode(line, literal_spans=[(0, 0)]).ids == want, line


_WORD = st.one_of(unicode_text(), st.text(st.sampled_from("ab#\u2581\u00e9\u4e00\U0001f600 "), max_size=20),
                  st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80))


@pytest.mark.parametrize("name", ["gpt2", "mistral-7b-v0.1", "deepseek-v3", "bert-base-uncased"])
def test_model_ids_without_spans_equal_the_tokens(name):
    """`tokenize_ids` (ids path: one-character pairs ranked by their characters, WordPiece looked up
    from each character's reach) against `tokenize` (spans, cached), at every step limit."""
    model = _hf(name).model

    @settings(max_examples=300, deadline=None)
    @given(word=_WORD, limit=st.sampled_from([1 << 62, 0, 1, 50, 300, 5000]))
    def check(word, limit):
        assert model.tokenize_ids(word, limit) == [t[0] for t in model.tokenize(word, limit)]

    check()


def test_one_character_pairs_are_not_ranked_by_characters_when_two_share_an_id():
    from tokviz.core.formats.tokenizer_json.models import HfBpeModel

    vocab = {"a": 0, "b": 1, "c": 1, "ab": 2, "ac": 3}
    model = HfBpeModel(vocab, [("a", "b"), ("a", "c")])
    assert model.tokenize_ids("ab") == [t[0] for t in model.tokenize("ab")] == [3]  # the pair's last rank names it
    # white box: the table by characters only makes ids quicker, so it is seen only from inside
    assert HfBpeModel({"a": 0, "b": 1, "ab": 2}, [("a", "b")])._char_pairs == {"ab": 0}


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(unicode_text(), st.text(st.sampled_from(
    [*ut.WHITE_SPACE, *"aA\u03a3\u03c3\x00\t\ufffd\u00ad\u200b\u4e00\u3400\u0301\u00e9\u0130\u05bf",
     "\U00020000", "\U000e0001", "\U0001f600"]), max_size=12)),
    flags=st.tuples(st.booleans(), st.booleans(), st.sampled_from([None, True, False]), st.booleans()))
def test_bert_normalizer_on_text_alone_equals_the_aligned_pass(text, flags):
    from tokviz.core.formats.tokenizer_json.normalizers import BertNormalizer, NormStr

    norm = BertNormalizer(*flags)
    assert norm(NormStr(text, None)).text == norm(NormStr.of(text)).text


_ASCII_PATTERNS = [*PATTERNS, r"[^\s\p{L}\p{N}]+", r"\P{L}+\s*", r"[a\P{L}]+", r"[\s\S]", r"\pL\p{Lu}", r"[]a]+",
                   r"[^]a]+", r"\p{Nd}|\p{Zs}|\p{Cc}+"]


@pytest.mark.parametrize("pattern", _ASCII_PATTERNS)
@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(max_codepoint=127), max_size=24))
def test_ascii_pattern_matches_as_regex_on_ascii_text(pattern, text):
    import re

    import regex

    from tokviz.core.text.ascii_pattern import ascii_pattern

    plain = ascii_pattern(pattern)
    if plain is None:
        assert regex.compile(pattern).groups or pattern in (r"(?i)ab",)
        return
    assert [m.span() for m in re.finditer(plain, text)] == [m.span() for m in regex.finditer(pattern, text)]


def test_ascii_pattern_refuses_what_it_cannot_keep_exact():
    from tokviz.core.text.ascii_pattern import ascii_pattern

    assert ascii_pattern(r"(?i:'s)|\p{L}") is None  # caseless: regex case-folds property classes
    assert ascii_pattern("(?x) # [\n\\p{L}+") is None  # verbose: a comment may hold a [ 
    assert ascii_pattern(r"[^\s\S]") is None and ascii_pattern(r"[^\P{L}]") is None  # regex reads these its own way
    assert ascii_pattern(r"\p{Nonsense}") is None and ascii_pattern(r"(?<=a+)b") is None  # unknown; re refuses
    assert ascii_pattern(r"\p{L}") == "[" + "".join(f"\\x{ord(c):02x}" for c in sorted("abcdefghijklmnopqrstuvwxyz"
                                                                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ")) + "]"


@settings(max_examples=200, deadline=None)
@given(text=unicode_text(), literal=st.sampled_from([" ", "a", "ab", ""]), content=st.sampled_from(["\u2581", "", "xy"]))
def test_normalizer_text_alone_equals_the_aligned_pass(text, literal, content):
    from tokviz.core.formats.tokenizer_json.normalizers import NormStr, build_normalizer

    norm = build_normalizer({"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace", "pattern": {"String": literal}, "content": content},
        {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "}, {"type": "Lowercase"}]})
    assert norm.text(text) == norm(NormStr.of(text)).text


@settings(max_examples=300, deadline=None)
@given(text=unicode_text())
def test_byte_level_characters_are_each_utf8_byte_as_its_character(text):
    from tokviz.core.formats.tokenizer_json.pretokenizers import BYTE_CHAR, to_byte_chars

    assert to_byte_chars(text) == "".join(BYTE_CHAR[b] for b in text.encode("utf-8"))
