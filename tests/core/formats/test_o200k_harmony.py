"""o200k_harmony (gpt-oss): o200k_base's ranks with the harmony chat tokens, by name, with ids equal
to tiktoken's encoding of the same name."""

from __future__ import annotations

import hashlib
import random
import shutil

import pytest

from tests.conftest import shared_file
from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS
from tokviz.core.loading import load_tokenizer

HARMONY = "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>"


@pytest.fixture
def harmony(tmp_path, monkeypatch):
    """(tokviz's o200k_harmony, tiktoken's) with tiktoken's cache holding the shared o200k file."""
    tiktoken = pytest.importorskip("tiktoken")
    if "o200k_harmony" not in tiktoken.list_encoding_names():
        pytest.skip("this tiktoken has no o200k_harmony")
    enc = KNOWN_ENCODINGS["o200k_harmony"]
    shutil.copy(shared_file("vocab", "tiktoken", "o200k_base.tiktoken"),
                tmp_path / hashlib.sha1(enc.url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    return load_tokenizer("o200k_harmony", download=False), tiktoken.get_encoding("o200k_harmony")


def test_ids_equal_tiktoken_on_corpus_lines_with_harmony_tokens(harmony):
    tok, ref = harmony
    assert tok.n_vocab == ref.n_vocab == 201088 and tok.special_tokens == {s: ref.encode_single_token(s) for s in ref.special_tokens_set}
    lines = [s for s in shared_file("corpora", "udhr2_all.txt").read_text(encoding="utf-8").splitlines() if s][:600]
    rng = random.Random(0)
    marks = sorted(ref.special_tokens_set)
    texts = [s[: len(s) // 2] + rng.choice(marks) + s[len(s) // 2:] for s in lines]
    assert [tok.encode_ids(s) for s in texts] == [ref.encode_ordinary(s) for s in texts]
    ours = [tok.encode(s, allowed_special="all").ids for s in texts]
    assert ours == [ref.encode(s, allowed_special="all") for s in texts]
    assert [tok.decode(ids) for ids in ours] == [ref.decode(ids) for ids in ours]


def test_an_id_with_two_names_decodes_as_tiktoken_does(harmony):
    tok, ref = harmony
    assert tok.decode([200018]) == ref.decode([200018]) == "<|endofprompt|>"
    assert tok.encode("<|reserved_200018|>", allowed_special="all").ids == [200018]


def test_the_command_line_encodes_by_name(harmony, cli):
    ref = harmony[1]
    code, out, err = cli("encode", "o200k_harmony", HARMONY)
    assert code == 0 and err == ""
    assert [int(row.split("\t")[0]) for row in out.splitlines()] == ref.encode(HARMONY, allowed_special="all")
    assert out.splitlines()[0] == "200006\t<|start|>"
