"""Unigram models with scores at the edges of floating point: the compiled (numba) and plain
Viterbis never crash and give the ids `tokenizers` and `sentencepiece` give.

A tokenizer.json whose scores are -1e308 is legal JSON; two of them add up to -inf, and a node
whose every candidate is -inf must still take its first candidate (both libraries mark a node
"set", they do not compare with -inf). The cases: -1e308 and -DBL_MAX, denormals, equal scores,
sums that overflow to +-inf (and inf - inf = NaN), float32 scores of a ``.model`` that overflow to
-inf when added, big vocabularies; scores a file cannot hold (NaN, infinities, -1e39 in a
``.model``) are refused with one line, as the libraries refuse them. The kernels also run under
``NUMBA_BOUNDSCHECK=1`` over hypothesis-generated models in a child process, and the window
opens the -1e308 file and encodes with it."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.unigram_extremes import (
    DBL_MAX,
    FLT_MAX,
    check_hf,
    check_sp,
    check_trainer_lattices,
    hf_json,
    hf_vocabs,
    long_texts,
    many_segments_case,
    sp_bytes,
    sp_pieces,
    texts,
    trainer_scores,
)
from tokviz.core.unigram.compiled import load_kernels

pytest.importorskip("numba")
tokenizers = pytest.importorskip("tokenizers")
sentencepiece = pytest.importorskip("sentencepiece")

ROOT = Path(__file__).resolve().parents[2]
HYPOTHESIS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _vocab(*scores: float) -> list[tuple[str, float]]:
    """``<unk>`` (score 0) and the pieces a, aa, aaa, b with `scores`."""
    return [("<unk>", 0.0), *zip(["a", "aa", "aaa", "b"], scores)]


def _run_cli(*args: str, jit: bool) -> subprocess.CompletedProcess:
    """``tokviz ARGS`` in a child process (a segfault there is a failed test, not a dead run)."""
    env = {**os.environ, "TOKVIZ_JIT": "1" if jit else "0"}
    return subprocess.run([sys.executable, "-m", "tokviz", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)


@pytest.mark.parametrize("jit", [True, False], ids=["compiled", "plain"])
def test_the_minus_1e308_file_gives_the_ids_of_tokenizers_in_the_cli(tmp_path, jit):
    path = tmp_path / "tokenizer.json"
    d = hf_json(_vocab(-1e308, -1e308, -1e308, -1e308))
    path.write_text(json.dumps(d), encoding="utf-8")
    want = tokenizers.Tokenizer.from_file(str(path)).encode("aaaa").ids
    assert want == [1, 3]  # a + aaa: the first candidate of node 4 (every sum there is -inf)
    got = _run_cli("encode", "--ids", str(path), "aaaa", jit=jit)
    assert (got.returncode, got.stdout.split(), got.stderr) == (0, [str(i) for i in want], "")


@pytest.mark.parametrize("scores, text", [
    ((-1e308, -1e308, -1e308, -1e308), "aaaa"),
    ((-1e308, -1e308, -1e308, -1e308), "aaaaaaab"),
    ((-DBL_MAX, -DBL_MAX, -DBL_MAX, 0.0), "aaaaba"),
    ((-1e308, -1.0, -1e308, -1e308), "aaaaaaa"),
    ((5e-324, 5e-324, 5e-324, -5e-324), "aaaaab"),  # denormals
    ((0.0, 0.0, 0.0, 0.0), "aaaaaaa"),  # equal scores: the earliest start wins
    ((1e308, 1e308, -1e308, 1e308), "aaaaaa"),  # +inf sums, and +inf + -inf = NaN on the way
    ((DBL_MAX, -DBL_MAX, DBL_MAX, -DBL_MAX), "aabaaab"),
])
def test_tokenizer_json_extremes_match_tokenizers(scores, text):
    check_hf(_vocab(*scores), text)


def test_an_unknown_character_scored_below_minus_1e308():
    # the unknown edge scores min - 10 = -1e308 (-DBL_MAX - 10 too): sums of it are -inf
    for low in (-1e308, -DBL_MAX):
        assert check_hf([("<unk>", low), ("a", low), ("aa", low)], "aaxaax\u00e9aa")


@pytest.mark.parametrize("scores, text", [
    ((-3e38, -3e38, -3e38, -3e38), "aaaa aaaa"),  # float32 sums overflow to -inf
    ((-FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX), "aaaaaaab"),
    ((-1.7e38, -1.7e38, -1e5, -1.7e38), "aaaaaaa"),
    ((1e-45, -1e-45, 1e-45, 0.0), "aaaaab"),  # float32 denormals
    ((0.0, 0.0, 0.0, 0.0), "aaaaaaa"),
    ((FLT_MAX, FLT_MAX, -FLT_MAX, FLT_MAX), "aaaaaa"),  # +inf sums, then inf - inf at a reset
    ((-100000.0, -99999.99, -100000.01, -5e4), "aaaa aaaa aaaa"),  # around the reset threshold
])
def test_sentencepiece_extremes_match_sentencepiece(scores, text):
    check_sp([("<unk>", 0.0, "unknown"), *((p, s, "normal") for p, s in zip(["a", "aa", "aaa", "b"], scores))],
             text.replace(" ", "\u2581"))


@pytest.mark.parametrize("score", [-1e39, float("-inf"), float("inf"), float("nan")])
def test_scores_the_libraries_refuse_are_one_line(tmp_path, score):
    """-1e39 is float32 -inf once stored in a .model (in a tokenizer.json it is an ordinary double);
    sentencepiece refuses NaN and infinite scores, and tokenizers' JSON reader refuses non-finite
    numbers (Python's reads them: tokviz refuses them)."""
    model = tmp_path / "m.model"
    model.write_bytes(sp_bytes([("<unk>", 0.0, "unknown"), ("a", score, "normal"), ("aa", -1.0, "normal")]))
    with pytest.raises(Exception):
        sentencepiece.SentencePieceProcessor(model_file=str(model))
    targets = [model]
    if score == -1e39:
        check_hf(_vocab(score, -1.0, score, -1.0), "aaaaa")
    else:
        targets.append(tmp_path / "tokenizer.json")
        targets[-1].write_text(json.dumps(hf_json(_vocab(score, -1.0, -1.0, -1.0))), encoding="utf-8")
    for target in targets:
        got = _run_cli("encode", "--ids", str(target), "aaaa", jit=True)
        assert got.returncode == 2 and got.stdout == "", got
        lines = got.stderr.strip().splitlines()
        assert len(lines) == 1 and "score" in lines[0] and "Traceback" not in got.stderr, got.stderr


def test_big_vocabularies_with_extreme_scores_match_both_libraries():
    rng = random.Random(7)
    alphabet = "ab\u00e9\U0001d51e"
    extremes = [-1e308, -DBL_MAX, 5e-324, 0.0, -1.0]
    pieces = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(30_000)})
    text = "".join(rng.choice(alphabet) for _ in range(3_000))
    check_hf([("<unk>", -1.0), *((p, rng.choice(extremes + [rng.uniform(-20, 0)])) for p in pieces)], text)
    f32 = [-3e38, -FLT_MAX, 1e-45, 0.0, -1.0, -1e5]
    sp = [("<unk>", 0.0, "unknown"), *((p, rng.choice(f32 + [rng.uniform(-20, 0)]), "normal") for p in pieces)]
    check_sp(sp, " ".join(text[i:i + 40] for i in range(0, len(text), 40)).replace(" ", "\u2581"))


