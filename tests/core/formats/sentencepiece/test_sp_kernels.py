"""The compiled Unigram Viterbi (`tokviz.core.unigram.encoder.kernels`, numba) against the plain
one and the slow oracle: same ids and ends on whole texts, through resets and exact ties; and
the switch between the two paths (`tokviz.core.jit`), including a bare install without numba."""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.formats.sentencepiece.spm_helpers import tied_lattice
from tests.core.formats.sentencepiece.viterbi_oracle import exact_oracle
from tests.jit_switch import jit_off
from tests.real_tokenizers import corpus, unicode_text
from tokviz.core import jit
from tokviz.core.errors import EncodeError
from tokviz.core.loading import load_tokenizer
from tokviz.core.unigram.encoder.lattice import F32_SP, PieceLattice, absolute_ends

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def both(sp_model):
    """(compiled, plain) tokenizers of the same nmt_nfkc Unigram model."""
    path = sp_model("unigram-nmt")
    fast = load_tokenizer(path)
    with jit_off():
        plain = load_tokenizer(path)
    assert fast.lattice.compiled is not None and plain.lattice.compiled is None
    return fast, plain


def _compiled_copy(lattice: PieceLattice) -> PieceLattice:
    """`lattice`'s pieces and scores in a lattice with the compiled Viterbi."""
    from tokviz.core.unigram.encoder.kernels import CompiledPieces

    out = PieceLattice.__new__(PieceLattice)
    out.__dict__.update(lattice.__dict__)
    out.compiled = CompiledPieces(lattice.ids, lattice.score_of, lattice.unk_score, f32=True)
    return out


def test_the_switch_and_the_status_line(monkeypatch):
    from importlib.metadata import version

    assert jit.enabled()
    assert jit.status() == f"{version('numba')}, compiled kernels on"
    with jit_off():
        assert not jit.enabled()
        assert jit.status().endswith("switched off (TOKVIZ_JIT=0)")
    assert jit.enabled()
    monkeypatch.setattr(jit, "_numba_ok", False)
    assert jit.status().endswith("does not load here (plain Python paths)")


def test_a_long_text_with_resets(both):
    """300 KB of udhr2 as one sentence (the accumulated score passes +-100000 many times)."""
    fast, plain = both
    norm = fast.normalize(corpus("udhr2_all.txt", 300_000))
    ids, seg_ends = fast.lattice.best_segments(norm)
    ref_ids, ref_ends = plain.lattice.best_segments(norm)
    assert ids == ref_ids
    assert absolute_ends(seg_ends) == absolute_ends(ref_ends)
    assert fast.lattice.best_path(norm[:5000]) == plain.lattice.best_path(norm[:5000])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exact_ties_through_resets_equal_the_oracle(seed):
    """Float32 ties that resolve differently at large accumulated scores: the slow oracle's path."""
    lattice = _compiled_copy(tied_lattice())
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcx") for _ in range(rng.randrange(1, 9))) for _ in range(14_000)]
    text = "\u2581" + "\u2581".join(words)
    ids, ends, _ = exact_oracle(lattice, text, 0.0)
    assert lattice.best_path(text) == (list(ids), list(ends))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=unicode_text())
def test_generated_unicode(both, text):
    fast, plain = both
    norm = fast.normalize(text)
    assert fast.lattice.best_path(norm) == plain.lattice.best_path(norm)
    assert fast.encode_ids(text) == plain.encode_ids(text)
    assert fast.encode(text).spans == plain.encode(text).spans


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="\u2581abcx\U0001F600", max_size=60))
def test_small_alphabet_against_the_oracle(text):
    lattice = _compiled_copy(tied_lattice())
    ids, ends, _ = exact_oracle(lattice, text, 0.0)
    assert lattice.best_path(text) == (list(ids), list(ends))


