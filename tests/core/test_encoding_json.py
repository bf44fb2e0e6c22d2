"""`Encoding.write_json` (the streamed ``--json`` writer) and `LazyEncoding` (``encode`` whose
tokens and spans are made on first read) against the plain ways of getting the same things."""

from __future__ import annotations

import json
import pickle

import pytest

from tests.conftest import shared_file
from tokviz.core import json_columns
from tokviz.core.bpe.ranked import id_spans
from tokviz.core.encoding import Encoding, LazyEncoding, encode_with_specials
from tokviz.core.loading import load_tokenizer
from tokviz.core.processes import fork
from tokviz.core.text.token_text import byte_char_spans, python_pattern
from tokviz.core.text.unicode_tables import PinnedPattern

MIXED = (
    "Naïve café — e\u0301e\u0301 \u0915\u094d\u0937 👨\u200d👩\u200d👧 🏳\ufe0f\u200d🌈 🇪🇸 日本語の文 한국어 "
    "ΣΑΣ İſ \U0003d000 \U00010d50 <|endoftext|> 'LL 123456 ٣٤٥ \r\n\t  x\u00a0y\u3000z"
)
MODELS = [("tiktoken", "o200k_base.tiktoken"), ("tiktoken", "cl100k_base.tiktoken"), ("hf", "gpt2/tokenizer.json"),
          ("hf", "bert-base-uncased/tokenizer.json"), ("hf", "mistral-7b-v0.1/tokenizer.json"),
          ("hf", "deepseek-v3/tokenizer.json")]


def _text(tok) -> str:
    udhr = shared_file("corpora", "udhr2_all.txt").read_text(encoding="utf-8")[:20_000]
    special = sorted(tok.special_tokens)[0]
    return MIXED + special + udhr + MIXED


def _splits_a_character(enc: Encoding) -> bool:
    """Some token holds part of a character (its bytes alone are not UTF-8)."""
    for t in enc.tokens:
        try:
            t.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


@pytest.fixture(params=MODELS, ids=[name for _, name in MODELS])
def tok(request):
    folder, name = request.param
    return load_tokenizer(shared_file("vocab", folder, name))


def test_streamed_json_equals_json_dumps(tok, monkeypatch):
    text = _text(tok)
    enc = tok.encode(text, allowed_special="all")
    expected = json.dumps(enc.to_json())
    assert enc.json_text() == expected  # from the filled lists
    monkeypatch.setattr(json_columns, "JSON_CHUNK", 7)  # many chunks, a short last one
    real_fork = fork.fork_call
    for fresh, halves, arrays in ((False, False, False), (True, False, False), (True, True, False),
                                  (True, False, True), (True, True, True)):  # fresh: from the ids' columns
        monkeypatch.setattr(json_columns, "PARALLEL_MIN_TOKENS", 2 if halves else 1 << 30)
        monkeypatch.setattr(id_spans, "ARRAY_MIN", 1 if arrays else 1 << 30)  # numpy starts and ends
        for processes in (1, 2):  # the default, and two allowed
            forks = []
            monkeypatch.setattr(fork, "fork_call", lambda fn: forks.append(1) or real_fork(fn))
            parts: list[str] = []
            (tok.encode(text, allowed_special="all") if fresh else enc).write_json(parts.append, processes=processes)
            assert "".join(parts) == expected
            two = halves and processes == 2
            assert len(parts) > (3 if two else 10)
            assert len(forks) == (1 if two and fork.can_fork() else 0)  # the second halves formatted in a child
    if tok.kind == "tiktoken" or getattr(tok, "byte_level", False):
        assert _splits_a_character(enc)  # the case where spans of neighbouring tokens overlap


def test_json_of_small_encodings():
    for enc in [Encoding([], [], []), Encoding([5], [b"\xff"], [(0, 0)]),
                Encoding([1, 2], [b"a", b"\xe6\x97"], [(0, 1), (1, 2)], special=[0])]:
        assert enc.json_text() == json.dumps(enc.to_json())


