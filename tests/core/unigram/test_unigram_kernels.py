"""The compiled Unigram trainer path (`tokviz.core.unigram.compiled`, numba) against the numpy path
(`tokviz.core.unigram.lattice`): substring numbers, expected counts, log Z, Viterbi counts with their
tie rule, alternatives and pruning, on random lattices; the log-space fallback for improbable words;
the fallback to numpy when the kernels are off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.jit_switch import jit_off
from tokviz.core.unigram import compiled as compiled_module
from tokviz.core.unigram.compiled import CompiledLattices, load_kernels, make_lattices
from tokviz.core.unigram.lattice import Lattices
from tokviz.core.unigram.trainer import UnigramTrainer, string_ranks, substrings

KERNELS = load_kernels()
ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(KERNELS is None, reason="numba is not installed here (the compiled path is off)")
HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def both(words: list[str], pieces: list[str]) -> tuple[Lattices, CompiledLattices]:
    """The lattices of `words` over `pieces`, numpy and compiled."""
    index = {p: i for i, p in enumerate(pieces)}
    rows = [(k, i, j, index[w[i:j]]) for k, w in enumerate(words)
            for i in range(len(w)) for j in range(i + 1, len(w) + 1) if w[i:j] in index]
    lat, start, end, piece = (np.array(c, dtype=np.int64) for c in zip(*rows))
    lengths = np.array([len(w) for w in words])
    return Lattices(lengths, lat, start, end, piece), make_lattices(KERNELS, lengths, lat, start, end, piece)


def by_stretch(rows) -> list[tuple]:
    """Alternative rows as sorted (k, start, end, piece) tuples (their order is free between stretches)."""
    return sorted(zip(*(r.tolist() for r in rows)))


words_st = st.dictionaries(st.text(alphabet="abcd", min_size=1, max_size=9), st.integers(1, 5), min_size=1, max_size=8)


@HYPOTHESIS
@given(words=words_st, extra=st.lists(st.text(alphabet="abcd", min_size=2, max_size=4), max_size=12, unique=True),
       raw=st.lists(st.integers(1, 40), min_size=16, max_size=16), grid=st.sampled_from([1.0, 4.0, 2.0 ** 20]))
def test_compiled_lattices_match_numpy(words, extra, raw, grid):
    pieces = list(dict.fromkeys(["a", "b", "c", "d", *extra]))
    logp = np.log(np.array([raw[i % 16] + i for i in range(len(pieces))], dtype=float))
    logp -= np.log(np.exp(logp).sum())
    weights = np.array(list(words.values()), dtype=float)
    plain, compiled = both(list(words), pieces)
    counts, z = compiled.e_step(logp, weights, len(pieces))
    ref_counts, ref_z = plain.e_step(logp, weights, len(pieces))
    assert counts == pytest.approx(ref_counts, rel=1e-12, abs=1e-300)
    assert z == pytest.approx(ref_z, rel=1e-12, abs=1e-12)
    # Viterbi on a coarse grid (many exact ties): the same segmentation, so the same counts
    q = np.rint(logp * grid) / grid
    z2, freq = compiled.log_z_and_freq(logp, q, weights, len(pieces))
    ref_z2, ref_freq = plain.log_z_and_freq(logp, q, weights, len(pieces))
    assert np.array_equal(freq, ref_freq)
    assert z2 == pytest.approx(ref_z2, rel=1e-12, abs=1e-12)
    # alternatives of every multi-character piece, where it first occurs
    occ = {}
    for k, w in enumerate(words):
        for i in range(len(w)):
            for j in range(i + 2, len(w) + 1):
                occ.setdefault(w[i:j], (k, i))
    idx = [pieces.index(p) for p in pieces if p in occ]
    if idx:
        args = (np.array([occ[pieces[i]][0] for i in idx]), np.array([occ[pieces[i]][1] for i in idx]),
                np.array([len(pieces[i]) for i in idx]), q)
        assert by_stretch(compiled.alternatives(*args)) == by_stretch(plain.alternatives(*args))
    # pruning: the same lattices without some pieces
    keep = np.array([len(p) == 1 or i % 3 != 0 for i, p in enumerate(pieces)])
    small, ref_small = compiled.subset(keep), plain.subset(keep)
    lp = np.where(keep, logp, -np.inf)
    assert small.e_step(lp, weights, len(pieces))[0] == pytest.approx(
        ref_small.e_step(lp, weights, len(pieces))[0], rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("seed", range(6))
def test_two_halves_on_two_threads_give_one_batchs_answers(seed, monkeypatch):
    """Cut in two at a lattice boundary (forced here for small batches), the kernels' answers are
    the whole batch's: counts and log Z to rounding, Viterbi counts and alternatives exactly."""
    rng = np.random.default_rng(seed)
    words = ["".join(rng.choice(list("abcd"), size=int(rng.integers(1, 12)))) for _ in range(int(rng.integers(1, 30)))]
    words = list(dict.fromkeys(words))
    pieces = list(dict.fromkeys(["a", "b", "c", "d", *("".join(rng.choice(list("abcd"), size=3)) for _ in range(8)),
                                 *("".join(rng.choice(list("abcd"), size=2)) for _ in range(6))]))
    logp = np.log(rng.uniform(0.1, 1.0, len(pieces)))
    logp -= np.log(np.exp(logp).sum())
    q = np.rint(logp * 4) / 4
    weights = rng.integers(1, 5, len(words)).astype(float)
    _, one = both(words, pieces)
    monkeypatch.setattr(compiled_module, "THREAD_MIN_EDGES", 0)
    _, two = both(words, pieces)
    assert len(two.cuts) == (2 if len(words) > 1 else 1)
    c1, z1 = one.e_step(logp, weights, len(pieces))
    c2, z2 = two.e_step(logp, weights, len(pieces))
    assert c2 == pytest.approx(c1, rel=1e-13) and np.array_equal(z1, z2)
    assert all(np.array_equal(x, y) for x, y in zip(one.log_z_and_freq(logp, q, weights, len(pieces)),
                                                     two.log_z_and_freq(logp, q, weights, len(pieces))))
    multi = [i for i, p in enumerate(pieces) if len(p) > 1 and any(p in w for w in words)]
    where = [next((k, w.index(pieces[i])) for k, w in enumerate(words) if pieces[i] in w) for i in multi]
    args = (np.array([k for k, _ in where], dtype=np.int64), np.array([o for _, o in where], dtype=np.int64),
            np.array([len(pieces[i]) for i in multi], dtype=np.int64), q)
    if multi:
        assert by_stretch(one.alternatives(*args)) == by_stretch(two.alternatives(*args))
    keep = np.array([len(p) == 1 or i % 2 == 0 for i, p in enumerate(pieces)])
    assert np.array_equal(one.subset(keep).e_step(logp, weights, len(pieces))[1],
                          two.subset(keep).e_step(logp, weights, len(pieces))[1])