def _astral_lattice() -> PieceLattice:
    """Pieces that start with characters beyond U+FFFF, beside pieces of the BMP: the root's
    children come from its array (`root_children`) for the BMP, from the hash table past it."""
    scores = {"\u2581": -1.0, "a": -3.0, "b": -3.5, "\U0001F600": -2.0, "\U0001F600a": -2.5, "a\U0001F600": -2.75,
              "\U0001F600\U0001F600": -3.25, "\uffffb": -1.5, "\u2581a": -2.0, "b\U0001F600a": -1.25}
    pieces = ["<unk>", *scores]
    with jit_off():
        plain = PieceLattice(pieces, [0.0, *scores.values()], mode=F32_SP, edge_ids=range(1, len(pieces)), unk_id=0)
    return _compiled_copy(plain)


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="\u2581ab\uffff\U0001F600\U0001F601", max_size=60))
def test_pieces_past_the_bmp_against_the_oracle(text):
    from tokviz.core.unigram.encoder.kernels import ROOT_CHARS, root_children

    lattice = _astral_lattice()
    root = root_children(lattice.compiled.table)
    assert len(root) == ROOT_CHARS and root[ord("a")] >= 0 and root[0xFFFF] >= 0 and root[ord("c")] == -1
    ids, ends, _ = exact_oracle(lattice, text, 0.0)
    assert lattice.best_path(text) == (list(ids), list(ends))


def test_empty_text_and_unknown_characters():
    pieces = ["\u2581", "a", "ab"]
    lat = PieceLattice(pieces, [-1.0, -2.0, -2.5], mode=F32_SP, unk_id=None)
    assert lat.compiled is not None
    assert lat.best_path("") == ([], [])
    assert lat.best_path("\u2581ab") == ([0, 2], [1, 3])
    with pytest.raises(EncodeError, match="unknown character"):
        lat.best_path("\u2581abz")
    lat = PieceLattice(pieces, [-1.0, -2.0, -2.5], mode=F32_SP, unk_id=7)
    assert lat.best_path("z\u2581a") == ([-1, 0, 1], [1, 2, 3])
    assert lat.compiled.whole_pieces(["ab", "\u2581a", "", "a"], [2, 0, 0, 1]).tolist() == [True, False, False, True]


def test_unreachable_pieces_both_ways(both, tmp_path):
    """The glitch finder's check, all pieces at once (compiled) and one by one (plain)."""
    from tests.core.formats.sentencepiece.spm_helpers import write_model
    from tokviz.core.explain.unigram import unreachable_pieces

    fast, plain = both
    assert unreachable_pieces(fast) == unreachable_pieces(plain)
    pieces = [("<unk>", 0.0, "unknown"), ("\u2581", -1.0, "normal"), ("a", -1.0, "normal"), ("b", -1.0, "normal"),
              ("ab", -5.0, "normal"), ("\u2581a", -1.5, "normal"), ("\uff41", -1.0, "normal")]
    charsmap = fast.proto.normalizer.precompiled_charsmap  # the trained model's nmt_nfkc: maps "ａ" to "a"
    path = write_model(tmp_path / "m.model", pieces, normalizer={"name": "nmt_nfkc", "precompiled_charsmap": charsmap})
    fast = load_tokenizer(path)
    with jit_off():
        plain = load_tokenizer(path)
    assert fast.lattice.compiled is not None and plain.lattice.compiled is None
    assert unreachable_pieces(fast) == unreachable_pieces(plain) == [(4, "viterbi"), (6, "normalized")]


def test_a_bare_install_without_numba(monkeypatch, sp_model):
    """numba missing (or failing to import): the plain path, same ids."""
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError
    monkeypatch.setattr(jit, "_numba_ok", None)
    assert not jit.enabled()
    import importlib.metadata

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert jit.status() == "not installed (plain Python paths)"
    tok = load_tokenizer(sp_model("unigram-nmt"))
    assert tok.lattice.compiled is None
    spm = pytest.importorskip("sentencepiece")
    text = corpus("udhr2_all.txt", 20_000)
    assert tok.encode_ids(text) == spm.SentencePieceProcessor(model_file=str(sp_model("unigram-nmt"))).encode(text)


def test_kernels_that_cannot_load_leave_the_plain_path(monkeypatch, sp_model):
    """numba imports but the kernel module fails (no cache location, say): the plain path."""
    import importlib

    real = importlib.import_module

    def failing(name, *a):
        if name.endswith(".kernels"):
            raise RuntimeError("cannot cache function: no locator available")
        return real(name, *a)

    monkeypatch.setattr(jit, "_numba_ok", None)
    monkeypatch.setattr(jit.importlib, "import_module", failing)
    tok = load_tokenizer(sp_model("unigram-nmt"))
    assert tok.lattice.compiled is None and not jit.enabled()
    spm = pytest.importorskip("sentencepiece")
    text = corpus("udhr2_all.txt", 5_000)
    assert tok.encode_ids(text) == spm.SentencePieceProcessor(model_file=str(sp_model("unigram-nmt"))).encode(text)


