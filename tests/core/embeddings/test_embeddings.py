"""Token embeddings: tables and files, model sizes, similarity, neighbours, ordering, training."""

from __future__ import annotations

import dataclasses
import doctest

import numpy as np
import pytest

from tokviz.core import ModelFormatError, SettingsError, TokvizError, TrainSettings, train
from tokviz.core.embeddings import (
    REFERENCE_MODELS,
    EmbeddingTable,
    EmbedStep,
    EmbedTrainer,
    EmbedTrainSettings,
    cosine_similarity,
    embedding_share,
    gpt2_parameter_count,
    most_frequent_ids,
    nearest_neighbours,
    reorder_for_similarity,
    token_pairs,
    train_embeddings,
)
from tokviz.core.embeddings import similarity as embed_similarity
from tokviz.core.embeddings import table as embed_table
from tokviz.core.embeddings import training as embed_train


@pytest.mark.parametrize("module", [embed_table, embed_similarity, embed_train])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0


# -- tables ---------------------------------------------------------------------------------------


def test_random_table_is_seeded_float32_and_read_only():
    t = EmbeddingTable.random(300, 32, seed=3, scale=0.5)
    assert t.vectors.shape == (300, 32) and t.vectors.dtype == np.float32
    assert np.array_equal(t.vectors, EmbeddingTable.random(300, 32, seed=3, scale=0.5).vectors)
    assert not np.array_equal(t.vectors, EmbeddingTable.random(300, 32, seed=4, scale=0.5).vectors)
    assert t.vectors.std() == pytest.approx(0.5, rel=0.05)
    assert (t.n_vocab, t.dim, t.parameter_count, t.source) == (300, 32, 9600, "random (seed 3)")
    with pytest.raises(ValueError):
        t.vectors[0, 0] = 1.0
    data = np.ones((2, 2))
    owned = EmbeddingTable(data)
    data[0, 0] = 5.0
    assert owned.vectors[0, 0] == 1.0  # the table copied its input


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: EmbeddingTable.random(0, 8), "vocabulary size must be between 1"),
        (lambda: EmbeddingTable.random(10, 0), "embedding dimension D must be between 1 and 4096"),
        (lambda: EmbeddingTable.random(10, 8, seed=-2), "seed must be a whole number >= 0"),
        (lambda: EmbeddingTable.random(10, 8, scale=0.0), "scale"),
        (lambda: EmbeddingTable.random(1_000_000, 4096), "choose D <= 268"),
        (lambda: EmbeddingTable(np.ones(4)), "2-D matrix"),
    ],
)
def test_table_errors(call, message):
    with pytest.raises(SettingsError, match=message):
        call()


def test_reference_model_sizes_and_shares():
    small = REFERENCE_MODELS["GPT-2 small"]
    assert small.total_params == 124_439_808 == gpt2_parameter_count(12, 768)
    assert small.embedding_params == 50257 * 768 == 38_597_376
    assert small.embedding_share == pytest.approx(0.310169, abs=1e-6)
    assert REFERENCE_MODELS["GPT-2 medium"].total_params == 354_823_168
    assert REFERENCE_MODELS["GPT-2 large"].total_params == 774_030_080
    assert REFERENCE_MODELS["GPT-2 XL"].total_params == 1_557_611_200
    llama = REFERENCE_MODELS["Llama 2 7B"]
    assert (llama.n_vocab, llama.dim, llama.tied) == (32000, 4096, False)
    assert llama.embedding_share == pytest.approx(131_072_000 / 6_738_415_616)
    table = EmbeddingTable.random(1000, 64)
    assert table.share_of(small.total_params) == pytest.approx(64_000 / 124_439_808)
    assert embedding_share(50257, 768, 1_000_000) > 1  # the table alone outgrows a 1M model
    with pytest.raises(SettingsError, match="model size must be a positive number"):
        embedding_share(10, 10, 0)


# -- .npy files -----------------------------------------------------------------------------------


def test_npy_round_trip_and_conversion(tmp_path):
    t = EmbeddingTable.random(50, 8, seed=1)
    t.save(tmp_path / "e.npy")
    back = EmbeddingTable.load(tmp_path / "e.npy", n_vocab=50)
    assert np.array_equal(back.vectors, t.vectors) and back.source == "e.npy"
    np.save(tmp_path / "f64.npy", np.arange(12, dtype=np.float64).reshape(4, 3))
    f64 = EmbeddingTable.load(tmp_path / "f64.npy", n_vocab=4)
    assert f64.vectors.dtype == np.float32 and f64.vectors[3].tolist() == [9.0, 10.0, 11.0]
    np.save(tmp_path / "int.npy", np.ones((4, 2), dtype=np.int16))
    assert EmbeddingTable.load(tmp_path / "int.npy").vectors.sum() == 8.0


