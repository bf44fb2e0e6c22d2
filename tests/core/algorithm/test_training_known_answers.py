"""Known answers for the three trainers on a real corpus: tinyshakespeare at vocabulary 8000 must
give, byte for byte, the model file the trainers gave before they were made faster (every step,
count, score, candidate, pruned piece). The answers and the script that wrote them are in
``known_answers/``. Unigram's answer is its numpy path's, every decision exactly and its floats to
a relative 1e-9 (their last bits follow the machine's maths library); the compiled path (numba)
must make the same model but for the last bits of its floats. The numpy path's answer must not
depend on the machine's BLAS threads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.conftest import shared_file
from tests.core.algorithm.known_answers.make_training_answers import answer
from tests.jit_switch import jit_off
from tokviz.core import jit

HERE = Path(__file__).resolve().parent / "known_answers"
ANSWERS = json.loads((HERE / "training.json").read_text(encoding="utf-8"))


def tinyshakespeare() -> str:
    return shared_file("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_training_tinyshakespeare_matches_the_recorded_model(algorithm):
    text = tinyshakespeare()
    with jit_off():
        got = answer(algorithm, text)
    assert differences(got, ANSWERS[algorithm], rel_tol=1e-9) == []


def differences(x, y, where: str = "", *, rel_tol: float = 1e-12) -> list[str]:
    """Where two JSON values differ; floats may differ by `rel_tol` (relative)."""
    if isinstance(x, float) and isinstance(y, float):
        return [] if math.isclose(x, y, rel_tol=rel_tol) else [f"{where}: {x!r} != {y!r}"]
    if isinstance(x, dict) and isinstance(y, dict):
        if x.keys() != y.keys():
            return [f"{where}: keys {sorted(x)} != {sorted(y)}"]
        return [d for k in x for d in differences(x[k], y[k], f"{where}.{k}", rel_tol=rel_tol)]
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return [f"{where}: {len(x)} items != {len(y)}"]
        return [d for i, (a, b) in enumerate(zip(x, y)) for d in differences(a, b, f"{where}[{i}]", rel_tol=rel_tol)]
    return [] if x == y and type(x) is type(y) else [f"{where}: {x!r} != {y!r}"]


def test_compiled_unigram_training_makes_the_numpy_paths_model():
    from tokviz.core.registry import make_training
    from tokviz.core.unigram.compiled import CompiledLattices
    from tokviz.core.unigram.model_file import to_json
    from tokviz.core.unigram.timeline import UnigramSettings

    if not jit.enabled():
        pytest.skip("numba is not installed here (the compiled path is off)")
    text = tinyshakespeare()
    with jit_off():
        plain = to_json(make_training(UnigramSettings(vocab_size=8000), texts=[text]).run())
    training = make_training(UnigramSettings(vocab_size=8000), texts=[text])
    training.prepare()
    assert isinstance(training.trainer.lattice, CompiledLattices)
    compiled = to_json(training.run())
    assert differences(plain, compiled) == []
    assert differences({"a": [1.0, 2]}, {"a": [1.0 + 1e-9, 2]}) != []  # the comparison can fail
