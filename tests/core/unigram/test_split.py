"""The lattices cut in two (the second half in a forked child) against one batch, bit for bit:
expected counts, log-likelihood, Viterbi, alternatives and pruning, with the child, without it, and
when the child dies halfway; and a whole training run through both paths."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import skip_unless_fork
from tokviz.core.processes.fork import can_fork
from tokviz.core.unigram import split as split_module
from tokviz.core.unigram.model_file import to_json
from tokviz.core.unigram.split import SplitLattices
from tokviz.core.unigram.timeline import UnigramSettings, UnigramTraining, train_unigram
from tokviz.core.unigram.trainer import UnigramTrainer


@pytest.fixture(autouse=True)
def numpy_path(monkeypatch):
    """The split is the numpy path's (`tokviz.core.unigram.compiled` has the compiled one)."""
    monkeypatch.setenv("TOKVIZ_JIT", "0")


TEXT = " ".join(f"w{i % 97}x{i % 13} lower lowest newer{i % 7} wider" for i in range(1500))


def trainer() -> UnigramTrainer:
    from collections import Counter

    counts = Counter(TEXT.split())
    return UnigramTrainer(list(counts), list(counts.values()), target_pieces=60, seed_min_count=1)


def same(x, y) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(x, y)) and len(x) == len(y)


def tokens(rows):
    """Viterbi or alternative rows, sorted (their order is free but for each lattice's)."""
    order = np.lexsort((rows[1], rows[0]))
    return [r[order] for r in rows]


@pytest.mark.parametrize("mode", ["fork", "here", "child dies"])
def test_split_lattices_equal_one_batch_bit_for_bit(mode, monkeypatch):
    if mode != "here":
        skip_unless_fork()
    monkeypatch.setattr(split_module, "MIN_BUSY_SHARE", 0.0)  # keep the child however busy the machine
    t = trainer()
    one = t.lattice
    two = SplitLattices(one, t.weights, fork=mode != "here")
    assert 0 < two.cut < len(one.lengths)
    rng = np.random.default_rng(5)
    alive = t.alive.copy()
    try:
        for round_ in range(3):
            logp = np.where(alive, t.logp, -np.inf)
            c1, ll1 = one.expected_counts(logp, t.weights, len(t.pieces))
            c2, ll2 = two.expected_counts(logp, t.weights, len(t.pieces))
            assert np.array_equal(c1, c2) and ll1 == ll2
            assert np.array_equal(one.log_z(logp), two.log_z(logp))
            zs = [one.log_z(logp), one.log_z(logp * 1.5)]
            assert two.log_likelihoods(t.weights, zs) == one.log_likelihoods(t.weights, zs)  # forked dots
            q = np.where(alive, np.rint(logp * 16) / 16, -np.inf)  # coarse: many ties
            assert same(tokens(one.viterbi(q)), tokens(two.viterbi(q)))
            z1, v1 = one.log_z_and_viterbi(logp, q)
            z2, v2 = two.log_z_and_viterbi(logp, q)
            assert np.array_equal(z1, z2) and same(tokens(v1), tokens(v2))
            idx = np.flatnonzero(alive & (t.piece_len > 1))
            args = (t.occ_text[idx], t.occ_start[idx], t.piece_len[idx], q)
            r1, r2 = one.alternatives(*args), two.alternatives(*args, pieces=idx)  # shared out
            assert same(tokens(r1), tokens(r2))
            for k in np.unique(r1[0]).tolist():  # each piece's tokens in the same order
                assert same([r[r1[0] == k] for r in r1], [r[r2[0] == k] for r in r2])
            if mode == "child dies" and round_ == 1:
                two.child.kill()
            alive[rng.choice(idx, len(idx) // 4, replace=False)] = False
            one = one.subset(alive)
            assert two.subset(alive) is two
    finally:
        two.close()
    if mode == "child dies":
        assert two.child is None
    with pytest.raises(RuntimeError, match="closed"):
        two.log_z(np.where(alive, t.logp, -np.inf))


def trained(processes: int) -> dict:
    """A whole run with `processes` allowed, as JSON."""
    training = UnigramTraining(UnigramSettings(vocab_size=80, seed_min_count=1), texts=[TEXT])
    training.prepare(processes=processes)
    return to_json(training.run())


def spy_forks(monkeypatch) -> list:
    """The children `split` forks from now on (one entry each)."""
    forks: list = []
    real = split_module.fork_server
    monkeypatch.setattr(split_module, "fork_server", lambda handle: forks.append(1) or real(handle))
    return forks


def test_a_training_run_is_the_same_through_both_paths(monkeypatch):
    """Sequential by default; split with a forked child when the caller allows two processes
    (and forking is possible here); the same model both ways."""
    monkeypatch.setattr(split_module, "PARALLEL_MIN_EDGES", 0)
    monkeypatch.setattr(split_module, "MIN_BUSY_SHARE", 0.0)  # keep the child however busy the machine
    forks = spy_forks(monkeypatch)
    serial = trained(1)
    assert forks == []
    assert to_json(train_unigram(UnigramSettings(vocab_size=80, seed_min_count=1), texts=[TEXT])) == serial
    assert forks == []  # the default: one process
    assert trained(2) == serial
    assert forks == ([1] if can_fork() else [])


def test_small_batches_and_one_process_stay_in_one_process(monkeypatch):
    t = trainer()
    assert not split_module.use_split(t.lattice, 2)  # far below PARALLEL_MIN_EDGES
    monkeypatch.setattr(split_module, "PARALLEL_MIN_EDGES", 0)
    assert not split_module.use_split(t.lattice)  # one process: the default
    assert not split_module.use_split(t.lattice, 1)
    assert split_module.use_split(t.lattice, 2) == can_fork()
    monkeypatch.setattr(split_module, "usable", lambda processes: 1)  # forking is not safe here
    assert not split_module.use_split(t.lattice, 2)


def test_cancelling_a_split_run_ends_its_child(monkeypatch):
    from tokviz.core import Cancelled

    monkeypatch.setattr(split_module, "PARALLEL_MIN_EDGES", 0)
    stop = {"armed": False}
    training = UnigramTraining(UnigramSettings(vocab_size=80, seed_min_count=1), texts=[TEXT])
    training.prepare(should_stop=lambda: stop["armed"], processes=2)
    steps = training.steps()
    next(steps)
    lattices = training.trainer.lattice
    stop["armed"] = True
    with pytest.raises(Cancelled):
        next(steps)
    if isinstance(lattices, SplitLattices):  # forking is possible here
        assert lattices.child is None and lattices.closed


def test_a_split_run_drops_its_child_when_the_machine_gets_busy(monkeypatch):
    skip_unless_fork()  # another thread running: the run never splits, nothing to drop
    monkeypatch.setattr(split_module, "PARALLEL_MIN_EDGES", 0)
    serial = trained(1)
    monkeypatch.setattr(split_module, "MIN_BUSY_SHARE", 2.0)  # never busy enough: dropped at the first prune
    dropped = []
    real = split_module.SplitLattices.drop_child

    def spy(self):
        dropped.append(self.child is not None)
        real(self)

    monkeypatch.setattr(split_module.SplitLattices, "drop_child", spy)
    assert trained(2) == serial
    assert dropped[:1] == [True] or not can_fork()  # (a thread may have started meanwhile)