@pytest.mark.parametrize(
    "array, error, message",
    [
        (np.zeros((10, 4), np.float32), SettingsError, r"has 10 rows but the tokenizer has 12 ids; .* shape \(12, D\)"),
        (np.zeros(12, np.float32), SettingsError, r"shape \(12,\); an embedding table is 2-D"),
        (np.zeros((12, 2, 2), np.float32), SettingsError, "2-D"),
        (np.zeros((12, 4), np.complex64), SettingsError, "complex64 values; .* real numbers"),
        (np.zeros((12, 4), bool), SettingsError, "bool values"),
        (np.array([["a"] * 4] * 12), SettingsError, "<U1 values"),
        (np.full((12, 4), np.nan, np.float32), SettingsError, r"NaN or infinity \(first in row 0\)"),
    ],
)
def test_npy_content_errors(tmp_path, array, error, message):
    path = tmp_path / "bad.npy"
    np.save(path, array)
    with pytest.raises(error, match=message):
        EmbeddingTable.load(path, n_vocab=12)


def test_npy_file_errors(tmp_path):
    with pytest.raises(TokvizError, match="cannot read embedding file") as missing:
        EmbeddingTable.load(tmp_path / "missing.npy")
    assert not isinstance(missing.value, (SettingsError, ModelFormatError))
    (tmp_path / "text.npy").write_text("hello, not numpy\n")
    with pytest.raises(ModelFormatError, match="is not a NumPy .npy file"):
        EmbeddingTable.load(tmp_path / "text.npy")
    np.savez(tmp_path / "arch.npz", a=np.zeros((3, 3)))
    with pytest.raises(ModelFormatError, match="zip archive"):
        EmbeddingTable.load(tmp_path / "arch.npz")
    np.save(tmp_path / "obj.npy", np.array([[{"x": 1}]], dtype=object), allow_pickle=True)
    with pytest.raises(ModelFormatError, match="Python objects"):
        EmbeddingTable.load(tmp_path / "obj.npy")
    good = tmp_path / "good.npy"
    np.save(good, np.ones((100, 16), np.float32))
    cut = tmp_path / "cut.npy"
    cut.write_bytes(good.read_bytes()[:1000])
    with pytest.raises(ModelFormatError, match="damaged or truncated"):
        EmbeddingTable.load(cut, n_vocab=100)
    header_only = tmp_path / "header.npy"
    header_only.write_bytes(good.read_bytes()[:20])
    with pytest.raises(ModelFormatError, match="damaged or truncated"):
        EmbeddingTable.load(header_only)


# -- similarity, neighbours, frequency, order -----------------------------------------------------


def test_cosine_similarity_symmetric_unit_diagonal():
    t = EmbeddingTable.random(200, 16, seed=0)
    ids = [5, 17, 5, 199, 0]
    s = cosine_similarity(t, ids)
    assert s.shape == (5, 5) and np.array_equal(s, s.T)
    assert np.all(np.diag(s) == 1.0) and s[0, 2] == pytest.approx(1.0)  # repeated id
    a, b = t.vectors[17], t.vectors[199]
    assert s[1, 3] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-6)
    assert cosine_similarity(t, []).shape == (0, 0)
    with pytest.raises(SettingsError, match=r"id 200 is not in the vocabulary \(valid ids: 0..199\)"):
        cosine_similarity(t, [1, 200])


def test_nearest_neighbours():
    angles = np.array([0.0, 0.1, 0.3, 1.0, 3.0])
    e = np.stack([np.cos(angles), np.sin(angles)], axis=1) * np.array([1, 5, 2, 1, 3])[:, None]
    e = np.vstack([e, np.zeros(2)])  # id 5: zero vector
    got = nearest_neighbours(e, 0, 3)
    assert [i for i, _ in got] == [1, 2, 3]
    assert got[0][1] == pytest.approx(np.cos(0.1), abs=1e-6)
    assert [i for i, _ in nearest_neighbours(e, 0, 10)] == [1, 2, 3, 5, 4]  # all 5 others, zero vector at 0
    assert [i for i, _ in nearest_neighbours(e, 2, 2, among=[0, 3, 4, 2])] == [0, 3]
    assert all(s == 0.0 for _, s in nearest_neighbours(e, 5, 3))
    table = EmbeddingTable(e)
    assert nearest_neighbours(table, 0, 1) == nearest_neighbours(e, 0, 1)
    with pytest.raises(SettingsError, match="k must be at least 1"):
        nearest_neighbours(e, 0, 0)
    with pytest.raises(SettingsError, match="id 6 is not in the vocabulary"):
        nearest_neighbours(e, 6)


