"""llama.cpp's own tokenizer test vectors (``models/ggml-vocab-*.gguf.inp/.out``, in tests/data/llama_cpp):
a GGUF vocabulary written from the same model's tokenizer.json gives, in tokviz, the ids llama.cpp's
``test-tokenizer-0`` expects, input by input (no BOS/EOS or [CLS]/[SEP]: the vectors are tokenized
without special tokens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import shared_file
from tests.core.formats import gguf_files
from tokviz.core.loading import load_tokenizer

VECTORS = Path(__file__).resolve().parents[2] / "data" / "llama_cpp"
SEPARATOR = "\n__ggml_vocab_test__\n"


def vectors(name: str) -> list[tuple[str, list[int]]]:
    """(input, expected ids) pairs of llama.cpp's vectors for vocabulary `name`."""
    texts = (VECTORS / "ggml-vocab-gpt-2.gguf.inp").read_text(encoding="utf-8").split(SEPARATOR)[:-1]
    lines = (VECTORS / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(texts) == len(lines) == 46
    return [(t, [int(v) for v in line.split()]) for t, line in zip(texts, lines, strict=True)]


@pytest.mark.parametrize("name, build", [
    ("gpt-2", lambda hf, tmp: gguf_files.byte_level_gguf(hf / "gpt2", tmp / "gpt2.gguf", "gpt-2")),
    ("bert-bge", lambda hf, tmp: gguf_files.word_piece_gguf(hf / "bert-base-uncased", tmp / "bert.gguf", tmp)),
])
def test_a_gguf_vocabulary_gives_llama_cpps_expected_ids(tmp_path, name, build):
    tok = load_tokenizer(build(shared_file("vocab", "hf"), tmp_path))
    cases = vectors(name)
    bad = [(text, tok.encode_ordinary(text).ids, ids) for text, ids in cases if tok.encode_ordinary(text).ids != ids]
    assert bad == [], f"{len(bad)} of {len(cases)} differ; first {bad[0]}"
