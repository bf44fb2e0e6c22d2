"""Write `training.json`: what each trainer makes of tinyshakespeare at vocabulary 8000.

Run by hand, with the code whose output is the reference (it was generated from the trainers as
they were before the speed work on them, commit 007a890), from the repository root::

    python tests/core/algorithm/known_answers/make_training_answers.py

For BPE, WordPiece and Unigram with their default settings: the SHA-256 of the saved model file
(every step, count, score, candidate and pruned piece), the number of steps and the last tokens.
`tests/core/algorithm/test_training_known_answers.py` trains again and compares.

Unigram's model holds floats made by `exp`, `log` and long sums, whose last bits may differ with
the machine's maths library (numpy's SIMD kernels): its answer is the SHA-256 of the model with
every float left out (every piece, id, count, pruned piece and alternative: each decision
training made) beside each round's floats summed (`round_floats`), which the test compares to a
relative 1e-9. The sums themselves run in a fixed order (no BLAS), so the thread count of the
machine's BLAS changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[3].parent / "shared" / "corpora" / "tinyshakespeare.txt"
VOCAB = 8000


def answer(algorithm: str, text: str) -> dict:
    from tokviz.core.bpe.timeline import TrainSettings
    from tokviz.core.model_files import save_model
    from tokviz.core.registry import make_training
    from tokviz.core.unigram.timeline import UnigramSettings
    from tokviz.core.wordpiece.timeline import WordPieceSettings

    settings = {"bpe": TrainSettings, "wordpiece": WordPieceSettings, "unigram": UnigramSettings}[algorithm]
    timeline = make_training(settings(vocab_size=VOCAB), texts=[text]).run()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.json"
        save_model(timeline, path)
        data = path.read_bytes()
    vocab = timeline.merge_vocab() if hasattr(timeline, "merge_vocab") else []
    out = {"steps": timeline.n_steps, "vocab_size": timeline.vocab_size,
           "last_tokens": [t.decode("utf-8", "replace") for t in vocab[-5:]]}
    if algorithm != "unigram":
        return {"sha256": hashlib.sha256(data).hexdigest(), **out}
    model = json.loads(data)
    skeleton = json.dumps(without_floats(model), sort_keys=True).encode()
    return {"sha256_without_floats": hashlib.sha256(skeleton).hexdigest(), "round_floats": round_floats(model), **out}


def without_floats(value):
    """`value` (JSON) with every float replaced by None."""
    if isinstance(value, float):
        return None
    if isinstance(value, dict):
        return {k: without_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_floats(v) for v in value]
    return value


def round_floats(model: dict) -> list[list[float]]:
    """Per round of a Unigram model file: [log-likelihood, sum of the EM log-likelihoods, sum of
    the scores, sum of the pruned pieces' losses]."""
    columns = model["rounds"]["columns"]
    loss = model["rounds"]["pruned_columns"].index("loss")
    out = []
    for row in model["rounds"]["rows"]:
        r = dict(zip(columns, row))
        out.append([r["log_likelihood"], math.fsum(r["em_log_likelihood"]), math.fsum(r["scores"]),
                    math.fsum(p[loss] for p in r["pruned"])])
    return out


def main() -> int:
    text = CORPUS.read_text(encoding="utf-8")
    out = {a: answer(a, text) for a in ("bpe", "wordpiece", "unigram")}
    (HERE / "training.json").write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