def test_most_frequent_ids():
    seqs = [[3, 3, 1, 7], [7, 3, 2], np.array([2, 9])]
    assert most_frequent_ids(seqs, 3) == [3, 2, 7]  # 3x3, then 2 and 7 twice (smaller id first)
    assert most_frequent_ids(seqs, 10) == [3, 2, 7, 1, 9]
    assert most_frequent_ids(seqs, 2, exclude=[3, 100]) == [2, 7]
    assert most_frequent_ids([], 5) == [] and most_frequent_ids(seqs, 0) == []
    with pytest.raises(SettingsError, match="cannot be negative"):
        most_frequent_ids([[1, -1]], 2)


def test_reorder_puts_groups_together():
    rng = np.random.default_rng(0)
    sizes = [5, 7, 4, 9]
    labels = np.repeat(np.arange(4), sizes)
    centres = rng.standard_normal((4, 32)) * 3
    x = centres[labels] + rng.standard_normal((len(labels), 32))
    shuffle = rng.permutation(len(labels))
    x, labels = x[shuffle], labels[shuffle]
    s = cosine_similarity(x, range(len(labels)))
    order = reorder_for_similarity(s)
    assert sorted(order.tolist()) == list(range(len(labels)))
    runs = np.count_nonzero(np.diff(labels[order])) + 1
    assert runs == 4  # every group in one contiguous block
    adjacent = np.mean([s[a, b] for a, b in zip(order[:-1], order[1:])])
    before = np.mean([s[a, a + 1] for a in range(len(labels) - 1)])
    assert adjacent > before + 0.3


def test_reorder_small_and_awkward_inputs():
    assert reorder_for_similarity(np.zeros((0, 0))).tolist() == []
    assert reorder_for_similarity(np.ones((1, 1))).tolist() == [0]
    assert reorder_for_similarity(np.eye(2)).tolist() == [0, 1]
    s = np.array([[1, 0.9, np.nan], [0.9, 1, 0.1], [np.nan, 0.1, 1]])
    assert reorder_for_similarity(s).tolist() in ([0, 1, 2], [2, 1, 0])
    ties = np.ones((6, 6))  # every pair equally similar: must still end
    assert sorted(reorder_for_similarity(ties).tolist()) == list(range(6))
    with pytest.raises(SettingsError, match="square"):
        reorder_for_similarity(np.ones((2, 3)))


def test_reorder_scales_to_a_thousand_tokens():
    x = np.random.default_rng(1).standard_normal((1000, 16))
    order = reorder_for_similarity(cosine_similarity(x, range(1000)))
    assert sorted(order.tolist()) == list(range(1000))


# -- training -------------------------------------------------------------------------------------


def test_token_pairs_and_errors():
    x, y, p = token_pairs([[4, 5, 6, 7], [1]], 8, context=3)
    assert (x.tolist(), y.tolist(), p.tolist()) == ([4, 5, 6], [5, 6, 7], [0, 1, 2])
    with pytest.raises(SettingsError, match="id 9 is not in the vocabulary of 8 ids"):
        token_pairs([[1, 9]], 8)
    with pytest.raises(SettingsError, match="no pair of consecutive tokens"):
        EmbedTrainer([[1], []], 8)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"dim": 0}, "embedding dimension D must be a whole number between 1 and 4096"),
        ({"epochs": 0}, "epochs"),
        ({"batch_size": 0}, "batch size"),
        ({"learning_rate": 0.0}, "learning rate"),
        ({"beta2": 1.0}, "beta2"),
        ({"context": -1}, "context"),
        ({"max_steps": 0}, "max_steps"),
    ],
)
def test_training_settings_errors(change, message):
    with pytest.raises(SettingsError, match=message):
        EmbedTrainer([[1, 2, 3]], 8, dataclasses.replace(EmbedTrainSettings(), **change))


def test_init_table_must_match():
    with pytest.raises(SettingsError, match="starting table is 8 x 4 but training needs 8 x 64"):
        EmbedTrainer([[1, 2]], 8, init=EmbeddingTable.random(8, 4))


def _markov_corpus(seed: int = 0, n_vocab: int = 40, length: int = 3000) -> list[list[int]]:
    """Each id is followed by one of two fixed successors: a lot to learn from one token."""
    rng = np.random.default_rng(seed)
    succ = rng.integers(0, n_vocab, size=(n_vocab, 2))
    seq = [0]
    for _ in range(length):
        seq.append(int(succ[seq[-1], rng.integers(0, 2)]))
    return [seq[i : i + 100] for i in range(0, len(seq), 100)]