@pytest.mark.parametrize("fails_on", ["this thread", "the other thread"])
def test_a_kernel_error_on_either_core_reaches_the_caller(fails_on, monkeypatch):
    """A batch cut in two runs its halves on this thread and on a thread of its own: an error in
    either reaches the caller, after the other thread is joined."""
    import threading

    words, pieces = ["abcab", "cab", "abc", "bca"], ["a", "b", "c", "ab", "ca", "abc"]
    monkeypatch.setattr(compiled_module, "THREAD_MIN_EDGES", 0)
    _, lat = both(words, pieces)
    assert len(lat.cuts) == 2
    here = threading.current_thread()
    real = lat.k.e_step
    ran: list[bool] = []

    def e_step(*args):
        on_this = threading.current_thread() is here
        ran.append(on_this)
        if on_this == (fails_on == "this thread"):
            raise KeyError("kernel")
        return real(*args)

    monkeypatch.setattr(lat, "k", type("K", (), {"e_step": staticmethod(e_step)})())
    before = set(threading.enumerate())  # (other tests' threads may end meanwhile: only new ones count)
    logp = np.log(np.full(len(pieces), 1 / len(pieces)))
    with pytest.raises(KeyError, match="kernel"):
        lat.e_step(logp, np.ones(len(words)), len(pieces))
    assert sorted(ran) == [False, True]  # both halves ran, one on each thread
    assert set(threading.enumerate()) - before == set()  # the kernel thread was joined


def test_viterbi_ties_go_to_the_longest_last_piece():
    """"ab" + "c" and "a" + "bc" score the same: the segmentation whose last piece starts first wins."""
    pieces = ["a", "b", "c", "ab", "bc"]
    plain, compiled = both(["abc"], pieces)
    q = np.array([-1.0, -1.0, -1.0, -1.0, -1.0])
    _, freq = compiled.log_z_and_freq(q, q, np.ones(1), len(pieces))
    assert freq.tolist() == [1, 0, 0, 0, 1]  # a + bc
    assert np.array_equal(freq, plain.log_z_and_freq(q, q, np.ones(1), len(pieces))[1])


def test_an_improbable_word_is_summed_in_log_space():
    """A word whose probability underflows doubles (1e-40 per character, 40 characters) still gets
    its counts and log Z: the kernel redoes it in log space."""
    word = "ab" * 20
    pieces = ["a", "b", "ab", "z"]
    logp = np.log(np.array([1e-40, 1e-40, 1e-40, 1.0 - 3e-40]))
    plain, compiled = both([word, "z"], pieces)
    weights = np.array([3.0, 1.0])
    counts, z = compiled.e_step(logp, weights, 4)
    ref_counts, ref_z = plain.e_step(logp, weights, 4)
    assert z[0] < -1000 and np.isfinite(z).all()
    assert z == pytest.approx(ref_z, rel=1e-12)
    assert counts == pytest.approx(ref_counts, rel=1e-9)
    assert compiled.log_z(logp) == pytest.approx(ref_z, rel=1e-12)


