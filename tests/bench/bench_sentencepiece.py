"""SentencePiece models: tokviz against the `sentencepiece` library, same files, same process.

    python tests/bench/bench_sentencepiece.py [--reps 3]

Builds a 250,000-piece Unigram model (the distinct words and word pieces of gutenberg30 and
udhr2_all scored by log frequency, written with the protobuf writer of the tests, nmt_nfkc
normalization taken from a small trained model) in a temporary folder, then measures:

- loading it (`load_tokenizer`, then encoding one word): target <= 1 s;
- encoding 1 MB (the first MB of gutenberg30, and of udhr2_all: ~380 languages), as one text and
  line by line, tokviz's ``encode_ids`` against ``SentencePieceProcessor.encode``, ids identical:
  target within 3x the library.

Medians of `--reps` runs after a warm-up (caches empty at each run); JSON in results/sentencepiece.json.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
N_PIECES = 250_000


def build_model(folder: Path) -> Path:
    """A 250k-piece Unigram model from word and substring counts (see the module docstring)."""
    import sentencepiece as spm

    from tests.core.pretrained.spm.spm_helpers import model_bytes

    udhr = (SHARED / "corpora" / "udhr2_all.txt").read_text(encoding="utf-8")
    gut = (SHARED / "corpora" / "gutenberg30.txt").read_text(encoding="utf-8")[:4_000_000]
    small = folder / "small"
    spm.SentencePieceTrainer.train(sentence_iterator=iter(udhr.split("\n")[::10]), model_prefix=str(small),
                                   vocab_size=4000, model_type="unigram", minloglevel=2, num_threads=2)
    proto = small.with_suffix(".model").read_bytes()
    from tokviz.core.pretrained.spm.proto import parse_model_proto

    base = parse_model_proto(proto)
    counts: Counter[str] = Counter()
    for word in (udhr + "\n" + gut).split():
        w = "\u2581" + word
        counts[w] += 1
        for n in range(2, min(len(w), 16) + 1):
            for i in range(0, len(w) - n + 1):
                counts[w[i : i + n]] += 1
    chars = {c for p in base.pieces for c in p}
    extra = [p for p, _ in counts.most_common(N_PIECES * 2) if p not in set(base.pieces)]
    total = sum(counts.values())
    pieces = [(p, s, {1: "normal", 2: "unknown", 3: "control"}.get(t, "normal"))
              for p, s, t in zip(base.pieces, base.scores, base.types)]
    for p in extra[: N_PIECES - len(pieces)]:
        pieces.append((p, math.log(counts[p] / total) - 2.0, "normal"))
    del chars
    out = folder / "big.model"
    out.write_bytes(model_bytes(pieces, trainer={"model_type": 1},
                                normalizer={"name": "nmt_nfkc",
                                            "precompiled_charsmap": base.normalizer.precompiled_charsmap}))
    return out


def _median(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    import sentencepiece as spm

    from tokviz.core.pretrained import load_tokenizer

    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        path = build_model(Path(tmp))
        size = path.stat().st_size / 1e6
        print(f"built a {N_PIECES:,}-piece model in {time.perf_counter() - t:.1f} s ({size:.1f} MB)")
        load = _median(lambda: load_tokenizer(path).encode_ids("warm up"), args.reps)
        load_sp = _median(lambda: spm.SentencePieceProcessor(model_file=str(path)).encode("warm up"), args.reps)
        print(f"load + one word: tokviz {load:.3f} s, sentencepiece {load_sp:.3f} s   target <= 1 s: "
              f"{'ok' if load <= 1.0 else 'MISSED'}")
        results["load"] = {"tokviz_s": load, "sentencepiece_s": load_sp}
        sp = spm.SentencePieceProcessor(model_file=str(path))
        for corpus in ("gutenberg30.txt", "udhr2_all.txt"):
            with open(SHARED / "corpora" / corpus, encoding="utf-8") as f:
                text = f.read(1_000_000)
            lines = text.split("\n")
            for how, ours_fn, ref_fn in (
                ("one text", lambda tok: tok.encode_ids(text), lambda: sp.encode(text)),
                ("by line", lambda tok: [tok.encode_ids(line) for line in lines],
                 lambda: [sp.encode(line) for line in lines]),
            ):
                tok = load_tokenizer(path)
                assert ours_fn(tok) == ref_fn(), f"ids differ on {corpus} {how}"
                times = []
                for _ in range(args.reps):
                    tok = load_tokenizer(path)  # empty caches
                    t = time.perf_counter()
                    ours_fn(tok)
                    times.append(time.perf_counter() - t)
                ours = statistics.median(times)
                ref = _median(ref_fn, args.reps)
                ratio = ours / ref
                print(f"encode 1 MB of {corpus:<16} {how:<9} tokviz {ours:6.3f} s  sentencepiece {ref:6.3f} s  "
                      f"{ratio:5.2f}x   target <= 3x: {'ok' if ratio <= 3 else 'MISSED'}")
                results[f"{corpus} {how}"] = {"tokviz_s": ours, "sentencepiece_s": ref, "ratio": ratio}
    out = ROOT / "tests" / "bench" / "results" / "sentencepiece.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
