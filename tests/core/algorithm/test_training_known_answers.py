"""Known answers for the three trainers on a real corpus: tinyshakespeare at vocabulary 8000 must
give, byte for byte, the model file the trainers gave before they were made faster (every step,
count, score, candidate, pruned piece). The answers and the script that wrote them are in
``known_answers/``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import shared_file
from tests.core.algorithm.known_answers.make_training_answers import answer

HERE = Path(__file__).resolve().parent / "known_answers"
ANSWERS = json.loads((HERE / "training.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_training_tinyshakespeare_matches_the_recorded_model(algorithm):
    text = shared_file("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")
    assert answer(algorithm, text) == ANSWERS[algorithm]
