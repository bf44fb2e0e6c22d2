"""SuperBPE's training time against plain BPE's on the same corpus at the same vocabulary size.

Run from the repository root::

    python tests/bench/bench_superbpe.py                      # gutenberg30, vocab 32000
    python tests/bench/bench_superbpe.py --corpus ../shared/corpora/tinyshakespeare.txt --vocab 8000

Each training runs in a fresh subprocess (``--worker ALGO``, `method_runs.time_training`) that times only
the training (counting with the processes ``tokviz train`` would use, then every merge; reading the
file is left out), in wall-clock and CPU seconds (this process and its counting children), in rounds
of both (``--reps``, 3 by default: medians, so that one run disturbed by the machine does not make
the ratio). SuperBPE's
transition is four fifths of the merges (the paper's setting, ``--transition``). The parent prints the
seconds, SuperBPE's stage-2 set-up time and the ratios to BPE (target: at most 2x), and writes
``tests/bench/results/superbpe.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from method_runs import CORPUS, RESULTS, corpus_or_skip, median_run, run_workers, time_training

LIMIT = 2.0


def worker(algo: str, path: str, vocab: int, transition: float) -> dict:
    from tokviz.core.bpe.timeline import TrainSettings
    from tokviz.core.superbpe.timeline import SuperBpeSettings

    t = int(transition * (vocab - 256))
    settings = TrainSettings(vocab_size=vocab) if algo == "bpe" else SuperBpeSettings(vocab_size=vocab, transition=t)
    marks = {}

    def on_step(step, seconds: float) -> None:
        if algo == "bpe":
            return
        if step.rank == t - 1:
            marks["stage_one_seconds"] = seconds
        elif step.rank == t:
            marks["first_stage_two_merge_seconds"] = seconds

    out = time_training(settings, path, on_step=on_step)
    tl = out.pop("timeline")
    if algo == "superbpe":
        out.update(transition=tl.transition, superwords=tl.superwords())
    return {**out, **marks}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=("bpe", "superbpe"))
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--transition", type=float, default=0.8, help="the transition as a fraction of the merges")
    ap.add_argument("--reps", type=int, default=3, help="rounds of both trainings (medians; the ratio of medians)")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.corpus, args.vocab, args.transition)))
        return 0
    path = corpus_or_skip(args.corpus)
    if path is None:
        return 0
    rounds = [run_workers(__file__, ("bpe", "superbpe"),
                          ["--corpus", str(path), "--vocab", str(args.vocab), "--transition", str(args.transition)])
              for _ in range(max(1, args.reps))]
    runs = {algo: median_run([r[algo] for r in rounds]) for algo in ("bpe", "superbpe")}
    ratio = runs["superbpe"]["seconds"] / runs["bpe"]["seconds"]
    cpu_ratio = runs["superbpe"]["cpu_seconds"] / runs["bpe"]["cpu_seconds"]
    sb = runs["superbpe"]
    if "first_stage_two_merge_seconds" in sb and "stage_one_seconds" in sb:
        print(f"stage-2 set-up: {sb['first_stage_two_merge_seconds'] - sb['stage_one_seconds']:.1f} s; "
              f"{sb.get('superwords', 0):,} superword tokens")
    each = ", ".join(f"{r['superbpe']['seconds'] / r['bpe']['seconds']:.2f}x" for r in rounds)
    print(f"SuperBPE / BPE, medians of {len(rounds)}: {ratio:.2f}x wall, {cpu_ratio:.2f}x cpu "
          f"(target at most {LIMIT}x); each round's wall ratio: {each}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "superbpe.json").write_text(json.dumps({
        "corpus": path.name, "vocab_size": args.vocab, "transition_fraction": args.transition, "runs": runs,
        "rounds": rounds,
        "ratio": ratio, "cpu_ratio": cpu_ratio, "limit": LIMIT, "machine": platform.platform(),
        "cpus": os.cpu_count(), "load_average": os.getloadavg(),
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
