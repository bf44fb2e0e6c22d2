"""BoundlessBPE's training time against plain BPE's on the same corpus at the same vocabulary size.

Run from the repository root::

    python tests/bench/bench_boundless.py                      # gutenberg30, vocab 32000
    python tests/bench/bench_boundless.py --corpus ../shared/corpora/tinyshakespeare.txt --vocab 8000

Each training runs in a fresh subprocess (``--worker ALGO``, `method_runs.time_training`) that times only
the training (counting the chunks, and for BoundlessBPE the runs of pretokens, then every step; reading
the file is left out), in wall-clock and CPU seconds (this process and its counting children), and its
peak memory. The parent prints them, the number of supermerges and the corpus length each model
reaches, and writes ``tests/bench/results/boundless.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from method_runs import CORPUS, RESULTS, corpus_or_skip, run_workers, time_training


def worker(algo: str, path: str, vocab: int) -> dict:
    from tokviz.core.boundless.timeline import BoundlessSettings
    from tokviz.core.bpe.timeline import TrainSettings

    settings = TrainSettings(vocab_size=vocab) if algo == "bpe" else BoundlessSettings(vocab_size=vocab)
    out = time_training(settings, path)
    tl = out.pop("timeline")
    if algo == "boundless":
        out.update(supermerges=tl.n_supermerges, runs=tl.n_runs)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=("bpe", "boundless"))
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--vocab", type=int, default=32000)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.corpus, args.vocab)))
        return 0
    path = corpus_or_skip(args.corpus)
    if path is None:
        return 0
    runs = run_workers(__file__, ("bpe", "boundless"), ["--corpus", str(path), "--vocab", str(args.vocab)])
    ratio = runs["boundless"]["seconds"] / runs["bpe"]["seconds"]
    cpu_ratio = runs["boundless"]["cpu_seconds"] / runs["bpe"]["cpu_seconds"]
    shorter = runs["bpe"]["final_length"] / runs["boundless"]["final_length"]
    print(f"BoundlessBPE / BPE: {ratio:.2f}x wall, {cpu_ratio:.2f}x cpu; {runs['boundless']['supermerges']:,} "
          f"supermerges; corpus {shorter:.3f}x shorter than BPE's")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "boundless.json").write_text(json.dumps({
        "corpus": path.name, "vocab_size": args.vocab, "runs": runs, "ratio": ratio, "cpu_ratio": cpu_ratio,
        "machine": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