def _chunk_by_chunk(tok, part: str, offset: int, out: Encoding) -> None:
    """The slow obvious encoding of ordinary text: each chunk of the split pattern alone, the
    characters' spans worked out from its tokens' byte lengths."""
    for m in PinnedPattern(python_pattern(tok.pattern)).for_text(part).finditer(part):
        ids = tok.encode_ids(m.group())
        tokens = [tok.token_bytes(i) for i in ids]
        out.ids.extend(ids)
        out.tokens.extend(tokens)
        out.spans.extend(byte_char_spans(m.group(), map(len, tokens), offset + m.start()))


def test_tiktoken_tokens_and_spans_from_ids_equal_the_chunk_by_chunk_encoding():
    tok = load_tokenizer(shared_file("vocab", "tiktoken", "o200k_base.tiktoken"))
    text = _text(tok)
    enc = tok.encode(text, allowed_special="all")
    assert isinstance(enc, LazyEncoding)
    oracle = encode_with_specials(text, tok.special_tokens, tok.token_bytes,
                                  lambda part, offset, out: _chunk_by_chunk(tok, part, offset, out),
                                  allowed_special="all")
    assert (enc.ids, enc.tokens, enc.spans, enc.special, enc.dropped) == (
        oracle.ids, oracle.tokens, oracle.spans, oracle.special, oracle.dropped)
    assert enc == oracle and oracle == enc


@pytest.mark.parametrize("name", [name for folder, name in MODELS if folder == "hf"])
def test_hf_ids_path_equals_the_aligned_path(name):
    tok = load_tokenizer(shared_file("vocab", "hf", name))
    text = _text(tok)
    enc = tok.encode(text)
    ids = list(enc.ids)  # before tokens or spans are asked for
    full = tok.encode(text, literal_spans=[(len(text), len(text))])  # the aligned path, eagerly
    assert not isinstance(full, LazyEncoding)
    assert ids == full.ids
    assert (enc.tokens, enc.spans, enc.unknown, enc.special, enc.dropped) == (
        full.tokens, full.spans, full.unknown, full.special, full.dropped)


def test_lazy_encoding_fills_once_and_keeps_assigned_fields():
    calls = []

    def complete():
        calls.append(1)
        return Encoding([7, 8], [b"a", b"b"], [(0, 1), (1, 2)], [], [1], [(2, 3)])

    enc = LazyEncoding([7, 8], complete)
    assert enc.ids == [7, 8] and len(enc) == 2 and calls == []
    enc.dropped = []  # a caller's own value is kept when the rest is filled
    assert enc.spans == [(0, 1), (1, 2)] and enc.tokens == [b"a", b"b"] and enc.special == [1]
    assert enc.dropped == [] and calls == [1]
    assert enc.inserted == [] and enc.lossless
    copy = pickle.loads(pickle.dumps(enc))
    assert type(copy) is Encoding and copy == enc and calls == [1]


def test_lazy_ids_run_alone_only_when_read_first():
    calls = []

    def ids_only():
        calls.append("ids")
        return [7, 8]

    def complete():
        calls.append("all")
        return Encoding([7, 8], [b"a", b"b"], [(0, 1), (1, 2)])

    enc = LazyEncoding(ids_only, complete)
    assert calls == []
    assert enc.ids == [7, 8] and calls == ["ids"]
    assert enc.spans == [(0, 1), (1, 2)] and calls == ["ids", "all"]
    calls.clear()
    enc = LazyEncoding(ids_only, complete)
    assert enc.spans == [(0, 1), (1, 2)] and enc.ids == [7, 8] and calls == ["all"]  # one pass


def test_lazy_ids_assigned_before_reading_are_kept():
    calls = []
    enc = LazyEncoding(lambda: calls.append("ids") or [7, 8], lambda: Encoding([7, 8], [b"a", b"b"], [(0, 1), (1, 2)]))
    enc.ids = [9]  # the caller's ids: the ids path never runs
    assert enc.ids == [9] and calls == []
    assert enc.spans == [(0, 1), (1, 2)] and enc.ids == [9]
