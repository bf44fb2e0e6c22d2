"""GGUF files: the tokenizer in their metadata gives the ids of the model's own tokenizer.

Each file is written at test time with the ``gguf`` package from a shared model's Hugging Face
files (`gguf_files`), then opened by tokviz like any tokenizer file and compared with `tokenizers`
on the same model's tokenizer.json (or, for a t5/Unigram vocabulary, with `sentencepiece` on the
``.model`` it came from), line by line over lines spread across the shared corpora.
"""

from __future__ import annotations

import struct

import pytest

from tests.conftest import shared_file
from tests.core.formats import gguf_files
from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.gguf import PRE_TYPES, read_gguf
from tokviz.core.formats.gguf.metadata import parse_metadata
from tokviz.core.loading import load_tokenizer

tokenizers = pytest.importorskip("tokenizers")


def _lines(n: int) -> list[str]:
    """`n` non-empty lines from two corpora, spread across them (many scripts, prose and markup)."""
    out = []
    for name, share in (("udhr2_all.txt", 2 * n // 3), ("taylorswift.txt", n - 2 * n // 3)):
        lines = [x for x in shared_file("corpora", name).read_text(encoding="utf-8").splitlines() if x.strip()]
        out += lines[:: max(1, len(lines) // share)][:share]
    return out


def _mismatches(tok, reference, lines) -> list[str]:
    return [x for x in lines if tok.encode_ids(x) != reference(x)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """name -> (GGUF file, the tokenizer.json it came from), written once for the module."""
    tmp = tmp_path_factory.mktemp("gguf")
    hf = shared_file("vocab", "hf")
    return {
        "gpt2": (gguf_files.byte_level_gguf(hf / "gpt2", tmp / "gpt2.gguf", "gpt-2"), hf / "gpt2"),
        "deepseek-v3": (gguf_files.byte_level_gguf(hf / "deepseek-v3", tmp / "ds3.gguf", "deepseek-v3"),
                        hf / "deepseek-v3"),
        "bert": (gguf_files.word_piece_gguf(hf / "bert-base-uncased", tmp / "bert.gguf", tmp),
                 hf / "bert-base-uncased"),
        "mistral": (gguf_files.sentencepiece_gguf(hf / "mistral-7b-v0.1" / "tokenizer.model", tmp / "mistral.gguf",
                                                  hf_folder=hf / "mistral-7b-v0.1"), hf / "mistral-7b-v0.1"),
    }


@pytest.mark.parametrize("name", ["gpt2", "deepseek-v3", "bert", "mistral"])
def test_ids_equal_tokenizers_on_the_same_models_tokenizer_json(built, name):
    path, folder = built[name]
    tok = load_tokenizer(path)
    ref = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    lines = _lines(2400)
    assert len(lines) >= 2000
    bad = _mismatches(tok, lambda x: ref.encode(x, add_special_tokens=False).ids, lines)
    assert bad == [], f"{len(bad)} of {len(lines)} lines differ, first {bad[0]!r}"


@pytest.mark.parametrize("name, text, pre, first, last", [
    ("gpt2", "Hello world", "gpt-2", None, None),
    ("deepseek-v3", "Hello world", "deepseek-v3", 0, None),  # add_bos_token in its tokenizer_config
    ("bert", "Hello world", "default", 101, 102),  # llama.cpp's WordPiece: [CLS] ... [SEP]
    ("mistral", "Hello world!", "default", 1, None),
])
def test_what_the_file_declares_reaches_the_tokenizer(built, name, text, pre, first, last):
    tok = load_tokenizer(built[name][0])
    assert tok.declared_pre == pre
    ids = tok.encode_ids(text)
    declared = tok.declared
    assert declared.add_bos == (first is not None) and declared.add_eos is False
    if first is not None:
        assert declared.special_ids["bos"] == first
    with_specials = tok.encode(text).ids  # as llama.cpp's llama_tokenize(add_special=true): BOS id first
    assert with_specials == [x for x in (first,) if x is not None] + ids + [x for x in (last,) if x is not None]
    assert tok.encode_ids(text, add_special_tokens=True) == with_specials


def test_a_llama_gguf_adds_the_bos_it_declares_and_a_model_file_adds_none(built):
    """The same SentencePiece model: from a GGUF file (add_bos_token true) `encode` puts BOS first
    as llama.cpp does, an inserted special token covering no text; the .model file it came from
    still adds nothing (as sentencepiece)."""
    gguf = load_tokenizer(built["mistral"][0])
    model = load_tokenizer(built["mistral"][1] / "tokenizer.model")
    enc = gguf.encode("Hello world!")
    assert enc.ids == [1, 22557, 1526, 28808]
    assert enc.spans[0] == (0, 0) and enc.inserted == [0] and enc.special == [0]
    assert model.encode("Hello world!").ids == [22557, 1526, 28808]
    assert model.encode_ids("Hello world!", add_special_tokens=True) == [22557, 1526, 28808]


def test_known_answers_from_the_shared_readme(built):
    assert load_tokenizer(built["bert"][0]).encode("Hello world").ids == [101, 7592, 2088, 102]
    assert load_tokenizer(built["mistral"][0]).encode_ids("Hello world!") == [22557, 1526, 28808]
    assert load_tokenizer(built["gpt2"][0]).encode_ids(" SolidGoldMagikarp") == [43453]


def test_a_unigram_vocabulary_t5_equals_sentencepiece(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    model = trained_model("unigram-nmt", tmp_path)
    path = gguf_files.sentencepiece_gguf(model, tmp_path / "t5.gguf", kind="t5")
    tok = load_tokenizer(path)
    ref = spm.SentencePieceProcessor(model_file=str(model))
    lines = _lines(2400)
    bad = _mismatches(tok, ref.encode, lines)
    assert bad == [], f"{len(bad)} of {len(lines)} lines differ, first {bad[0]!r}"
    assert tok.declared.add_eos and not tok.declared.add_bos  # llama.cpp's defaults for t5
    eos = tok.declared.special_ids["eos"]
    assert tok.encode(lines[0]).ids == ref.encode(lines[0]) + [eos]


def test_the_declared_pre_tokenizer_decides_the_split(built, tmp_path):
    """The same vocabulary declared as another type splits as that type says: digits one by one
    under qwen2, in threes under llama-bpe."""
    folder = built["gpt2"][1]
    qwen = load_tokenizer(gguf_files.byte_level_gguf(folder, tmp_path / "q.gguf", "qwen2"))
    llama3 = load_tokenizer(gguf_files.byte_level_gguf(folder, tmp_path / "l.gguf", "llama-bpe"))
    assert len(qwen.encode_ids("1234567")) == 7
    assert len(llama3.encode_ids("1234567")) == 3
    assert llama3.declared.add_bos  # llama.cpp adds BOS for llama-bpe unless the file says


def test_every_regex_of_the_pre_types_compiles_with_tokvizs_splitter():
    from tokviz.core.text.split import parse_split

    for kind in PRE_TYPES.values():
        for regex in kind.regexes:
            parse_split("regex:" + regex)


def test_unknown_or_unsupported_pre_tokenizer_names_are_refused(built, tmp_path):
    folder = built["gpt2"][1]
    for pre, words in (("no-such-pre", "llama.cpp does not know"), ("kimi-k2", "code of its own")):
        path = gguf_files.byte_level_gguf(folder, tmp_path / f"{pre}.gguf", pre)
        with pytest.raises(ModelFormatError, match=words):
            read_gguf(path)


def test_only_the_metadata_is_read_whatever_follows(built, tmp_path):
    """A whole model's tensors follow the metadata: bytes past it are never looked at."""
    path = tmp_path / "model.gguf"
    data = built["gpt2"][0].read_bytes()
    path.write_bytes(data + b"\xff" * 100_000)
    assert load_tokenizer(path).encode_ids("Hello world") == [15496, 995]


def _header(n_kv: int, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, 0, n_kv)


def _string(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


def test_metadata_values_of_every_type():
    body = b""
    values = [(b"a.u8", 0, b"\x07", 7), (b"a.i16", 3, struct.pack("<h", -5), -5), (b"a.f32", 6, struct.pack("<f", 1.5), 1.5),
              (b"a.bool", 7, b"\x01", True), (b"a.str", 8, _string(b"hi"), "hi"), (b"a.u64", 10, struct.pack("<Q", 2**40), 2**40)]
    for key, t, raw, _ in values:
        body += _string(key) + struct.pack("<I", t) + raw
    body += _string(b"a.arr") + struct.pack("<IIQ", 9, 8, 2) + _string(b"x") + _string(b"yz")
    version, kv = parse_metadata(_header(len(values) + 1) + body)
    assert version == 3
    assert {k: v for k, (_, v) in kv.items() if k != "a.arr"} == {k.decode(): v for k, _, _, v in values}
    assert kv["a.arr"] == (9, ["x", "yz"])
