"""A SentencePiece encoding's columns made in numpy for many pieces (from `columns.MANY_PIECES`
on): the same ids, tokens, spans, unknown pieces and dropped stretches as the loop that makes them
for a few pieces, with byte fallback (Mistral) and with runs of unknowns fused
(a Unigram model without byte fallback), on text the models mostly do not know."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.formats.sentencepiece.spm_helpers import mistral_model
from tests.real_tokenizers import corpus
from tokviz.core.encoding import uncovered
from tokviz.core.formats.sentencepiece import columns
from tokviz.core.loading import load_tokenizer

FIELDS = ("ids", "tokens", "spans", "unknown", "dropped")


def _fields(tok, text: str) -> tuple:
    enc = tok.encode(text)
    return tuple(list(getattr(enc, f)) for f in FIELDS)


@pytest.mark.parametrize("which", ["mistral", "unigram-nmt"])
def test_many_pieces_in_numpy_equal_the_loop(which, sp_model, monkeypatch):
    spm = pytest.importorskip("sentencepiece")
    path = mistral_model() if which == "mistral" else sp_model(which)
    tok = load_tokenizer(path)
    # many scripts, tabs, runs of spaces and control characters the normalizer drops, a space at the end
    text = corpus("udhr2_all.txt", 60_000).replace("\n", " \t  \x01\n", 50) + " "
    fast = _fields(tok, text)
    assert len(fast[0]) >= 4 * columns.MANY_PIECES
    assert fast[0] == spm.SentencePieceProcessor(model_file=str(path)).encode(text)
    # unknown characters met: as their bytes' pieces (Mistral's <0x00>-<0xFF> are ids 3-258), or fused runs
    assert set(fast[0]) & set(range(3, 259)) if which == "mistral" else fast[3]
    monkeypatch.setattr(columns, "MANY_PIECES", 10**9)
    assert _fields(load_tokenizer(path), text) == fast


@settings(max_examples=200, deadline=None)
@given(spans=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12)), min_size=1, max_size=40),
       extra=st.integers(0, 5))
def test_span_gaps_are_the_uncovered_stretches(spans, extra):
    """Spans in any order, overlapping, nested, empty: the gaps `uncovered` finds in them sorted."""
    starts = [a for a, _ in spans]
    ends = [a + n for a, n in spans]
    length = max(ends) + extra
    assert columns.span_gaps(starts, ends, length) == uncovered(sorted(zip(starts, ends)), length)


def test_spans_through_the_line_kernel_equal_the_word_path():
    """With the compiled merge loaded, an encoding's pieces come from the line kernel's raw ids
    (`SpBpe.compiled_ids(raw=True)`): the same fields as without kernels, bytes and all."""
    from tests.jit_switch import jit_off

    pytest.importorskip("numba")
    tok = load_tokenizer(mistral_model())
    if tok.bpe.compiled() is None:
        pytest.skip("compiled kernels off here")
    with jit_off():
        plain = load_tokenizer(mistral_model())
    text = corpus("udhr2_all.txt", 60_000)
    for t in (text[:2000], text):
        assert _fields(tok, t) == _fields(plain, t)
    for either in (tok, plain):  # a lone surrogate has no bytes to fall back to, on either path
        with pytest.raises(UnicodeEncodeError):
            _fields(either, text + " a\ud800b ")
