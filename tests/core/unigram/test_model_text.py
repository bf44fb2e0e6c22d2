"""A Unigram model file written with the compiled text kernels (`model_file.json_text`) is, byte for
byte, the file the json module writes from `to_json`'s dict: for trained timelines (compiled and
plain), loaded ones, and rounds made of tuples; the kernels alone against ``json.dumps`` on random
numbers (the extremes of int64 included)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import shared_file
from tests.jit_switch import jit_off
from tokviz.core import jit
from tokviz.core.errors import TokvizError
from tokviz.core.io.json_stream import RawJSON, json_pieces
from tokviz.core.model_files import load_model, save_model
from tokviz.core.unigram.model_file import from_json, json_text, to_json
from tokviz.core.unigram.rounds import RoundColumns, UnigramRound
from tokviz.core.unigram.timeline import JSON_KERNELS, UnigramSettings, UnigramTimeline, train_unigram

pytestmark = pytest.mark.skipif(not jit.enabled(), reason="numba is not installed here (the compiled path is off)")
HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def kernels():
    return jit.kernels(JSON_KERNELS)


@pytest.fixture(autouse=True, scope="module")
def warmed():
    """The kernels loaded, as a training's warm-up leaves them: `json_text` uses them then."""
    kernels().warm()
    assert kernels().loaded()


def written(timeline: UnigramTimeline) -> tuple[bytes, bytes]:
    """(the json module's bytes, `json_text`'s bytes) of `timeline`."""
    return b"".join(json_pieces(to_json(timeline))), b"".join(json_text(timeline))


@HYPOTHESIS
@given(words=st.lists(st.text("abcé😀 ", min_size=1, max_size=9), min_size=1, max_size=30),
       vocab=st.integers(5, 40), specials=st.integers(0, 2))
def test_a_trained_model_is_written_as_the_json_module_writes_it(words, vocab, specials):
    settings_ = UnigramSettings(vocab_size=vocab + specials, seed_min_count=1,
                                special_tokens=[f"<s{i}>" for i in range(specials)])
    try:
        timeline = train_unigram(settings_, texts=[" ".join(words)])
    except TokvizError:  # a size the corpus cannot reach is refused: nothing to write
        return
    ours, reference = written(timeline)
    assert ours == reference
    assert from_json(json.loads(ours)).pieces() == timeline.pieces()


def test_tinyshakespeare_saved_loaded_and_saved_again(tmp_path):
    """The real model (70,000 pruned pieces with their alternatives): saved through the registry's
    writer, the same bytes as the json module's, and a loaded model writes itself back unchanged."""
    text = shared_file("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")
    timeline = train_unigram(UnigramSettings(vocab_size=8000), texts=[text])
    path = tmp_path / "m.json"
    save_model(timeline, path)
    assert path.read_bytes() == b"".join(json_pieces(to_json(timeline)))
    loaded = load_model(path)
    assert b"".join(json_text(loaded)) == path.read_bytes()
    with jit_off():  # the kernels off: the json module's path, the same bytes
        assert b"".join(json_text(loaded)) == path.read_bytes()


def test_rounds_of_tuples_take_the_json_modules_path():
    timeline = train_unigram(UnigramSettings(vocab_size=12, seed_min_count=1), texts=["hug pug hug hugs bun bun"])
    as_tuples = [UnigramRound(r.index, r.vocab_size, r.log_likelihood, r.em_log_likelihood, r.viterbi_tokens,
                              r.pruned, r.pieces, r.scores) for r in timeline.rounds]
    copy = UnigramTimeline(timeline.settings, as_tuples, timeline.corpus_length, timeline.n_chunks,
                           timeline.seed_size, timeline.finished)
    assert copy.id_of_index() is None
    assert b"".join(json_text(copy)) == b"".join(json_text(timeline))


def test_inconsistent_columns_take_the_json_modules_path():
    """Offsets that would send the kernel past its arrays are never given to it: the json module
    writes what the arrays say (its slices stop at their ends)."""
    timeline = train_unigram(UnigramSettings(vocab_size=12, seed_min_count=1), texts=["hug pug hug hugs bun bun"])
    last = timeline.rounds[-1]
    c = last.columns
    assert len(c.pruned)
    broken = RoundColumns(c.table, c.alive, c.scores, c.pruned, c.loss, c.freq, c.pruned_scores,
                          c.alt_offsets + 5, c.alt_pieces)
    timeline.rounds[-1] = UnigramRound(last.index, last.vocab_size, last.log_likelihood, last.em_log_likelihood,
                                       last.viterbi_tokens, columns=broken)
    ours, reference = written(timeline)
    assert ours == reference


@HYPOTHESIS
@given(values=st.lists(st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(-12, 12)), max_size=50))
def test_int_list_is_json(values):
    text = kernels().int_list(np.array(values, dtype=np.int64)).tobytes()
    assert text == _dumps(values).encode("ascii")


@HYPOTHESIS
@given(n=st.integers(0, 30), seed=st.integers(0, 2**32 - 1))
def test_pruned_rows_are_json(n, seed):
    rng = random.Random(seed)

    def some_int() -> int:
        return rng.choice([0, -1, 2**63 - 1, -2**63, rng.randint(-10**9, 10**9)])

    rows = [[some_int(), rng.choice([0.0, -0.0, 1e-300, -2.5e17, rng.uniform(-1e6, 1e6), float("inf"), float("nan")]),
             some_int(), some_int(), [some_int() for _ in range(rng.randint(0, 4))]] for _ in range(n)]
    ids, losses, freqs, scores, alts = (list(c) for c in zip(*rows)) if rows else ([], [], [], [], [])
    offsets = np.cumsum([0, *map(len, alts)]).astype(np.int64)
    zero = np.array([repr(x) == "0.0" for x in losses], dtype=np.bool_)
    loss_text = np.frombuffer(_dumps([x for x, z in zip(losses, zero) if not z])[1:-1].encode("ascii"), dtype=np.uint8)
    ints = [np.array(c, dtype=np.int64) for c in (ids, freqs, scores)]
    flat = np.array([a for alt in alts for a in alt], dtype=np.int64)
    text = kernels().pruned_rows(ints[0], zero, loss_text, ints[1], ints[2], offsets, flat).tobytes()
    assert text == _dumps(rows).encode("ascii")


def test_raw_json_in_a_dict_and_a_list():
    assert b"".join(json_pieces({"a": RawJSON(b"[1,2]"), "b": [RawJSON(b"3"), RawJSON(b"{}")]})) == \
        b'{"a":[1,2],"b":[3,{}]}'