@HYPOTHESIS
@given(vocab=hf_vocabs(), text=st.text(alphabet="ab\u00e9\U0001d51e", min_size=1, max_size=24))
def test_generated_tokenizer_json_models_match_tokenizers(vocab, text):
    check_hf(vocab, text)


@HYPOTHESIS
@given(pieces=sp_pieces(), text=texts)
def test_generated_sentencepiece_models_match_sentencepiece(pieces, text):
    check_sp(pieces, text)


@pytest.mark.parametrize("seed", range(12))
def test_many_segments_with_extreme_scores_match_sentencepiece(seed):
    """Long texts take the plain path's cached segments, batches and scan; with float32 scores
    near FLT_MAX a reset can make inf - inf = NaN, which then holds to the end of the text (every
    node keeps its first candidate): seed 2 does."""
    check_sp(*many_segments_case(seed))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=sp_pieces(), text=long_texts())
def test_generated_sentencepiece_models_on_long_texts_match_sentencepiece(pieces, text):
    check_sp(pieces, text)


@HYPOTHESIS
@given(words=st.lists(st.text(alphabet="abc", min_size=1, max_size=8), min_size=1, max_size=6),
       extra=st.lists(st.text(alphabet="abc", min_size=2, max_size=4), max_size=8, unique=True), data=st.data())
