"""Train token embeddings with a tiny next-token model in numpy, one step at a time.

The model sees one token and predicts the next: ``logits = (E[x] + P[pos]) @ W + b``, softmax
cross-entropy against the token that follows, Adam. Tokens followed by similar tokens get
similar rows of ``E``, which is what the similarity heatmap then shows. The positional table
``P`` (``context`` rows, off by default) is the "learned" positional encoding trained on the
same data: position ``t % context`` of each token in its sequence.

`EmbedTrainer.steps()` is a generator of frozen `EmbedStep` records (step, epoch, loss, ...);
a GUI worker iterates it, checks its cancel event between steps, and calls
`EmbedTrainer.embeddings()` for a snapshot (from the same thread, between steps). Restarting
means making a new trainer. `train_embeddings` drains the generator.

Limits and cost. The softmax is exact over the *output* ids, the ids that occur as a next token
(a tokenizer trained on the corpus: nearly its whole vocabulary). A step costs three
``B x D x V_out`` matrix products: V_out 8192, D 256, B 512 is ~6 GFLOP, 0.15-0.3 s per step on
two cores; D 64 takes ~0.07 s and V_out 1024, D 64 ~10 ms (tests/bench/bench_heatmaps_core.py).
The products run in BLAS, which releases the GIL, so a worker thread leaves the GUI responsive. Gradients of ``E`` touch only the batch's rows
(`np.add.at`) and Adam updates only those rows ("lazy" Adam, as for sparse embeddings), so rows
of ids that never occur as an input keep their initial values. What this leaves out: attention,
more than one token of context, evaluation on held-out text.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import SettingsError

from .table import MAX_EMBED_DIM, EmbeddingTable, check_table_shape

MAX_CONTEXT = 8192
_EMA = 0.98  # smoothing of `EmbedStep.smoothed_loss`


@dataclass(frozen=True)
class EmbedTrainSettings:
    """Every option of an embedding training run; `validate()` checks them."""

    dim: int = 64  # D, the embedding width
    epochs: int = 5  # passes over all (token, next token) pairs
    batch_size: int = 512
    learning_rate: float = 0.01  # Adam step size
    seed: int = 0  # initialisation and shuffling
    init_scale: float = 0.02  # standard deviation of the random start of E, P and W
    context: int = 0  # rows of the learned positional table P; 0 = no positions
    max_steps: int | None = None  # stop earlier than `epochs` would
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def validate(self) -> "EmbedTrainSettings":
        """Raise `SettingsError` for settings that cannot work; return self."""

        def whole(name: str, v: object, lo: int, hi: int) -> None:
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not lo <= v <= hi:
                raise SettingsError(f"{name} must be a whole number between {lo} and {hi}, got {v!r}")

        def real(name: str, v: object, lo: float, hi: float, lo_open: bool = True) -> None:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or (v <= lo if lo_open else v < lo) or v >= hi:  # type: ignore[operator]
                raise SettingsError(f"{name} must be a number in {'(' if lo_open else '['}{lo}, {hi}), got {v!r}")

        whole("embedding dimension D", self.dim, 1, MAX_EMBED_DIM)
        whole("epochs", self.epochs, 1, 1_000_000)
        whole("batch size", self.batch_size, 1, 1 << 20)
        whole("seed", self.seed, 0, 2**63 - 1)
        whole("context (positional table rows)", self.context, 0, MAX_CONTEXT)
        if self.max_steps is not None:
            whole("max_steps", self.max_steps, 1, 2**62)
        real("learning rate", self.learning_rate, 0.0, 10.0)
        real("init scale", self.init_scale, 0.0, 10.0)
        real("beta1", self.beta1, 0.0, 1.0, lo_open=False)
        real("beta2", self.beta2, 0.0, 1.0, lo_open=False)
        real("eps", self.eps, 0.0, 1.0)
        return self


@dataclass(frozen=True, slots=True)
class EmbedStep:
    """One Adam update of the embedding model."""

    step: int  # updates done, 1..n_steps
    n_steps: int  # updates the run will make in total
    epoch: int  # 0-based pass over the pairs this step belongs to
    loss: float  # mean cross-entropy (nats) of this step's batch, before the update
    smoothed_loss: float  # exponential moving average of `loss` (bias-corrected), for a calm curve
    pairs_seen: int  # (token, next token) pairs used so far


def token_pairs(
    sequences: Sequence[Sequence[int]], n_vocab: int, *, context: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training pairs ``(inputs, targets, positions)``, int64 arrays of equal length.

    Each sequence gives ``(s[t], s[t+1])`` for every t; the position is ``t % context`` (0 when
    ``context == 0``). Sequences never pair across their boundary.

    >>> x, y, p = token_pairs([[1, 2, 3], [4], [5, 6]], 7, context=2)
    >>> x.tolist(), y.tolist(), p.tolist()
    ([1, 2, 5], [2, 3, 6], [0, 1, 0])
    """
    xs, ys, ps = [], [], []
    for s in sequences:
        a = np.asarray(s)
        if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
            raise SettingsError("each training sequence must be a flat list of token ids")
        if a.size < 2:
            continue
        a = a.astype(np.int64, copy=False)
        bad = a[(a < 0) | (a >= n_vocab)]
        if bad.size:
            raise SettingsError(
                f"id {int(bad[0])} is not in the vocabulary of {n_vocab} ids; encode the corpus with "
                f"the same tokenizer as the table"
            )
        xs.append(a[:-1])
        ys.append(a[1:])
        t = np.arange(a.size - 1, dtype=np.int64)
        ps.append(t % context if context else np.zeros_like(t))
    if not xs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ps)