def test_loss_goes_down_and_records_are_consistent():
    seqs = _markov_corpus()
    trainer = EmbedTrainer(seqs, 50, EmbedTrainSettings(dim=16, epochs=8, batch_size=128, learning_rate=0.02))
    before = trainer.evaluate()
    assert before == pytest.approx(trainer.uniform_loss, abs=0.01)  # small random start: near uniform
    records = list(trainer.steps())
    after = trainer.evaluate()
    assert after < before - 1.0
    assert after < trainer.unigram_loss - 0.3  # the input token carries information
    assert after == pytest.approx(np.log(2), abs=0.25)  # two equally likely successors
    assert all(isinstance(r, EmbedStep) for r in records)
    assert [r.step for r in records] == list(range(1, trainer.n_steps + 1))
    assert trainer.n_steps == 8 * trainer.steps_per_epoch == len(records)
    assert [r.epoch for r in records[:: trainer.steps_per_epoch]] == list(range(8))
    assert records[-1].pairs_seen == 8 * trainer.n_pairs
    assert np.mean([r.loss for r in records[-10:]]) < np.mean([r.loss for r in records[:10]]) - 1.0
    assert records[-1].smoothed_loss < records[0].smoothed_loss
    with pytest.raises(dataclasses.FrozenInstanceError):
        records[0].loss = 0.0  # type: ignore[misc]


def test_training_is_deterministic_and_resumable():
    seqs = _markov_corpus(1)
    s = EmbedTrainSettings(dim=8, epochs=3, batch_size=64, seed=11)
    a = EmbedTrainer(seqs, 40, s)
    assert np.array_equal(a.embeddings().vectors, EmbeddingTable.random(40, 8, seed=11, scale=0.02).vectors)
    losses_a = [r.loss for r in a.steps()]
    b = EmbedTrainer(seqs, 40, s)
    first = []
    for r in b.steps():  # a worker cancelling after 5 steps ...
        first.append(r.loss)
        if r.step == 5:
            break
    snapshot = b.embeddings()
    assert snapshot.source == f"trained (step 5 of {b.n_steps})"
    rest = [r.loss for r in b.steps()]  # ... and this run picks up where it stopped
    assert first + rest == losses_a
    assert np.array_equal(a.embeddings().vectors, b.embeddings().vectors)
    assert not np.array_equal(snapshot.vectors, b.embeddings().vectors)  # snapshots are copies
    other = EmbedTrainer(seqs, 40, dataclasses.replace(s, seed=12))
    assert [r.loss for r in other.steps()] != losses_a
    short = EmbedTrainer(seqs, 40, dataclasses.replace(s, max_steps=7))
    assert len(list(short.steps())) == 7 == short.n_steps


def test_rows_of_unseen_inputs_keep_their_start():
    init = EmbeddingTable.random(60, 8, seed=2)
    seqs = _markov_corpus(2, n_vocab=40)
    table = train_embeddings(seqs, 60, EmbedTrainSettings(dim=8, epochs=2, batch_size=64), init=init)
    seen = np.unique(np.concatenate([np.asarray(s[:-1], dtype=np.int64) for s in seqs]))
    unseen = np.setdiff1d(np.arange(60), seen)
    assert np.array_equal(table.vectors[unseen], init.vectors[unseen])
    assert not np.allclose(table.vectors[seen], init.vectors[seen])