def test_trainer_kernels_take_extreme_scores_as_numpy_does(words, extra, data):
    if load_kernels() is None:
        pytest.skip("the compiled trainer is off here (TOKVIZ_JIT=0)")
    pieces = list(dict.fromkeys(["a", "b", "c", *extra]))
    check_trainer_lattices(words, pieces, [data.draw(trainer_scores) for _ in pieces])


def test_kernels_under_numba_boundscheck(tmp_path):
    """Every index a kernel reads is checked (numba compiles the checks in when NUMBA_BOUNDSCHECK
    is set before it compiles: a child process with its own, empty, cache): hypothesis-generated
    models of both formats and trainer lattices, against the plain paths and the libraries."""
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "TOKVIZ_JIT": "1"}
    # the parent's options (CI's --randomly-seed) belong to plugins the child turns off
    env.pop("PYTEST_ADDOPTS", None)
    got = subprocess.run([sys.executable, "-m", "tests.hostile.unigram_extremes", "20"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=280)
    assert got.returncode == 0 and got.stdout.strip().endswith("ok"), got.stdout[-3000:] + got.stderr[-3000:]


def test_opening_the_minus_1e308_file_keeps_the_window(window, qtbot, dialogs, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(hf_json(_vocab(-1e308, -1e308, -1e308, -1e308))), encoding="utf-8")
    window.corpus_panel.set_text("the user's corpus")
    dialogs.open_answer = str(path)
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    tv = window.token_view_panel
    tv.set_text("aaaa")
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    assert list(tv.result.rows[0].encoding.ids) == [1, 3]
    assert window.corpus_panel.text() == "the user's corpus" and dialogs.errors == []


def test_the_segmentations_view_explains_the_minus_1e308_model():
    """The explainer sums scores as integers of 2**-20 nat: -1e308 is shown at -1e12 nat (no
    overflow), and its best segmentation is still the encoder's."""
    from tokviz.core.explain.unigram import SCORE_LIMIT, UnigramExplainer
    from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

    explainer = UnigramExplainer(HfTokenizer.from_json(hf_json(_vocab(-1e308, -1e308, -1e308, -1e308))))
    got = explainer.explain("aaaa")
    assert got.best.ids == (1, 3) and got.best.log_prob == -2 * SCORE_LIMIT
    assert 0.0 < got.best.prob <= 1.0 and all(e.score == -SCORE_LIMIT * 2**20 for e in got.edges)
    assert explainer.sample("aaaa", rng=1).ids in {s.ids for s in explainer.nbest("aaaa", 10)}


def test_merge_kernels_under_numba_boundscheck(tmp_path):
    """The compiled merge loops of tiktoken-style BPE, SentencePiece BPE and SuperBPE's second stage, with every
    index checked: their property tests (random vocabularies, bytes, Unicode, corpora) against the
    plain loops, in a child process whose empty cache makes numba compile the checks in."""
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "TOKVIZ_JIT": "1"}
    # the parent's options (CI's --randomly-seed) belong to plugins the child turns off
    env.pop("PYTEST_ADDOPTS", None)
    tests = ["tests/core/bpe/test_compiled_merge.py::test_compiled_equals_the_one_chunk_loop_on_bytes",
             "tests/core/bpe/test_compiled_merge.py::test_compiled_equals_the_one_chunk_loop_on_random_vocabularies",
             "tests/core/bpe/test_compiled_merge.py::test_long_pieces_and_the_heap_loop_mix_in_order",
             "tests/core/bpe/test_compiled_merge.py::test_chunk_ids_equal_the_one_chunk_loop_on_random_vocabularies",
             "tests/core/bpe/test_compiled_merge.py::test_chunk_ids_leave_long_chunks_and_lone_surrogates_to_the_caller",
             "tests/core/superbpe/test_stage_two_kernels.py::test_compiled_merge_equals_numpy_merge",
             "tests/core/formats/sentencepiece/test_sp_score_kernels.py::test_compiled_equals_merge_word_on_random_vocabularies",
             "tests/core/formats/sentencepiece/test_sp_score_kernels.py::test_line_kernel_equals_merge_word_on_random_vocabularies",
             "tests/core/formats/sentencepiece/test_sp_score_kernels.py::"
             "test_the_line_kernel_leaves_long_parts_and_lone_surrogates_to_the_word_path"]
    got = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                          "-n", "0", *tests], cwd=ROOT, env=env, capture_output=True, text=True, timeout=280)
    assert got.returncode == 0 and " passed" in got.stdout, got.stdout[-3000:] + got.stderr[-3000:]
