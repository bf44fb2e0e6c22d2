"""Core benchmarks: tokviz against the reference libraries, measured in the same run.

Run from the repository root (after ``pip install -e '.[test,bench]'``)::

    python tests/bench/bench_core.py                # every row, 3 repetitions
    python tests/bench/bench_core.py --only train_8k --reps 5

Each measurement runs in a fresh subprocess (``--worker NAME``); tokviz and the reference
alternate. The worker times only the work itself (after imports and reading the input) and
reports its peak memory; the parent prints a table of medians, ratios and peak RSS of the whole
process tree (the worker plus any pool processes it started) and writes it as JSON to
``tests/bench/results/core.json``. Data comes from ``../shared``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
GUTENBERG = SHARED / "corpora" / "gutenberg30.txt"
SHAKESPEARE = SHARED / "corpora" / "tinyshakespeare.txt"
CL100K = SHARED / "vocab" / "tiktoken" / "cl100k_base.tiktoken"
RESULTS = ROOT / "tests" / "bench" / "results"
ENCODE_CHARS = 10_000_000

# -- workers (run in a subprocess; print one JSON line) ------------------------------------------


def _peak_mb() -> dict:
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"peak_mb": me + kids, "peak_self_mb": me, "peak_children_mb": kids}


def w_tokviz_train(path: str, split: str, vocab: int, model_out: str | None) -> dict:
    from tokviz.core import Training, TrainSettings, save_timeline
    from tokviz.core.processes.parallel import choose_processes

    text = Path(path).read_text(encoding="utf-8")
    t0 = time.perf_counter()
    training = Training(TrainSettings(split=split, vocab_size=vocab), texts=[text])
    training.prepare(processes=choose_processes())  # as ``tokviz train`` counts
    timeline = training.run()
    seconds = time.perf_counter() - t0
    if model_out:
        save_timeline(timeline, model_out)
    return {"seconds": seconds, "merges": timeline.n_merges}


def w_hf_train(path: str, split: str, vocab: int) -> dict:
    from bench_training import pieces_of  # tokviz's counting cut, written out (checked there)
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    from tokviz.core.text.split import SPLIT_PRESETS

    text = Path(path).read_text(encoding="utf-8")
    # Feed ~1 MB pieces cut where the split pattern always cuts, so HF can use all its threads
    # and still sees exactly the chunks tokviz sees.
    pieces = pieces_of(text, 1_000_000)
    t0 = time.perf_counter()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(SPLIT_PRESETS[split]), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(pieces, trainer=trainer)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "merges": len(json.loads(tok.to_str())["model"]["merges"])}


def w_oracle_train(path: str, vocab: int) -> dict:
    sys.path.insert(0, str(ROOT / "tests" / "core"))
    from tokviz.core.bpe.reference import oracle_counts, oracle_train  # the slow reference trainer of the tests

    text = Path(path).read_text(encoding="utf-8")
    t0 = time.perf_counter()
    steps = oracle_train(oracle_counts([text], "none"), units="bytes", max_merges=vocab - 256)
    return {"seconds": time.perf_counter() - t0, "merges": len(steps)}


def _encode_text() -> str:
    with open(GUTENBERG, encoding="utf-8") as f:
        return f.read(ENCODE_CHARS)


def w_tokviz_encode(out_ids: str | None) -> dict:
    from tokviz.core.loading import load_tokenizer
    from tokviz.core.processes.parallel import choose_processes

    text = _encode_text()
    t_load = time.perf_counter()
    tok = load_tokenizer(str(CL100K))
    load = time.perf_counter() - t_load
    t0 = time.perf_counter()
    ids = tok.encode_ids(text, processes=choose_processes())  # as ``tokviz encode`` does
    seconds = time.perf_counter() - t0
    if out_ids:
        Path(out_ids).write_text(json.dumps(ids))
    return {"seconds": seconds, "load_seconds": load, "tokens": len(ids)}


def w_tiktoken_encode(out_ids: str | None) -> dict:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from tokviz.core.text.split import GPT4_SPLIT_PATTERN

    text = _encode_text()
    enc = tiktoken.Encoding(
        "cl100k_base", pat_str=GPT4_SPLIT_PATTERN,
        mergeable_ranks=load_tiktoken_bpe(str(CL100K)), special_tokens={},
    )
    t0 = time.perf_counter()
    ids = enc.encode_ordinary(text)
    seconds = time.perf_counter() - t0
    if out_ids:
        Path(out_ids).write_text(json.dumps(ids))
    return {"seconds": seconds, "tokens": len(ids)}


def w_jump(model: str, samples: int = 300) -> dict:
    from tokviz.core import load_timeline

    timeline = load_timeline(model)
    tok = timeline.tokenizer()
    text = SHAKESPEARE.read_text(encoding="utf-8")
    rng = random.Random(1234)
    times = []
    for _ in range(samples):
        start = rng.randrange(0, len(text) - 10_000)
        piece = text[start:start + 10_000]
        k = rng.randrange(0, timeline.n_merges + 1)
        t0 = time.perf_counter()
        tok.encode(piece, step=k)
        times.append(time.perf_counter() - t0)
    times.sort()
    return {
        "seconds": statistics.median(times),
        "p95": times[int(0.95 * (len(times) - 1))],
        "max": times[-1],
        "merges": timeline.n_merges,
    }


WORKERS = {
    "tokviz_train": w_tokviz_train,
    "hf_train": w_hf_train,
    "oracle_train": w_oracle_train,
    "tokviz_encode": w_tokviz_encode,
    "tiktoken_encode": w_tiktoken_encode,
    "jump": w_jump,
}

# -- parent -----------------------------------------------------------------------------------


def run_worker(name: str, *args) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, json.dumps(list(args))]
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{name} failed: {tail[0]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(pairs, reps: int) -> dict:
    """Run (label, worker, args) alternately `reps` times; collect per-label results."""
    out: dict[str, list[dict]] = {label: [] for label, _, _, _ in pairs}
    for r in range(reps):
        for label, worker, args, label_reps in pairs:
            if r < label_reps:
                res = run_worker(worker, *args)
                out[label].append(res)
                print(f"  {label:9s} rep {r + 1}: {res['seconds']:.3f} s, {res['peak_mb']:.0f} MB",
                      flush=True)
    return out


def summarise(row: str, target: str, results: dict, ours: str, ref: str | None, extra=None) -> dict:
    med = {k: statistics.median(x["seconds"] for x in v) for k, v in results.items() if v}
    peak = {k: max(x["peak_mb"] for x in v) for k, v in results.items() if v}
    entry = {
        "row": row,
        "target": target,
        "tokviz_s": round(med[ours], 3),
        "tokviz_peak_mb": round(peak[ours]),
        "reps": {k: len(v) for k, v in results.items()},
    }
    if ref:
        entry.update({
            "reference_s": round(med[ref], 3),
            "reference_peak_mb": round(peak[ref]),
            "ratio": round(med[ours] / med[ref], 3),
        })
    if extra:
        entry.update(extra)
    return entry


def bench_train(name, path, split, vocab, reps, target, model_out=None):
    print(f"{name}: train {Path(path).name}, split {split}, vocab {vocab}", flush=True)
    res = measure([
        ("tokviz", "tokviz_train", [str(path), split, vocab, model_out], reps),
        ("reference", "hf_train", [str(path), split, vocab], reps),
    ], reps)
    merges = {res["tokviz"][0]["merges"], res["reference"][0]["merges"]}
    return summarise(name, target, res, "tokviz", "reference", {"merges": sorted(merges)})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker")
    ap.add_argument("args", nargs="?")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--oracle-reps", type=int, default=1)
    ap.add_argument("--only", action="append", help="run only these rows")
    opts = ap.parse_args()
    if opts.worker:
        result = WORKERS[opts.worker](*json.loads(opts.args or "[]"))
        result.update(_peak_mb())
        print(json.dumps(result))
        return 0
    if not GUTENBERG.exists():
        print(f"bench: needs {GUTENBERG} (the shared corpora)", file=sys.stderr)
        return 2
    want = set(opts.only or ["train_32k", "train_8k", "train_none", "encode", "jump"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model = str(Path(tmp) / "gutenberg32k.json")
        if "train_32k" in want or "jump" in want:
            reps = opts.reps if "train_32k" in want else 1
            r = bench_train("train_32k", GUTENBERG, "gpt4", 32000, reps,
                            "time <= 2.0x reference; peak <= 1024 MB", model_out=model)
            r["met"] = r["ratio"] <= 2.0 and r["tokviz_peak_mb"] <= 1024
            if "train_32k" in want:
                rows.append(r)
        if "train_8k" in want:
            r = bench_train("train_8k", GUTENBERG, "gpt4", 8000, opts.reps, "time <= 2.0x reference")
            r["met"] = r["ratio"] <= 2.0
            rows.append(r)
        if "train_none" in want:
            print("train_none: tinyshakespeare, split none, vocab 1024 vs the naive oracle", flush=True)
            res = measure([
                ("tokviz", "tokviz_train", [str(SHAKESPEARE), "none", 1024, None], opts.reps),
                ("reference", "oracle_train", [str(SHAKESPEARE), 1024], opts.oracle_reps),
            ], max(opts.reps, opts.oracle_reps))
            r = summarise("train_none", ">= 100x faster than the oracle", res, "tokviz", "reference")
            r["speedup"] = round(1 / r["ratio"], 1)
            r["met"] = r["speedup"] >= 100
            rows.append(r)
        if "encode" in want:
            print("encode: first 10 MB of gutenberg30 with cl100k_base", flush=True)
            ids_a, ids_b = str(Path(tmp) / "a.json"), str(Path(tmp) / "b.json")
            res = measure([
                ("tokviz", "tokviz_encode", [ids_a], opts.reps),
                ("reference", "tiktoken_encode", [ids_b], opts.reps),
            ], opts.reps)
            same = Path(ids_a).read_text() == Path(ids_b).read_text()
            r = summarise("encode", "identical ids; time <= 1.5x tiktoken", res, "tokviz", "reference",
                          {"identical_ids": same,
                           "load_s": round(statistics.median(x["load_seconds"] for x in res["tokviz"]), 3)})
            r["met"] = same and r["ratio"] <= 1.5
            rows.append(r)
        if "jump" in want:
            print("jump: encode 10 KB at a random step of the 32k gutenberg30 timeline", flush=True)
            res = run_worker("jump", model)
            rows.append({
                "row": "jump", "target": "p95 <= 20 ms",
                "tokviz_s": round(res["seconds"], 4), "p95_ms": round(res["p95"] * 1000, 2),
                "max_ms": round(res["max"] * 1000, 2), "tokviz_peak_mb": round(res["peak_mb"]),
                "met": res["p95"] <= 0.020,
            })
    machine = {
        "python": platform.python_version(),
        "cpu": _cpu_name(),
        "cores": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }
    print_table(rows, machine)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "core.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")
    return 0 if all(r.get("met") for r in rows) else 1


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def print_table(rows, machine) -> None:
    print(f"\nmachine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, {machine['date']}")
    print("| benchmark | tokviz | reference | ratio | tokviz peak | reference peak | target | met |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["row"] == "jump":
            print(f"| jump | median {r['tokviz_s'] * 1000:.1f} ms, p95 {r['p95_ms']} ms | - | - | "
                  f"{r['tokviz_peak_mb']} MB | - | {r['target']} | {'yes' if r['met'] else 'NO'} |")
            continue
        ratio = f"{r['ratio']:.2f}x" if "speedup" not in r else f"{r['speedup']:.0f}x faster"
        print(f"| {r['row']} | {r['tokviz_s']:.2f} s | {r['reference_s']:.2f} s | {ratio} | "
              f"{r['tokviz_peak_mb']} MB | {r['reference_peak_mb']} MB | {r['target']} | "
              f"{'yes' if r['met'] else 'NO'} |")


if __name__ == "__main__":
    sys.exit(main())
