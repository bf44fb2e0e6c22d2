"""Write `training.json`: what each trainer makes of tinyshakespeare at vocabulary 8000.

Run by hand, with the code whose output is the reference (it was generated from the trainers as
they were before the speed work on them, commit 007a890), from the repository root::

    python tests/core/algorithm/known_answers/make_training_answers.py

For BPE, WordPiece and Unigram with their default settings: the SHA-256 of the saved model file
(every step, count, score, candidate and pruned piece), the number of steps and the first tokens.
`tests/core/algorithm/test_training_known_answers.py` trains again and compares.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[3].parent / "shared" / "corpora" / "tinyshakespeare.txt"
VOCAB = 8000


def answer(algorithm: str, text: str) -> dict:
    from tokviz.core.algorithm.registry import make_training
    from tokviz.core.bpe.timeline import TrainSettings
    from tokviz.core.io.model_files import save_model
    from tokviz.core.unigram.timeline import UnigramSettings
    from tokviz.core.wordpiece.timeline import WordPieceSettings

    settings = {"bpe": TrainSettings, "wordpiece": WordPieceSettings, "unigram": UnigramSettings}[algorithm]
    timeline = make_training(settings(vocab_size=VOCAB), texts=[text]).run()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.json"
        save_model(timeline, path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    vocab = timeline.merge_vocab() if hasattr(timeline, "merge_vocab") else []
    return {"sha256": digest, "steps": timeline.n_steps, "vocab_size": timeline.vocab_size,
            "last_tokens": [t.decode("utf-8", "replace") for t in vocab[-5:]]}


def main() -> int:
    text = CORPUS.read_text(encoding="utf-8")
    out = {a: answer(a, text) for a in ("bpe", "wordpiece", "unigram")}
    (HERE / "training.json").write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
