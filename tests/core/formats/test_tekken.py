"""Mistral's tekken.json: ids, special tokens and decoding equal to mistral-common's `Tekkenizer`,
on the tekken files its package ships and on small files in the newer layout (listed specials)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.conftest import shared_file
from tokviz.core.formats.descriptions import RankedVocab
from tokviz.core.formats.registry import read_model_file
from tokviz.core.formats.tekken import BUILT_IN_SPECIALS
from tokviz.core.loading import load_tokenizer

CORPORA = ("tinyshakespeare.txt", "taylorswift.txt", "udhr2_all.txt")
_LOADED: dict = {}


def _shipped(name: str) -> Path:
    mc = pytest.importorskip("mistral_common")
    path = Path(mc.__file__).parent / "data" / name
    if not path.is_file():
        pytest.skip(f"this mistral-common ships no {name}")
    return path


def _pair(path: Path):
    """(tokviz's tokenizer, mistral-common's Tekkenizer) for one file, loaded once per session."""
    if path not in _LOADED:
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        _LOADED[path] = load_tokenizer(path), Tekkenizer.from_file(path)
    return _LOADED[path]


def _specials(ref) -> dict[str, int]:
    return {ref.id_to_piece(i): i for i in range(ref.num_special_tokens)}


def _lines(per_corpus: int) -> list[str]:
    out = []
    for name in CORPORA:
        lines = [s for s in shared_file("corpora", name).read_text(encoding="utf-8").splitlines() if s.strip()]
        out += random.Random(name).sample(lines, min(per_corpus, len(lines)))
    return out + ["\n".join(out[i:i + 5]) + "\n\n  \t" for i in range(0, len(out), 5)]  # newlines and space runs


@pytest.mark.parametrize("name", ["tekken_240718.json", "tekken_240911.json"])
def test_ids_equal_mistral_common_on_corpus_lines(name):
    tok, ref = _pair(_shipped(name))
    texts = _lines(300)
    ours = [tok.encode_ids(s) for s in texts]
    assert ours == [ref.encode(s, False, False) for s in texts]
    assert tok.encode(texts[0]).ids == ours[0]  # the spans path gives the same ids
    assert min(min(ids) for ids in ours if ids) >= ref.num_special_tokens  # ordinary ids come after the specials


def test_the_file_is_a_ranked_vocab_shifted_past_its_special_tokens():
    path = _shipped("tekken_240718.json")
    d = read_model_file(path)
    assert isinstance(d, RankedVocab) and d.name == "tekken_240718"
    assert d.ranks[b"\x00"] == 1000 and len(d.ranks) == 131072 - 1000
    assert list(d.special_tokens)[:len(BUILT_IN_SPECIALS)] == list(BUILT_IN_SPECIALS)
    assert d.special_tokens["<SPECIAL_999>"] == 999


def test_special_tokens_and_decoding_equal_mistral_common():
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

    tok, ref = _pair(_shipped("tekken_240911.json"))
    assert tok.n_vocab == ref.n_words
    assert tok.special_tokens == _specials(ref)
    every = range(ref.n_words)
    assert [tok.token_bytes(i) for i in every] == [ref.id_to_byte_piece(i, SpecialTokenPolicy.KEEP) for i in every]
    ids = ref.encode("Bonjour à tous, ça va? 🙂", True, True)
    assert ids[0] == ref.bos_id and tok.decode(ids) == ref.decode(ids, SpecialTokenPolicy.KEEP)
    # special-token text: ordinary text to mistral-common's encoder, a control id when allowed
    text = "[INST] hi[/INST]"
    assert tok.encode_ids(text) == ref.encode(text, False, False)
    assert tok.encode(text, allowed_special="all").ids == [
        ref.get_special_token("[INST]"), *ref.encode(" hi", False, False), ref.get_special_token("[/INST]")]


def _small_tekken(tmp_path, *, listed: int, n_special: int, n_ordinary: int) -> Path:
    """A tekken file in the newer layout (listed special tokens) cut from a shipped one."""
    src = json.loads(_shipped("tekken_240911.json").read_text(encoding="utf-8"))
    names = [f"[TOKEN_{i}]" for i in range(listed)]
    d = {
        "config": {**src["config"], "default_vocab_size": n_ordinary + n_special,
                   "default_num_special_tokens": n_special, "num_vocab_tokens": n_ordinary + 50, "version": "v13"},
        "vocab": src["vocab"][: n_ordinary + 50],  # longer than used: the tail is cut, as mistral-common does
        "special_tokens": [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(names)],
    }
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    return path


def test_listed_special_tokens_and_fillers_equal_mistral_common(tmp_path):
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = _small_tekken(tmp_path, listed=7, n_special=12, n_ordinary=5000)
    ref = Tekkenizer.from_file(path)
    tok = load_tokenizer(tmp_path)  # a folder holding only tekken.json
    assert tok.special_tokens == _specials(ref)
    assert tok.special_tokens["<SPECIAL_11>"] == 11 and tok.n_vocab == ref.n_words == 5012
    texts = _lines(100)
    assert [tok.encode_ids(s) for s in texts] == [ref.encode(s, False, False) for s in texts]
    ids = [3, *ref.encode(texts[0], False, False), 11]
    assert tok.decode(ids) == ref.decode(ids, SpecialTokenPolicy.KEEP)
