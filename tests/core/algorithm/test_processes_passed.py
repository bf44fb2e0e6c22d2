"""Tokenizers that can share a big text with forked children take ``processes`` (1 by default) and
pass it to the code that forks; the ids path's helpers pass the caller's number to them, and
leave it out for tokenizers that work alone."""

from __future__ import annotations

import pytest

from tests.conftest import shared_file
from tests.jit_switch import jit_off
from tokviz.core.algorithm.ids_path import encode_ids_like, encode_once, processes_kw
from tokviz.core.loading import load_tokenizer


@pytest.fixture(scope="module")
def sp_tok(sp_model):
    with jit_off():
        return load_tokenizer(sp_model("unigram-nmt"))


def test_sentencepiece_passes_its_processes_to_the_lattice(sp_tok, monkeypatch):
    lattice = sp_tok.lattice
    given = []
    real = type(lattice).best_segments
    monkeypatch.setattr(lattice, "best_segments", lambda s, processes=1, **kw: given.append(processes) or real(lattice, s, **kw))
    text = "Hello world, this is a test."
    ids = sp_tok.encode(text).ids
    assert given == [1]  # the default
    assert sp_tok.encode(text, processes=2).ids == ids
    assert sp_tok.encode_ordinary(text, processes=2).ids == ids
    assert sp_tok.encode_ids(text, processes=2) == ids
    assert encode_ids_like(sp_tok, text, processes=2) == ids
    assert encode_once(sp_tok, text, processes=2).ids == ids
    assert given == [1, 2, 2, 2, 2, 2]


def test_processes_go_only_to_tokenizers_that_take_them(sp_tok):
    tiktoken = load_tokenizer(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))
    hf = load_tokenizer(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))
    assert processes_kw(tiktoken, 2) == processes_kw(sp_tok, 2) == {"processes": 2}
    assert processes_kw(tiktoken, 1) == processes_kw(hf, 2) == {}
    assert encode_ids_like(hf, "hello world", processes=2) == hf.encode("hello world", allowed_special="all").ids
