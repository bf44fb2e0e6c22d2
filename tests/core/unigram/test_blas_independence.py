"""Unigram training gives the same model, to the last bit, whatever the machine's BLAS does.

A BLAS dot product splits its sum across threads, so its last bits follow the thread count: a
model whose log-likelihoods came from `np.dot` changed with ``OPENBLAS_NUM_THREADS`` (and a fresh
machine failed the recorded known answer). Training here runs in two fresh processes, one with
one BLAS thread and one with two, on enough distinct words (30,000) for OpenBLAS to split its
dot products; the two model files must be identical.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

TRAIN = """
import hashlib, json, random
from tokviz.core.registry import make_training
from tokviz.core.unigram.model_file import to_json
from tokviz.core.unigram.timeline import UnigramSettings
rng = random.Random(7)
words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 9))) for _ in range(30000)]
timeline = make_training(UnigramSettings(vocab_size=400), texts=[" ".join(words)]).run()
print(hashlib.sha256(json.dumps(to_json(timeline)).encode()).hexdigest())
"""


def train_with_blas_threads(n: int, jit: str) -> str:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(n), "OMP_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n),
           "TOKVIZ_JIT": jit, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", TRAIN], env=env, capture_output=True, text=True, timeout=240,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_numpy_path_model_is_the_same_with_one_or_two_blas_threads():
    one = train_with_blas_threads(1, jit="0")
    assert len(one) == 64
    assert train_with_blas_threads(2, jit="0") == one


def test_compiled_path_model_is_the_same_with_one_or_two_blas_threads():
    one = train_with_blas_threads(1, jit="1")
    assert train_with_blas_threads(2, jit="1") == one
