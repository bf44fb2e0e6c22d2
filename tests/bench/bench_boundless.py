"""BoundlessBPE's training time against plain BPE's on the same corpus at the same vocabulary size.

Run from the repository root::

    python tests/bench/bench_boundless.py                      # gutenberg30, vocab 32000
    python tests/bench/bench_boundless.py --corpus ../shared/corpora/tinyshakespeare.txt --vocab 8000

Each training runs in a fresh subprocess (``--worker ALGO``) that times only the training (counting
the chunks, and for BoundlessBPE the runs of pretokens, then every step; reading the file is left
out), in wall-clock and CPU seconds, and its peak memory. The parent prints them, the number of
supermerges and the corpus length each model reaches, and writes
``tests/bench/results/boundless.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "gutenberg30.txt"
RESULTS = ROOT / "tests" / "bench" / "results"


def worker(algo: str, path: str, vocab: int) -> dict:
    from tokviz.core.boundless.timeline import BoundlessSettings
    from tokviz.core.bpe.timeline import TrainSettings
    from tokviz.core.processes.parallel import choose_processes
    from tokviz.core.registry import make_training

    text = Path(path).read_text(encoding="utf-8")
    settings = TrainSettings(vocab_size=vocab) if algo == "bpe" else BoundlessSettings(vocab_size=vocab)
    t0, c0 = time.perf_counter(), time.process_time()
    training = make_training(settings, texts=[text])
    del text
    training.prepare(processes=choose_processes())
    prepared = time.perf_counter() - t0
    training.run()
    tl = training.timeline
    out = {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
           "prepare_seconds": prepared, "merges": tl.n_merges, "vocab_size": tl.vocab_size,
           "corpus_length": tl.corpus_length, "final_length": tl.length_at(tl.n_merges),
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
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
    path = Path(args.corpus)
    if not path.is_file():
        print(f"skipped: {path} is not there (../shared/corpora)", file=sys.stderr)
        return 0
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = {}
    for algo in ("bpe", "boundless"):
        out = subprocess.run([sys.executable, __file__, "--worker", algo, "--corpus", str(path), "--vocab",
                              str(args.vocab)], capture_output=True, text=True, env=env, check=True)
        r = runs[algo] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{algo:9s} {r['seconds']:8.1f} s wall  {r['cpu_seconds']:8.1f} s cpu  (counting "
              f"{r['prepare_seconds']:.1f} s)  peak {r['peak_rss_mb']:,.0f} MB  corpus -> {r['final_length']:,} tokens")
    ratio = runs["boundless"]["seconds"] / runs["bpe"]["seconds"]
    shorter = runs["bpe"]["final_length"] / runs["boundless"]["final_length"]
    print(f"BoundlessBPE / BPE: {ratio:.2f}x time; {runs['boundless']['supermerges']:,} supermerges; "
          f"corpus {shorter:.3f}x shorter than BPE's")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "boundless.json").write_text(json.dumps({
        "corpus": path.name, "vocab_size": args.vocab, "runs": runs, "ratio": ratio,
        "machine": platform.platform(), "cpus": os.cpu_count(),
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