@HYPOTHESIS
@given(texts=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=12), m=st.integers(1, 6))
def test_compiled_substring_numbers_equal_numpys(texts, m):
    got, ref = substrings(texts, m, kernels=KERNELS), substrings(texts, m)
    assert all(np.array_equal(x, y) for x, y in zip(got[:4], ref[:4])) and got[4] == ref[4]
    assert_ordered_as_python(got)


def assert_ordered_as_python(got) -> None:
    """The trie's order of the distinct substrings is Python's string order."""
    lengths = np.zeros(int(got.lat.max()) + 1, dtype=np.int64)
    np.maximum.at(lengths, got.lat, got.end)  # every text's last substring ends at its end
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    first = np.unique(got.sid, return_index=True)[1]  # numbers are 0, 1, 2, ...
    at = offsets[got.lat[first]] + got.start[first]
    strings = [got.joined[a:b] for a, b in zip(at.tolist(), (at + got.end[first] - got.start[first]).tolist())]
    assert len(set(strings)) == len(strings)
    assert np.array_equal(string_ranks(strings, got.order), string_ranks(strings))


def test_the_substring_table_grows_as_it_fills():
    """Tens of thousands of distinct substrings (the table starts with 4,096 rows and doubles
    whenever it is half full), astral characters among them."""
    rng = np.random.default_rng(7)
    alphabet = np.array(list("abcdefghij\u00e9\u4e00\U0001f600"))
    texts = ["".join(rng.choice(alphabet, size=int(rng.integers(1, 40)))) for _ in range(2000)]
    got, ref = substrings(texts, 8, kernels=KERNELS), substrings(texts, 8)
    assert int(ref[0].max()) > 50_000
    assert all(np.array_equal(x, y) for x, y in zip(got[:4], ref[:4]))
    assert_ordered_as_python(got)


def test_a_trainer_takes_the_compiled_path_unless_it_is_off():
    words, counts = ["hug", "hugs", "pug", "pun", "bun"], [10, 5, 12, 4, 5]
    assert isinstance(UnigramTrainer(words, counts, target_pieces=8).lattice, CompiledLattices)
    with jit_off():
        plain = UnigramTrainer(words, counts, target_pieces=8)
        assert isinstance(plain.lattice, Lattices)
        ref = list(plain.rounds())
    got = list(UnigramTrainer(words, counts, target_pieces=8).rounds())
    assert [(r.pieces, r.scores, r.pruned, r.viterbi_tokens) for r in got] == \
        [(r.pieces, r.scores, r.pruned, r.viterbi_tokens) for r in ref]
    assert [r.log_likelihood for r in got] == pytest.approx([r.log_likelihood for r in ref], rel=1e-12)


WARM_UP_PROBE = """
import json, random, sys
from tests.jit_switch import jit_off
from tokviz.core.model_files import save_model
from tokviz.core.unigram import json_kernels, kernels
from tokviz.core.unigram.timeline import UnigramSettings, train_unigram, warm_up
ENTRY = [(kernels, n) for n in ("substring_table", "trie_preorder", "occurrences_of", "e_step", "log_z_and_freq",
                                "alternatives", "keep_edges")]
ENTRY += [(json_kernels, "int_list"), (json_kernels, "pruned_rows")]
signatures = lambda: {n: sorted(map(str, getattr(m, n).signatures)) for m, n in ENTRY}
with jit_off():
    small = train_unigram(UnigramSettings(vocab_size=12, seed_min_count=1), texts=["hug pug hug hugs bun"])
save_model(small, sys.argv[1])  # numba is loaded, its writing kernels are not: the json module writes it
before = signatures()
ok = warm_up()
warmed = signatures()
rng = random.Random(7)
words = ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 12))) for _ in range(6000)]
timeline = train_unigram(UnigramSettings(vocab_size=600), texts=[" ".join(words * 3)])  # two halves on two threads
save_model(timeline, sys.argv[1])
print(json.dumps([ok, before, warmed, signatures()]))
"""


def test_warm_up_loads_every_kernel_with_a_real_trainings_types(tmp_path):
    """`warm_up` (what the app runs when Unigram is chosen) leaves a real training and the save of
    its model nothing to load: in a fresh process, every kernel has its one signature afterwards and
    a real training (big enough for the two-thread halves) and its save add none."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", WARM_UP_PROBE, str(tmp_path / "m.json")], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    ok, before, warmed, after = json.loads(out.stdout)
    assert ok is True
    assert all(sigs == [] for sigs in before.values())
    assert all(len(sigs) == 1 for sigs in warmed.values()) and after == warmed


def test_warm_up_with_the_kernels_off_does_nothing():
    from tokviz.core.unigram.timeline import warm_up

    with jit_off():
        assert warm_up() is False
