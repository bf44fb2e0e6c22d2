"""SuperBPE's training time against plain BPE's on the same corpus at the same vocabulary size.

Run from the repository root::

    python tests/bench/bench_superbpe.py                      # gutenberg30, vocab 32000
    python tests/bench/bench_superbpe.py --corpus ../shared/corpora/tinyshakespeare.txt --vocab 8000

Each training runs in a fresh subprocess (``--worker ALGO``) that times only the training (counting
with the processes ``tokviz train`` would use, then every merge; reading the file is left out), in
wall-clock and CPU seconds. SuperBPE's transition is four fifths of the merges (the paper's
setting, ``--transition``). The parent prints the seconds, SuperBPE's stage-2 set-up time and the
ratio to BPE (target: at most 2x), and writes ``tests/bench/results/superbpe.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "gutenberg30.txt"
RESULTS = ROOT / "tests" / "bench" / "results"
LIMIT = 2.0


def worker(algo: str, path: str, vocab: int, transition: float) -> dict:
    from tokviz.core.bpe.timeline import TrainSettings
    from tokviz.core.processes.parallel import choose_processes
    from tokviz.core.registry import make_training
    from tokviz.core.superbpe.timeline import SuperBpeSettings

    text = Path(path).read_text(encoding="utf-8")
    t = int(transition * (vocab - 256))
    settings = TrainSettings(vocab_size=vocab) if algo == "bpe" else SuperBpeSettings(vocab_size=vocab, transition=t)
    t0, c0 = time.perf_counter(), time.process_time()
    training = make_training(settings, texts=[text])
    del text
    training.prepare(processes=choose_processes())
    prepared = time.perf_counter() - t0
    marks = {}
    for step in training.steps():
        if algo == "bpe":
            continue
        if step.rank == t - 1:
            marks["stage_one_seconds"] = time.perf_counter() - t0
        elif step.rank == t:
            marks["first_stage_two_merge_seconds"] = time.perf_counter() - t0
    tl = training.timeline
    out = {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
           "prepare_seconds": prepared, "merges": tl.n_merges, "vocab_size": tl.vocab_size, **marks}
    if algo == "superbpe":
        out.update(transition=tl.transition, superwords=tl.superwords())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=("bpe", "superbpe"))
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--transition", type=float, default=0.8, help="the transition as a fraction of the merges")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.corpus, args.vocab, args.transition)))
        return 0
    path = Path(args.corpus)
    if not path.is_file():
        print(f"skipped: {path} is not there (../shared/corpora)", file=sys.stderr)
        return 0
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = {}
    for algo in ("bpe", "superbpe"):
        out = subprocess.run([sys.executable, __file__, "--worker", algo, "--corpus", str(path), "--vocab",
                              str(args.vocab), "--transition", str(args.transition)],
                             capture_output=True, text=True, env=env, check=True)
        runs[algo] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{algo:9s} {runs[algo]['seconds']:8.1f} s wall  {runs[algo]['cpu_seconds']:8.1f} s cpu  "
              f"(counting {runs[algo]['prepare_seconds']:.1f} s)")
    ratio = runs["superbpe"]["seconds"] / runs["bpe"]["seconds"]
    sb = runs["superbpe"]
    if "first_stage_two_merge_seconds" in sb and "stage_one_seconds" in sb:
        print(f"stage-2 set-up: {sb['first_stage_two_merge_seconds'] - sb['stage_one_seconds']:.1f} s; "
              f"{sb.get('superwords', 0):,} superword tokens")
    print(f"SuperBPE / BPE: {ratio:.2f}x (target at most {LIMIT}x)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "superbpe.json").write_text(json.dumps({
        "corpus": path.name, "vocab_size": args.vocab, "transition_fraction": args.transition, "runs": runs,
        "ratio": ratio, "limit": LIMIT, "machine": platform.platform(), "cpus": os.cpu_count(),
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
