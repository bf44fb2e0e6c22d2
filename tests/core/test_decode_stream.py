"""Streaming decode (`tokviz.core.decode_stream`) step by step equal to `tokenizers`'
``decoders.DecodeStream`` on the shared tokenizer.json files: corpus lines (emoji, CJK, scripts
of the UDHR) and random id sequences (byte tokens, specials)."""

from __future__ import annotations

import random

import pytest

from tests.real_tokenizers import corpus, hf_path, load_ours
from tokviz.core.decode_stream import DecodeStream, stream_steps

NAMES = ("gpt2", "bert-base-uncased", "mistral-7b-v0.1", "deepseek-v3")
EXTRA = ["hello 👋 world 🌍", "日本語のテキスト、한국어", "👨\u200d👩\u200d👧 🇪🇸 e\u0301 ﷽", "  two  spaces\n\tand tabs",
         "<s> [CLS] <|endoftext|> don't , . !", "\U0010ffff\x00\ufffd"]


def _lines() -> list[str]:
    udhr = [ln for ln in corpus("udhr2_all.txt", None).splitlines()[::250] if ln.strip()]
    shakespeare = [ln for ln in corpus("tinyshakespeare.txt", 20_000).splitlines() if ln.strip()][::8]
    return EXTRA + udhr + shakespeare


def _ours(name: str):
    if name == "deepseek-v3":
        from tokviz.core.loading import load_tokenizer

        return load_tokenizer(hf_path(name))
    return load_ours(name)


def _reference_steps(ref, ids: list[int], *, skip: bool) -> list:
    from tokenizers.decoders import DecodeStream as Reference

    stream, out = Reference(skip_special_tokens=skip), []
    for i in ids:
        try:
            out.append(stream.step(ref, i))
        except Exception:  # noqa: BLE001 - tokenizers' InvalidPrefix: compared as a stop
            out.append("error")
            break
    return out


def _our_steps(tok, ids: list[int], *, skip: bool) -> list:
    stream, out = DecodeStream(tok, skip_special_tokens=skip), []
    for i in ids:
        try:
            out.append(stream.step(i))
        except Exception:  # noqa: BLE001
            out.append("error")
            break
    return out


@pytest.mark.parametrize("name", NAMES)
def test_stream_equals_tokenizers_decode_stream_on_corpus_lines(name):
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(hf_path(name)))
    tok = _ours(name)
    checked = 0
    for skip in (False, True):
        for line in _lines():
            ids = ref.encode(line).ids
            assert _our_steps(tok, ids, skip=skip) == _reference_steps(ref, ids, skip=skip), (line, skip)
            checked += len(ids)
    assert checked > 5_000


@pytest.mark.parametrize("name", NAMES)
def test_stream_equals_tokenizers_on_random_ids(name):
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(hf_path(name)))
    tok = _ours(name)
    rng = random.Random(36)
    n = ref.get_vocab_size()
    for trial in range(150):  # low ids are bytes and specials: half the ids from there
        ids = [rng.randrange(n) if rng.random() < 0.5 else rng.randrange(300) for _ in range(rng.randrange(1, 30))]
        skip = trial % 2 == 1
        assert _our_steps(tok, ids, skip=skip) == _reference_steps(ref, ids, skip=skip), (ids, skip)


def test_an_emoji_is_held_back_until_its_last_byte():
    tok = load_ours("gpt2")
    ids = tok.encode("hi 👋!").ids  # "hi", " \xf0\x9f\x91" (partial), "\x8b", "!"
    steps, text = stream_steps(tok, ids)
    assert [s.added for s in steps] == ["hi", None, " 👋", "!"]
    assert [s.end for s in steps] == [2, 2, 4, 5] and text == "hi 👋!"


def test_metaspace_first_space_is_dropped_once():
    tok = load_ours("mistral-7b-v0.1")
    ids = tok.encode_ids("Hello world", add_special_tokens=False)
    steps, text = stream_steps(tok, ids)
    assert [s.added for s in steps] == ["Hello", " world"] and text == "Hello world"


@pytest.mark.parametrize("name", ("gpt2", "mistral-7b-v0.1"))
def test_ids_given_first_are_context_as_in_tokenizers(name):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.decoders import DecodeStream as Reference

    ref, tok = tokenizers.Tokenizer.from_file(str(hf_path(name))), _ours(name)
    for text in EXTRA[:3]:
        ids = ref.encode(text).ids
        for k in range(len(ids)):  # a prompt ending inside a character too
            stream, reference = DecodeStream(tok, ids=ids[:k]), Reference(ids=ids[:k])
            assert [stream.step(i) for i in ids[k:]] == [reference.step(ref, i) for i in ids[k:]], (text, k)