def test_positional_table_is_trained():
    # after token 0 comes 1 at positions 0 and 4 but 2 at positions 2 and 6: only the position tells
    seqs = [[0 if t % 2 == 0 else int(1 + (t // 2) % 2) for t in range(8)] for _ in range(50)]
    s = EmbedTrainSettings(dim=8, epochs=60, batch_size=64, context=8, learning_rate=0.05)
    trainer = EmbedTrainer(seqs, 3, s)
    start = trainer.positional()
    assert start is not None and start.shape == (8, 8)
    list(trainer.steps())
    trained = trainer.positional()
    assert not np.allclose(start, trained)
    assert trainer.evaluate() < trainer.unigram_loss - 0.3  # positions explain what token alone cannot
    assert EmbedTrainer([[1, 2]], 3).positional() is None


def _two_group_corpus() -> tuple[list[str], list[str], str]:
    fruit = "apple banana cherry grape lemon mango melon peach".split()
    places = "anchor bridge castle tower harbor market river valley".split()
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(fruit if i % 2 == 0 else places, 6)) for i in range(400)]
    return fruit, places, "\n".join(lines) + "\n"


def test_two_disjoint_groups_end_up_more_similar_within_than_across():
    fruit, places, text = _two_group_corpus()
    tok = train(TrainSettings(merges=300), texts=[text]).tokenizer()
    for w in fruit + places:  # each word (with its leading space) became one token
        assert len(tok.encode_ids(" " + w)) == 1
    lines = text.splitlines(keepends=True)
    seqs = [tok.encode_ids(line) for line in lines]
    ids_a = {i for s in seqs[0::2] for i in s}
    ids_b = {i for s in seqs[1::2] for i in s}
    group_a, group_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)  # tokens of one group only
    assert len(group_a) >= 8 and len(group_b) >= 8
    trainer = EmbedTrainer(seqs, tok.n_vocab, EmbedTrainSettings(dim=16, epochs=10, batch_size=256, seed=0))
    before = trainer.evaluate()
    list(trainer.steps())
    assert trainer.evaluate() < before - 0.5
    s = cosine_similarity(trainer.embeddings(), group_a + group_b)
    n, m = len(group_a), len(group_b)
    within = np.concatenate([s[:n, :n][~np.eye(n, dtype=bool)], s[n:, n:][~np.eye(m, dtype=bool)]])
    across = s[:n, n:].ravel()
    assert within.mean() > across.mean() + 1.0
    assert within.min() > across.max() + 0.3  # every within pair beats every across pair
    start = cosine_similarity(EmbeddingTable.random(tok.n_vocab, 16, seed=0, scale=0.02), group_a + group_b)
    assert abs(start[:n, :n].mean() - start[:n, n:].mean()) < 0.2  # it was learned, not there from the start
    order = reorder_for_similarity(s)
    labels = np.array([0] * n + [1] * m)[order]
    assert np.count_nonzero(np.diff(labels)) == 1  # the reordered heatmap shows two blocks
    neighbours = [i for i, _ in nearest_neighbours(trainer.embeddings(), group_a[0], 5, among=group_a + group_b)]
    assert set(neighbours) <= set(group_a)


def test_steps_match_a_plain_reference_implementation():
    """Three full-batch steps against a slow, obvious float64 version (gradients by loops, Adam)."""
    seqs = [[1, 2, 1, 3, 1, 2, 4, 4, 4, 0], [3, 3, 1, 2]]  # repeated inputs: their gradients add up
    s = EmbedTrainSettings(dim=4, epochs=3, batch_size=64, learning_rate=0.05, seed=5)
    trainer = EmbedTrainer(seqs, 6, s)
    # the starting parameters, to run the reference from the same point
    E = trainer.vectors.astype(np.float64)
    W, b = (p.astype(np.float64) for p in trainer.output_layer())
    x, y, _ = token_pairs(seqs, 6)
    cols = {int(t): j for j, t in enumerate(trainer.output_ids)}
    moments = {k: [np.zeros_like(v), np.zeros_like(v)] for k, v in (("E", E), ("W", W), ("b", b))}
    rows = np.unique(x)
    losses = []
    for t in range(1, 4):
        h = E[x]
        z = h @ W + b
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        target = np.array([cols[int(v)] for v in y])
        losses.append(float(-np.mean(np.log(p[np.arange(len(x)), target]))))
        g = p.copy()
        g[np.arange(len(x)), target] -= 1
        g /= len(x)
        grads = {"W": h.T @ g, "b": g.sum(axis=0), "E": np.zeros_like(E)}
        gh = g @ W.T
        for i, token in enumerate(x):
            grads["E"][token] += gh[i]
        for name, param in (("E", E), ("W", W), ("b", b)):
            m, v = moments[name]
            sel = rows if name == "E" else slice(None)  # lazy Adam: only rows in the batch
            m[sel] = 0.9 * m[sel] + 0.1 * grads[name][sel]
            v[sel] = 0.999 * v[sel] + 0.001 * grads[name][sel] ** 2
            param[sel] -= 0.05 * (m[sel] / (1 - 0.9**t)) / (np.sqrt(v[sel] / (1 - 0.999**t)) + 1e-8)
    got = [r.loss for r in trainer.steps()]
    assert got == pytest.approx(losses, rel=1e-5)
    assert np.allclose(trainer.embeddings().vectors, E, atol=1e-5)
    trained_w, trained_b = trainer.output_layer()
    assert np.allclose(trained_w, W, atol=1e-5)
    assert np.allclose(trained_b, b, atol=1e-5)
