"""What the training-method benchmarks share: one training timed in a fresh process against plain BPE's.

A worker (`time_training`) counts the corpus with the processes ``tokviz train`` would use, then makes
every step; reading the file is left out. It measures wall-clock seconds and CPU seconds of this
process and its counting children (``resource.getrusage``), and the peak memory. The parent
(`run_workers`) runs each algorithm in a fresh subprocess, so no run inherits another's caches, and
chooses the number of processes once for all of them (``$TOKVIZ_BENCH_PROCESSES``): chosen by each
worker, the load the run before leaves behind had one method count with two processes and the
other with one.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "gutenberg30.txt"
RESULTS = ROOT / "tests" / "bench" / "results"
PROCESSES_VAR = "TOKVIZ_BENCH_PROCESSES"  # the processes every worker of one run counts with


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (the counting ones)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def time_training(settings, path: str, *, on_step: Callable[[object, float], None] | None = None) -> dict:
    """Train `settings` on the file `path`; `on_step(step, seconds so far)` sees every step.
    Returns the seconds, CPU seconds, counting seconds, merges, vocabulary size, corpus lengths
    before and after, peak memory and a hash of the merge list (``merges_sha256``: the same merges give the
    same hash, so a faster version can be checked against the last); the timeline is under ``"timeline"``."""
    from tokviz.core.processes.parallel import choose_processes
    from tokviz.core.registry import make_training

    text = Path(path).read_text(encoding="utf-8")
    t0, c0 = time.perf_counter(), cpu_seconds()
    training = make_training(settings, texts=[text])
    del text
    processes = int(os.environ.get(PROCESSES_VAR) or choose_processes())
    training.prepare(processes=processes)
    prepared, prepared_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    for step in training.steps():
        if on_step is not None:
            on_step(step, time.perf_counter() - t0)
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    tl = training.timeline
    digest = hashlib.sha256(repr([s.pair for s in tl.steps]).encode()).hexdigest()  # after the timing
    return {"seconds": seconds, "cpu_seconds": cpu,
            "prepare_seconds": prepared, "prepare_cpu_seconds": prepared_cpu, "processes": processes,
            "merges": tl.n_merges, "vocab_size": tl.vocab_size, "corpus_length": tl.corpus_length,
            "final_length": tl.length_at(tl.n_merges),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "merges_sha256": digest,
            "timeline": tl}


def run_workers(script: str, algos: tuple[str, ...], args: list[str]) -> dict[str, dict]:
    """Run ``script --worker ALGO ARGS...`` for each algorithm in a fresh process; each prints one
    JSON line last. Prints a line a run and returns {algo: its figures}."""
    from tokviz.core.processes.parallel import choose_processes

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.setdefault(PROCESSES_VAR, str(choose_processes()))
    runs = {}
    for algo in algos:
        out = subprocess.run([sys.executable, script, "--worker", algo, *args], capture_output=True, text=True,
                             env=env, check=True)
        r = runs[algo] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{algo:9s} {r['processes']} proc {r['seconds']:8.1f} s wall  {r['cpu_seconds']:8.1f} s cpu  (counting "
              f"{r['prepare_seconds']:.1f} s)  peak {r['peak_rss_mb']:,.0f} MB  corpus -> {r['final_length']:,} tokens  "
              f"merges sha256 {r['merges_sha256'][:16]}")
    return runs


def median_run(runs: list[dict]) -> dict:
    """The run of median wall time among `runs` of one algorithm, with the median CPU seconds."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    mid = dict(ordered[len(ordered) // 2])
    cpu = sorted(r["cpu_seconds"] for r in runs)
    mid["cpu_seconds"] = cpu[len(cpu) // 2]
    return mid


def corpus_or_skip(corpus: str) -> Path | None:
    """The corpus file, or None after saying on stderr that it is not there."""
    path = Path(corpus)
    if not path.is_file():
        print(f"skipped: {path} is not there (../shared/corpora)", file=sys.stderr)
        return None
    return path
