"""Pre-tokenizer fingerprints: the family of a tokenizer's split named by how it cuts the check
text (reference chunkings worked out from the regexes tokviz knows), the split a byte-level
vocabulary was made with, and the warnings for a known-bad regex or a GGUF file's declared
pre-tokenizer that does not fit its vocabulary."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.conftest import shared_file
from tokviz.core.explain.fingerprints import fingerprint
from tokviz.core.explain.split_families import CHECK_TEXT, behaviours, family_named, family_of_pre_type
from tokviz.core.explain.vocab_origin import MARGIN
from tokviz.core.formats.gguf.pre_types import LLAMA3
from tokviz.core.loading import load_tokenizer, ranked_tokenizer

SHARED = [
    (("vocab", "hf", "gpt2", "tokenizer.json"), "GPT-2"),
    (("vocab", "tiktoken", "r50k_base.tiktoken"), "GPT-2"),
    (("vocab", "tiktoken", "cl100k_base.tiktoken"), "cl100k"),
    (("vocab", "tiktoken", "o200k_base.tiktoken"), "o200k"),
    (("vocab", "hf", "deepseek-v3", "tokenizer.json"), "DeepSeek V3"),
    (("vocab", "hf", "bert-base-uncased", "tokenizer.json"), "BERT words and punctuation (lowercased)"),
    (("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json"), "SentencePiece words (▁ prefix"),
    (("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model"), "SentencePiece words (▁ prefix"),
]


def _tekken() -> Path:
    mc = pytest.importorskip("mistral_common")
    path = Path(mc.__file__).parent / "data" / "tekken_240911.json"
    if not path.is_file():
        pytest.skip("this mistral-common ships no tekken_240911.json")
    return path


@pytest.mark.parametrize("parts, family", SHARED, ids=[p[-1] if p[-1] != "tokenizer.json" else p[-2] for p, _ in SHARED])
def test_the_family_of_each_shared_tokenizer(parts, family):
    found = fingerprint(load_tokenizer(shared_file(*parts)))
    assert found.family is not None and family in found.family
    assert found.warnings == ()
    if found.origin is not None:  # byte-level BPE: the vocabulary fits its own split, and that family
        assert found.origin.own_share == found.origin.best == 1.0
        assert any(family in name for name in found.origin.origin)


def test_mistral_tekken_is_its_own_family_and_its_vocabulary_fits():
    found = fingerprint(load_tokenizer(_tekken()))
    assert found.family == "Mistral Tekken" and found.warnings == ()
    assert "Mistral Tekken" in found.origin.origin


def test_families_that_differ_are_told_apart_by_the_check_text():
    names = ["GPT-2", "Llama 3", "o200k (GPT-4o, Llama 4)", "Qwen 2/3", "Qwen 3.5", "DeepSeek V3",
             "Mistral Tekken", "llama.cpp default", "DeepSeek LLM", "StarCoder"]
    cuts = {tuple(family_named(n).chunks(CHECK_TEXT)) for n in names}
    assert len(cuts) == len(names)
    # cl100k and Llama 3 share their regex but for its spelling: one behaviour
    assert family_named("cl100k").chunks(CHECK_TEXT) == family_named("Llama 3").chunks(CHECK_TEXT)
    assert "Llama 3 = cl100k" in behaviours()[tuple(family_named("cl100k").chunks(CHECK_TEXT))]


def test_a_family_is_found_by_its_regex_text_too():
    tok = load_tokenizer(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))
    assert fingerprint(tok, vocabulary=False).by_pattern == "cl100k"
    assert fingerprint(load_tokenizer(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))).by_pattern == "GPT-2"


def test_mistrals_broken_regex_is_named_with_what_it_changes():
    description = dataclasses.replace(__import__("tokviz.core.formats.registry", fromlist=["x"])
                                      .read_model_file(_tekken()), pattern=LLAMA3)
    found = fingerprint(ranked_tokenizer(description))
    assert found.family.startswith("Llama 3")
    broken = [w for w in found.warnings if "fix_mistral_regex" in w]
    assert len(broken) == 1
    assert "'eBay' -> eBay (Mistral Tekken: e|Bay)" in broken[0] and "'12' -> 12 (Mistral Tekken: 1|2)" in broken[0]
    # and the vocabulary says so by itself: some Tekken tokens cannot be formed under Llama 3's split
    assert found.origin.mismatch and "Mistral Tekken" in found.origin.origin


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory):
    pytest.importorskip("gguf")
    return tmp_path_factory.mktemp("fingerprint-gguf")


@pytest.mark.parametrize("pre", ["gpt-2", "llama-bpe", "qwen2", "deepseek-v3", "gpt-4o", "tekken", "default"])
def test_gguf_files_split_as_the_family_of_their_declared_type(gguf_dir, pre):
    from tests.core.formats import gguf_files

    path = gguf_files.byte_level_gguf(shared_file("vocab", "hf", "gpt2"), gguf_dir / f"{pre}.gguf", pre)
    found = fingerprint(load_tokenizer(path), vocabulary=False)
    assert family_of_pre_type(pre).name in found.family
    assert found.declared_pre == pre


@pytest.mark.parametrize("folder, pre, fits", [
    ("deepseek-v3", "default", False),  # a modern vocabulary marked `default`: '.get', '\tt' unformable
    ("deepseek-v3", "deepseek-v3", True),
    ("gpt2", "qwen2", False),  # GPT-2's ' 1'-style tokens cannot be formed under one-digit splits
    ("gpt2", "gpt-2", True),
])
def test_a_declared_pre_tokenizer_that_does_not_fit_the_vocabulary_is_flagged(gguf_dir, folder, pre, fits):
    from tests.core.formats import gguf_files

    path = gguf_files.byte_level_gguf(shared_file("vocab", "hf", folder), gguf_dir / f"{folder}-{pre}.gguf", pre)
    found = fingerprint(load_tokenizer(path))
    flagged = [w for w in found.warnings if f"declared pre-tokenizer {pre!r} does not fit" in w]
    assert bool(flagged) is not fits
    assert (found.origin.own_share >= found.origin.best - MARGIN) is fits
    origin = {"deepseek-v3": "DeepSeek V3", "gpt2": "GPT-2"}[folder]
    assert found.origin.origin == (origin,)


def test_a_gemma_style_pipeline_is_sentencepiece_words_without_a_prefix(tmp_path):
    """Gemma's tokenizer.json replaces spaces with ▁ and prepends nothing (Llama 2 and Mistral v0.1
    prepend one): built here from Mistral's vocabulary with Gemma's normalizer and decoder, it is
    named as Gemma's family and encodes as `tokenizers` does."""
    import json

    tokenizers = pytest.importorskip("tokenizers")
    data = json.loads(shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json").read_text(encoding="utf-8"))
    data["normalizer"] = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
    data["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}]}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    tok = load_tokenizer(path)
    found = fingerprint(tok)
    assert found.family == "SentencePiece words (no ▁ prefix: Gemma)" and found.warnings == ()
    ref = tokenizers.Tokenizer.from_file(str(path))
    for text in (CHECK_TEXT, " leading space", "two  spaces", "Größe 東京 👋"):
        assert tok.encode_ids(text) == ref.encode(text, add_special_tokens=False).ids
        assert tok.decode(tok.encode_ids(text)) == ref.decode(ref.encode(text, add_special_tokens=False).ids)
