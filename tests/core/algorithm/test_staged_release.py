"""A staged training lets its texts go once they are counted (the counts are all it needs), for
every algorithm, and still trains to the same result."""

from __future__ import annotations

import pytest

from tokviz.core.bpe.timeline import TrainSettings
from tokviz.core.registry import make_training
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings

TEXT = "low lower lowest newer newest wider " * 30


@pytest.mark.parametrize("settings", [TrainSettings(merges=20), WordPieceSettings(merges=20),
                                      UnigramSettings(vocab_size=40)], ids=["bpe", "wordpiece", "unigram"])
def test_prepare_releases_the_texts_and_training_is_unchanged(settings):
    training = make_training(settings, texts=[TEXT])
    assert training.texts == [TEXT]
    training.prepare()
    assert training.texts == []
    steps = list(training.steps())
    again = make_training(settings, texts=[TEXT]).run()
    assert steps == list(getattr(again, training.steps_field))
    assert len(steps) > 0