class _Adam:
    """Adam moments for one parameter; `update` takes rows (lazy) or the whole array."""

    def __init__(self, param: np.ndarray) -> None:
        self.m = np.zeros_like(param)
        self.v = np.zeros_like(param)

    def update(self, param, grad, t, s: EmbedTrainSettings, rows: np.ndarray | None = None) -> None:
        b1, b2 = np.float32(s.beta1), np.float32(s.beta2)
        m = self.m if rows is None else self.m[rows]
        v = self.v if rows is None else self.v[rows]
        m *= b1
        m += (1 - b1) * grad
        v *= b2
        v += (1 - b2) * grad * grad
        step = s.learning_rate / (1 - s.beta1**t)
        delta = np.sqrt(v / np.float32(1 - s.beta2**t))
        delta += np.float32(s.eps)
        np.divide(m, delta, out=delta)
        delta *= np.float32(step)
        if rows is None:
            param -= delta
        else:
            self.m[rows], self.v[rows] = m, v
            param[rows] -= delta


class EmbedTrainer:
    """The state of one training run; iterate `steps()` to train.

    ``E`` starts as `init`, or as ``EmbeddingTable.random(n_vocab, dim, seed=seed,
    scale=init_scale)``: the random table the view shows before training.

    >>> seqs = [[0, 1, 0, 1, 0, 1], [2, 3, 2, 3, 2, 3]]
    >>> trainer = EmbedTrainer(seqs, 4, EmbedTrainSettings(dim=8, epochs=200, batch_size=4))
    >>> before = trainer.evaluate()
    >>> last = list(trainer.steps())[-1]
    >>> last.step == last.n_steps == 200 * 3, trainer.evaluate() < before / 10
    (True, True)
    """

    def __init__(
        self,
        sequences: Sequence[Sequence[int]],
        n_vocab: int,
        settings: EmbedTrainSettings | None = None,
        *,
        init: EmbeddingTable | None = None,
    ) -> None:
        self.settings = s = (settings or EmbedTrainSettings()).validate()
        self.n_vocab, dim = check_table_shape(n_vocab, s.dim)
        if init is not None and (init.n_vocab, init.dim) != (self.n_vocab, dim):
            raise SettingsError(
                f"the starting table is {init.n_vocab} x {init.dim} but training needs "
                f"{self.n_vocab} x {dim}; set D to {init.dim} or start from a random table"
            )
        x, y, pos = token_pairs(sequences, self.n_vocab, context=s.context)
        if not len(x):
            raise SettingsError("the training corpus has no pair of consecutive tokens; give it at least two tokens")
        self.output_ids, y_out = np.unique(y, return_inverse=True)  # (V_out,), targets as columns
        self._x, self._y, self._pos = x, y_out.astype(np.int64), pos
        rng = np.random.default_rng(s.seed)
        if init is None:
            self._E = rng.standard_normal((self.n_vocab, dim), dtype=np.float32) * np.float32(s.init_scale)
        else:
            self._E = np.array(init.vectors, dtype=np.float32)
            rng.standard_normal((self.n_vocab, dim), dtype=np.float32)  # same stream either way
        self._W = rng.standard_normal((dim, len(self.output_ids)), dtype=np.float32) * np.float32(s.init_scale)
        self._b = np.zeros(len(self.output_ids), dtype=np.float32)
        self._P = (
            rng.standard_normal((s.context, dim), dtype=np.float32) * np.float32(s.init_scale) if s.context else None
        )
        self._adam = {name: _Adam(p) for name, p in self._params().items()}
        self._rng = rng
        self.steps_per_epoch = -(-len(x) // s.batch_size)
        total = s.epochs * self.steps_per_epoch
        self.n_steps = total if s.max_steps is None else min(total, s.max_steps)
        self.step = 0
        self._order = np.zeros(0, dtype=np.int64)
        self._ema = 0.0

    def _params(self) -> dict[str, np.ndarray]:
        p = {"E": self._E, "W": self._W, "b": self._b}
        if self._P is not None:
            p["P"] = self._P
        return p

    # -- reference values for the loss curve --------------------------------------------------

    @property
    def n_pairs(self) -> int:
        return len(self._x)

    @property
    def uniform_loss(self) -> float:
        """Loss of guessing uniformly among the output ids, ``log V_out``: where training starts."""
        return math.log(len(self.output_ids))

    @property
    def unigram_loss(self) -> float:
        """Loss of a model that ignores its input (the entropy of the next-token counts).

        Going below it means the embeddings carry information about what follows.
        """
        p = np.bincount(self._y) / len(self._y)
        return float(-(p * np.log(p)).sum())

    # -- training -----------------------------------------------------------------------------

    def _forward(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Hidden vectors ``(B, D)``, probabilities ``(B, V_out)`` and the mean loss of a batch."""
        h = self._E[self._x[idx]]  # (B, D)
        if self._P is not None:
            h += self._P[self._pos[idx]]
        z = h @ self._W  # (B, V_out)
        z += self._b
        z -= z.max(axis=1, keepdims=True)
        rows = np.arange(len(idx))
        target = z[rows, self._y[idx]].astype(np.float64)
        np.exp(z, out=z)
        total = z.sum(axis=1, dtype=np.float64)
        z /= total.astype(np.float32)[:, None]
        return h, z, float(np.mean(np.log(total) - target))

    def steps(self) -> Iterator[EmbedStep]:
        """Yield one `EmbedStep` per Adam update until `n_steps`; resumes where it stopped."""
        s = self.settings
        b = s.batch_size
        while self.step < self.n_steps:
            epoch, k = divmod(self.step, self.steps_per_epoch)
            if k == 0:
                self._order = self._rng.permutation(self.n_pairs)
            idx = self._order[k * b : (k + 1) * b]
            h, grad, loss = self._forward(idx)  # grad holds the probabilities for now
            grad[np.arange(len(idx)), self._y[idx]] -= 1.0
            grad /= np.float32(len(idx))  # d loss / d logits, (B, V_out)
            g_w = h.T @ grad  # (D, V_out)
            g_b = grad.sum(axis=0)
            g_h = grad @ self._W.T  # (B, D)
            rows, inverse = np.unique(self._x[idx], return_inverse=True)
            g_e = np.zeros((len(rows), self._E.shape[1]), dtype=np.float32)
            np.add.at(g_e, inverse, g_h)  # sum the gradients of repeated ids
            t = self.step + 1
            self._adam["W"].update(self._W, g_w, t, s)
            self._adam["b"].update(self._b, g_b, t, s)
            self._adam["E"].update(self._E, g_e, t, s, rows=rows)
            if self._P is not None:
                g_p = np.zeros_like(self._P)
                np.add.at(g_p, self._pos[idx], g_h)
                self._adam["P"].update(self._P, g_p, t, s)
            self.step = t
            self._ema = _EMA * self._ema + (1 - _EMA) * loss
            yield EmbedStep(
                step=t,
                n_steps=self.n_steps,
                epoch=epoch,
                loss=loss,
                smoothed_loss=self._ema / (1 - _EMA**t),
                pairs_seen=epoch * self.n_pairs + min((k + 1) * b, self.n_pairs),
            )

    def evaluate(self, *, max_pairs: int | None = None) -> float:
        """Mean cross-entropy over the training pairs (evenly spaced `max_pairs` of them if set)."""
        n = self.n_pairs
        if max_pairs is None or max_pairs >= n:
            idx = np.arange(n)
        else:
            idx = np.linspace(0, n - 1, max(1, max_pairs)).astype(np.int64)
        total = 0.0
        for start in range(0, len(idx), 4096):
            part = idx[start : start + 4096]
            total += self._forward(part)[2] * len(part)
        return total / len(idx)

    # -- snapshots (call between steps, from the thread that iterates `steps()`) --------------

    @property
    def vectors(self) -> np.ndarray:
        """The live token table ``(V, D)`` (no copy: read it between steps, never change it)."""
        return self._E

    def embeddings(self) -> EmbeddingTable:
        """A copy of the token table as it is now."""
        return EmbeddingTable(self._E, f"trained (step {self.step} of {self.n_steps})")

    def output_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the output layer as it is now: weights ``(D, V_out)`` and biases ``(V_out,)``,
        one column per id of `output_ids` (the logits of the next token are ``E[x] @ W + b``)."""
        return self._W.copy(), self._b.copy()

    def positional(self) -> np.ndarray | None:
        """A copy of the learned positional table ``(context, D)``, or None without positions."""
        return None if self._P is None else self._P.copy()


def train_embeddings(
    sequences: Sequence[Sequence[int]],
    n_vocab: int,
    settings: EmbedTrainSettings | None = None,
    *,
    init: EmbeddingTable | None = None,
) -> EmbeddingTable:
    """Train to the end and return the table: ``train_embeddings(seqs, tok.n_vocab)``."""
    trainer = EmbedTrainer(sequences, n_vocab, settings, init=init)
    for _ in trainer.steps():
        pass
    return trainer.embeddings()
