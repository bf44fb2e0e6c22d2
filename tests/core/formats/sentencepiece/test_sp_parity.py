"""Exact parity with the `sentencepiece` library: ``encode(text).ids`` equals
``SentencePieceProcessor(model_file=f).encode(text)`` and ``decode`` its ``decode``, for Unigram
models (``nmt_nfkc`` and identity normalization), BPE with byte fallback and the shared Mistral model.

By default a deterministic sample of ``udhr2_all.txt`` lines and of the code points; with
``TOKVIZ_FULL_PARITY=1`` every line, the whole corpus as one text, and every code point. The
Unigram models run twice: with the compiled Viterbi (when numba is installed) and the plain one.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from tests.core.formats.sentencepiece.spm_helpers import corpus_lines, mistral_model
from tests.jit_switch import jit_off
from tests.real_tokenizers import FULL, corpus, full_only, load_test_plans, unicode_text
from tokviz.core import jit
from tokviz.core.loading import load_tokenizer

spm = pytest.importorskip("sentencepiece")

NAMES = ("unigram-nmt", "unigram-identity", "unigram-nmt python", "unigram-identity python", "bpe-bytes", "mistral")
_PAIRS: dict = {}


@pytest.fixture(params=NAMES)
def pair(request, sp_model):
    """(tokviz's tokenizer, sentencepiece's processor) for one model file ("python": the plain
    Viterbi, without numba)."""
    name = request.param
    if name not in _PAIRS:
        model, _, how = name.partition(" ")
        path = mistral_model() if model == "mistral" else sp_model(model)
        if how == "python":
            with jit_off():
                ours = load_tokenizer(path)
            assert ours.lattice.compiled is None
        else:
            ours = load_tokenizer(path)
            # made now, so that every text takes the compiled Viterbi (when numba is here)
            assert ours.lattice is None or (ours.lattice.compiled is not None) == jit.enabled()
        _PAIRS[name] = (ours, spm.SentencePieceProcessor(model_file=str(path)))
    return _PAIRS[name]


def _first_difference(ours: list[int], ref: list[int]) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, ref)) if a != b), min(len(ours), len(ref)))
    return f"first difference at token {at}: {ours[at:at + 5]} vs {ref[at:at + 5]}"


def test_known_ids():
    tok = load_tokenizer(mistral_model())
    assert tok.encode("Hello world!").ids == [22557, 1526, 28808]  # the shared tokenizer.json, without its BOS
    assert tok.decode([22557, 1526, 28808]) == "Hello world!"
    assert tok.encode_ids("🤗") == [28705, 243, 162, 167, 154]  # byte fallback


def test_lines_of_udhr2(pair):
    ours, ref = pair
    lines = corpus_lines(1 if FULL else 7)
    bad = [line for line in lines if ours.encode_ids(line) != ref.encode(line)]
    assert bad == [], f"{len(bad)} of {len(lines)} lines differ, first {bad[0][:60]!r}"


@pytest.mark.slow
@full_only
def test_whole_udhr2_as_one_text(pair):
    """One 5.7 MB sentence: sentencepiece's float32 scores, reset every 100000, matched exactly."""
    ours, ref = pair
    text = corpus("udhr2_all.txt", None)
    a, b = ours.encode_ids(text), ref.encode(text)
    assert a == b, _first_difference(a, b)


def test_a_long_text_as_one_sentence(pair):
    ours, ref = pair
    text = corpus("udhr2_all.txt", 300_000)
    a, b = ours.encode_ids(text), ref.encode(text)
    assert a == b, _first_difference(a, b)


@pytest.mark.parametrize("name", ["unigram-nmt", "unigram-identity"])
def test_a_long_text_on_a_freshly_loaded_model(sp_model, name):
    """A model's first long text takes the compiled Viterbi that fuses unknown runs itself (where
    numba is), before any line has loaded it: the library's ids."""
    path = sp_model(name)
    load_tokenizer(path).warm_up()  # the kernels in the process, as in the window: no plain path first
    text = corpus("udhr2_all.txt", 300_000)
    assert load_tokenizer(path).encode_ids(text) == spm.SentencePieceProcessor(model_file=str(path)).encode(text)


def test_test_plans_samples(pair):
    ours, ref = pair
    samples = sorted({s for _, s, _ in load_test_plans()})
    assert [s for s in samples if ours.encode_ids(s) != ref.encode(s)] == []


def _code_point_texts(step: int) -> list[str]:
    cps = [c for c in range(1, 0x110000, step) if not 0xD800 <= c < 0xE000]
    chunks = [cps[i : i + 48] for i in range(0, len(cps), 48)]
    out = []
    for chunk in chunks:
        chars = [chr(c) for c in chunk]
        out.append("".join(chars))
        out.append(" ".join(chars))
    return out


def test_code_points(pair):
    """Every 37th code point (every one with TOKVIZ_FULL_PARITY=1), side by side and apart."""
    ours, ref = pair
    texts = _code_point_texts(1 if FULL else 37)
    bad = [t for t in texts if ours.encode_ids(t) != ref.encode(t)]
    assert bad == [], f"{len(bad)} texts differ, first {bad[0][:20]!r}"
    wrong = [t for t in texts[::7] if ours.decode(ref.encode(t)) != ref.decode(ref.encode(t))]
    assert wrong == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(text=unicode_text())
def test_generated_unicode(pair, text):
    ours, ref = pair
    ids = ref.encode(text)
    assert ours.encode_ids(text) == ids
    assert ours.encode(text).ids == ids  # the spans path handles unknowns on its own
    assert ours.decode(ids) == ref.decode(ids)


def test_decoding_any_ids(pair):
    """Random id sequences (control, unknown and byte pieces among them) decode as the library does."""
    ours, ref = pair
    rng = random.Random(7)
    n = ref.get_piece_size()
    for _ in range(2000):
        ids = [rng.randrange(n) if rng.random() < 0.7 else rng.randrange(min(n, 300)) for _ in range(rng.randrange(9))]
        assert ours.decode(ids) == ref.decode(ids), ids


def test_spans_and_tokens(pair):
    ours, _ = pair
    text = "  Ünïcödé  ``quoted''\tﬁne ½ — x 🤗  "
    enc = ours.encode(text)
    assert all(0 <= a <= b <= len(text) for a, b in enc.spans)
    assert [s[0] for s in enc.spans] == sorted(s[0] for s in enc.spans)
    assert enc.tokens == [ours.token_bytes(i) for i in enc.ids]
