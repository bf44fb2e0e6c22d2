"""Training time of BPE, WordPiece and Unigram on the same corpus at the same vocabulary size.

Run from the repository root::

    python tests/bench/bench_algorithms.py              # tinyshakespeare, vocab 8000, 1 repetition
    python tests/bench/bench_algorithms.py --reps 3 --vocab 8000

Each algorithm trains with its own default settings (BPE: bytes + GPT-4 split; WordPiece and
Unigram: whitespace words) through `tokviz.core.registry.make_training`, in a fresh subprocess
(``--worker ALGO``, the algorithms alternating) that times only the training (reading the file is
left out), in wall-clock and CPU seconds (CPU is steadier on a shared machine), twice: the first
training of the process, then the same training again in it. The first includes what a process
pays once (WordPiece's and Unigram's compiled kernels: importing numba and loading them from its
cache, about 0.3 s); the second is what every later training in the app pays. Then the path a user runs from
the command line, as a whole process: ``tokviz train CORPUS -o MODEL --vocab-size N --algorithm
ALGO --quiet`` (start-up, reading, training, saving the model; one untimed warm-up run each, then
alternating), with its peak memory (`bench_encode_paths.run_process`). And the first training of
WordPiece and Unigram in a process that ran their warm-up first (what the window does when one of
them is chosen, `tokviz.engine.training.warm_up`). The parent prints median seconds
and the ratios to BPE (target: at most 2x) and writes ``tests/bench/results/algorithms.json``
(``--plain``: with the compiled kernels off, ``TOKVIZ_JIT=0``, into ``algorithms_plain.json``).
Data comes from ``../shared``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "tinyshakespeare.txt"
RESULTS = ROOT / "tests" / "bench" / "results"
ALGORITHMS = ("bpe", "wordpiece", "unigram")
LIMIT = 2.0  # the target: WordPiece and Unigram each within 2x of BPE
WARMED = ("wordpiece", "unigram")  # the algorithms with a warm-up (`AlgorithmSpec.warm_up`)


def settings_for(algo: str, vocab: int):
    from tokviz.core.bpe.settings import TrainSettings
    from tokviz.core.unigram.settings import UnigramSettings
    from tokviz.core.wordpiece.settings import WordPieceSettings

    return {"bpe": TrainSettings(vocab_size=vocab), "wordpiece": WordPieceSettings(vocab_size=vocab),
            "unigram": UnigramSettings(vocab_size=vocab)}[algo]


def worker(algo: str, path: str, vocab: int, warm: bool = False) -> dict:
    from tokviz.core import jit
    from tokviz.core.processes.parallel import choose_processes
    from tokviz.core.registry import SPECS, make_training

    def train(prefix: str) -> dict:  # the timeline is dropped on return, before the next training
        t0, c0 = time.perf_counter(), time.process_time()
        training = make_training(settings_for(algo, vocab), texts=[text])
        training.prepare(processes=choose_processes())  # as ``tokviz train`` counts
        prepared = time.perf_counter() - t0
        timeline = training.run()
        return {f"{prefix}seconds": time.perf_counter() - t0, f"{prefix}cpu_seconds": time.process_time() - c0,
                f"{prefix}prepare_seconds": prepared, "steps": timeline.n_steps, "vocab_size": timeline.vocab_size}

    text = Path(path).read_text(encoding="utf-8")
    _ = SPECS[algo].training_type  # its modules imported untimed, as a window's start imports them
    if warm and SPECS[algo].warm_up is not None:  # what the window does once the algorithm is chosen
        SPECS[algo].warm_up()
    out = {**train(""), **train("again_")}
    # asked only now: `jit.enabled()` imports numba, which the first training must pay for itself
    return {**out, "jit": jit.enabled()}


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def run_cli(algo: str, path: Path, vocab: int, out: Path, plain: bool = False) -> dict:
    """`tokviz train` as a whole process: wall seconds and peak memory (`run_process`)."""
    from bench_encode_paths import run_process

    env = dict(os.environ, PYTHONPATH=str(ROOT), **({"TOKVIZ_JIT": "0"} if plain else {}))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tokviz has its bytecode
    cmd = [sys.executable, "-m", "tokviz", "train", str(path), "-o", str(out), "--vocab-size", str(vocab),
           "--algorithm", algo, "--quiet"]
    return run_process(cmd, out.with_suffix(".out"), env)


def run_worker(algo: str, path: Path, vocab: int, plain: bool = False, warm: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **({"TOKVIZ_JIT": "0"} if plain else {}))
    out = subprocess.run([sys.executable, __file__, "--worker", algo, "--corpus", str(path), "--vocab", str(vocab),
                          *(["--warm"] if warm else [])],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=ALGORITHMS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--plain", action="store_true", help="compiled kernels off (TOKVIZ_JIT=0)")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.corpus, args.vocab, args.warm)))
        return 0
    path = Path(args.corpus)
    if not path.is_file():
        print(f"skipped: {path} is not there (../shared/corpora)", file=sys.stderr)
        return 0
    runs_of: dict[str, list[dict]] = {algo: [] for algo in ALGORITHMS}
    with tempfile.TemporaryDirectory() as tmp:
        models = {algo: Path(tmp) / f"{algo}.json" for algo in ALGORITHMS}
        for algo in ALGORITHMS:  # warm-up: bytecode and the kernels' cache, as an installed tokviz has them
            run_cli(algo, path, args.vocab, models[algo], args.plain)
        for _ in range(args.reps):  # alternate the algorithms: load changes hit them alike
            for algo in ALGORITHMS:
                run = run_worker(algo, path, args.vocab, args.plain)
                cli = run_cli(algo, path, args.vocab, models[algo], args.plain)
                warmed = run_worker(algo, path, args.vocab, args.plain, warm=True) if algo in WARMED else run
                runs_of[algo].append({**run, "cli_seconds": cli["seconds"], "cli_peak_mb": cli["peak_mb"],
                                      "warmed_seconds": warmed["seconds"]})
    keys = ("seconds", "cpu_seconds", "prepare_seconds", "again_seconds", "again_cpu_seconds", "cli_seconds",
            "cli_peak_mb", "warmed_seconds")
    rows = {algo: {**{k: statistics.median(r[k] for r in runs) for k in keys}, "jit": runs[0]["jit"],
                   "steps": runs[0]["steps"], "vocab_size": runs[0]["vocab_size"], "runs": len(runs)}
            for algo, runs in runs_of.items()}
    print(f"{path.name}, vocabulary {args.vocab:,}, median of {args.reps} run(s), compiled kernels "
          f"{'on' if rows['unigram']['jit'] else 'off'}, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; /proc/loadavg {_loadavg()}")
    print(f"{'':<10} {'first training of a process':^42} | {'trained again':^27} | {'tokviz train (process)':^24}")
    print(f"{'algorithm':<10} {'seconds':>8} {'prepare':>8} {'vs BPE':>7} {'CPU s':>6} {'CPU vs BPE':>10} | "
          f"{'seconds':>8} {'vs BPE':>7} {'CPU vs BPE':>10} | {'seconds':>8} {'vs BPE':>7} {'peak MiB':>8} "
          f"{'steps':>7} {'vocab':>7}")
    ok = {"": True, "again_": True, "cli_": True}
    for algo, r in rows.items():
        for prefix in ok:
            for kind in ("", "cpu_") if prefix != "cli_" else ("",):
                base = rows["bpe"][f"{prefix}{kind}seconds"]
                r[f"{prefix}{kind}ratio_vs_bpe"] = r[f"{prefix}{kind}seconds"] / base if base else float("nan")
            ok[prefix] &= r[f"{prefix}ratio_vs_bpe"] <= LIMIT
        print(f"{algo:<10} {r['seconds']:>8.2f} {r['prepare_seconds']:>8.2f} {r['ratio_vs_bpe']:>6.2f}x "
              f"{r['cpu_seconds']:>6.2f} {r['cpu_ratio_vs_bpe']:>9.2f}x | {r['again_seconds']:>8.2f} "
              f"{r['again_ratio_vs_bpe']:>6.2f}x {r['again_cpu_ratio_vs_bpe']:>9.2f}x | {r['cli_seconds']:>8.2f} "
              f"{r['cli_ratio_vs_bpe']:>6.2f}x {r['cli_peak_mb']:>8.0f} {r['steps']:>7,} {r['vocab_size']:>7,}")
    for algo in WARMED:
        u = rows[algo]
        print(f"{algo}'s first training in a window that warmed it up when it was chosen "
              f"(`tokviz.engine.training.warm_up`): {u['warmed_seconds']:.2f} s, "
              f"{u['warmed_seconds'] / rows['bpe']['seconds']:.2f}x BPE's first training")
    print(f"every algorithm within {LIMIT:g}x of BPE: first training of a process "
          f"{'yes' if ok[''] else 'NO'}; trained again {'yes' if ok['again_'] else 'NO'}; tokviz train as a "
          f"process {'yes' if ok['cli_'] else 'NO'}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "algorithms_plain.json" if args.plain else "algorithms.json"
    (RESULTS / name).write_text(json.dumps({
        "corpus": path.name, "vocab": args.vocab, "reps": args.reps, "python": platform.python_version(),
        "load_average": os.getloadavg(), "cpu_count": os.cpu_count(), "rows": rows,
    }, indent=2) + "\n")
    return 0 if all(ok.values()) else 1

if __name__ == "__main__":
    sys.exit(main())
