"""A trained Unigram tokenizer's encode: 1 MB as one text and line by line, and n-best of many words.

    python tests/bench/bench_unigram_encode.py [--reps 5] [--model PIECES.json] [--plain]

Trains an 8000-piece Unigram model on the first MB of gutenberg30 (or reads one written before
with ``--model``: a JSON ``{"pieces": [...], "scores": [...]}``, written next to the results as
``unigram_encode_model.json``), then times `UnigramTokenizer.encode_ordinary` on the first MB of
gutenberg30 and of udhr2_all (~380 languages: many unknown characters), one text and line by
line, and `nbest` (5) of 2000 distinct words, a freshly built tokenizer each run (empty caches).
Medians of wall and CPU time; a digest of the ids is printed so that two trees can be compared.
``--plain`` runs without the compiled kernels (``TOKVIZ_JIT=0``). JSON in results/unigram_encode.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "tests" / "bench" / "results"


def build_model(out: Path) -> Path:
    from tokviz.core.unigram.timeline import UnigramSettings, train_unigram
    from tokviz.core.unigram.tokenizer import UnigramTokenizer

    with open(SHARED / "corpora" / "gutenberg30.txt", encoding="utf-8") as f:
        text = f.read(1_000_000)
    tok = UnigramTokenizer.from_timeline(train_unigram(UnigramSettings(vocab_size=8000), texts=[text]))
    out.write_text(json.dumps({"pieces": tok.pieces, "scores": tok.scores[-1]}), encoding="utf-8")
    return out


def _timed(fn, reps: int) -> tuple[float, float, str]:
    """Medians of wall and CPU time of `fn()` over `reps` runs, and a digest of its result."""
    walls, cpus, digest = [], [], ""
    for _ in range(reps):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
        digest = hashlib.sha1(repr(out).encode()).hexdigest()[:12]
    return statistics.median(walls), statistics.median(cpus), digest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--model", help="a model written before (skips training one)")
    ap.add_argument("--plain", action="store_true", help="without the compiled kernels (TOKVIZ_JIT=0)")
    args = ap.parse_args(argv)
    if args.plain:
        os.environ["TOKVIZ_JIT"] = "0"
    from tokviz.core.text.split import parse_split
    from tokviz.core.unigram.tokenizer import UnigramTokenizer

    model = Path(args.model) if args.model else build_model(RESULTS / "unigram_encode_model.json")
    d = json.loads(model.read_text(encoding="utf-8"))

    def fresh() -> UnigramTokenizer:
        return UnigramTokenizer(d["pieces"], [d["scores"]], parse_split("whitespace"))

    fresh().encode_ordinary("warm up")  # imports and compiled kernels loaded before timing
    results: dict = {"loadavg": os.getloadavg()[0]}
    for corpus in ("gutenberg30.txt", "udhr2_all.txt"):
        with open(SHARED / "corpora" / corpus, encoding="utf-8") as f:
            text = f.read(1_000_000)
        lines = text.split("\n")
        words = list(dict.fromkeys(text.split()))[:2000]
        def by_line() -> list[int]:
            tok = fresh()
            return [i for line in lines for i in tok.encode_ordinary(line).ids]

        def nbest() -> list[tuple[int, ...]]:
            tok = fresh()
            return [s.ids for w in words for s in tok.nbest(w, 5)]

        for how, fn in (("one text", lambda: fresh().encode_ordinary(text).ids), ("by line", by_line),
                        ("nbest 2000 words", nbest)):
            wall, cpu, digest = _timed(fn, args.reps)
            print(f"{corpus:<16} {how:<17} {wall:7.3f} s  (CPU {cpu:.3f} s)  ids {digest}")
            results[f"{corpus} {how}"] = {"wall_s": wall, "cpu_s": cpu, "digest": digest}
    name = "unigram_encode_plain.json" if args.plain else "unigram_encode.json"
    (RESULTS / name).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