LOADS_WHEN_IT_PAYS = """
import sys
from tokviz.core.loading import load_tokenizer
from tokviz.core.unigram.encoder import lattice

tok = load_tokenizer(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
plain = tok.encode_ids(text)
print("numba" in sys.modules)
lattice.COMPILE_MIN = len(text) + 1  # the next text brings the plain path's characters there
again = load_tokenizer(sys.argv[1]).encode_ids(text)
print("numba" in sys.modules, lattice.KERNELS in sys.modules, again == plain)
"""


def test_numba_is_loaded_once_the_plain_path_has_cost_as_much(sp_model, tmp_path):
    """A process that encodes one text shorter than `COMPILE_MIN` never imports numba; the text
    that brings the plain path's characters to it takes the compiled Viterbi, with the same ids;
    `warm_up` (the window's, after loading) loads it at once."""
    import os
    import subprocess

    from tests.conftest import ROOT

    text = tmp_path / "text.txt"
    text.write_text(corpus("udhr2_all.txt", 20_000), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TOKVIZ_JIT"}
    out = subprocess.run([sys.executable, "-c", LOADS_WHEN_IT_PAYS, str(sp_model("unigram-nmt")), str(text)],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True).stdout.split("\n")
    assert out[:2] == ["False", "True True True"]
    warm = ("import sys; from tokviz.core.loading import load_tokenizer; from tokviz.core.unigram.encoder import lattice;"
            "tok = load_tokenizer(sys.argv[1]); tok.encode_ids('a few words'); print(lattice.KERNELS in sys.modules);"
            "tok.warm_up(); print(lattice.KERNELS in sys.modules)")
    out = subprocess.run([sys.executable, "-c", warm, str(sp_model("unigram-nmt"))], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout.split()
    assert out == ["False", "True"]  # the window's warm-up loads them while idle


def test_unknowns_on_the_compiled_arrays_with_and_without_byte_fallback(tmp_path):
    """The compiled Viterbi's ids go through the unknown handling as arrays: sentencepiece's ids
    on a multilingual text a small model mostly does not know, bytes or fused runs."""
    import io

    from tests.core.formats.sentencepiece.spm_helpers import corpus_lines

    spm = pytest.importorskip("sentencepiece")
    text = corpus("udhr2_all.txt", 30_000)
    for fallback in (False, True):
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus_lines(400)), model_writer=out, vocab_size=600,
                                       model_type="unigram", byte_fallback=fallback, character_coverage=0.98,
                                       minloglevel=2, num_threads=1)
        path = tmp_path / f"m{fallback}.model"
        path.write_bytes(out.getvalue())
        sp = spm.SentencePieceProcessor(model_file=str(path))
        ref = sp.encode(text)
        assert any(3 <= i < 259 for i in ref) if fallback else 0 in ref  # byte pieces / <unk> met
        fast = load_tokenizer(path)
        assert fast.lattice.compiled is not None
        with jit_off():
            plain = load_tokenizer(path)
        assert fast.encode_ids(text) == plain.encode_ids(text) == ref
        assert fast.encode(text).ids == ref
        lines = text.split("\n")[:300]  # one call a line: short texts, runs of unknowns fused in the kernel
        assert [fast.encode_ids(line) for line in lines] == list(map(sp.encode, lines))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="\u2581abcz\U0001F600\U0001F601", max_size=60))
def test_unknown_runs_fused_in_the_kernel_equal_the_unknown_handling(text):
    """`CompiledPieces.fused_ids`: the best path with each run of unknown characters as the
    unknown id, as `resolve_unknowns` makes it from the path's ids (c, z and U+1F601 are no piece)."""
    from tokviz.core.formats.sentencepiece.unknown_ids import resolve_unknowns

    lattice = _astral_lattice()
    ids, ends = lattice.best_path(text)
    want = resolve_unknowns(text, ids, ends, unknown={0}, unk_id=0, byte_ids=None)
    assert lattice.compiled.fused_ids(text, 0).tolist() == want
