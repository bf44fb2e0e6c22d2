"""Training speed as users meet it: the whole ``tokviz train`` process against Hugging Face tokenizers.

Run from the repository root (after ``pip install -e '.[test,bench]'``)::

    python tests/bench/bench_training.py            # 1, 4, 16, 32 MB of gutenberg30, 3 repetitions
    python tests/bench/bench_training.py --quick    # 1 and 4 MB, 1 repetition (a smoke run)

Both sides run as fresh child processes, alternating, and are timed from start to exit (start-up,
imports, reading, counting, merging and writing the model): tokviz is ``python -m tokviz train
FILE -o MODEL.json --vocab-size 32000 --quiet`` (bytes, GPT-4 split); Hugging Face is this file's
``--worker hf``: the same GPT-4 split regex with ByteLevel, ``BpeTrainer`` with its default threads,
``tokenizer.json`` written. The corpus prefixes are the first 1, 4, 16 MB and the whole of
gutenberg30 (31.8 MB), cut at a line end. Memory is sampled every 10 ms over the whole process
tree (forked children included): the sum of RSS (shared copy-on-write pages counted in every
process, the pessimistic figure) and the sum of PSS (shared pages divided among the processes that
share them, what the tree really holds). The table gives medians, the ratio to HF, seconds per MB
(near-linear growth keeps it flat) and the targets of the full corpus: <= 1.0x HF, <= 512 MiB.
JSON goes to ``tests/bench/results/training.json``; ``/proc/loadavg`` is printed beside the figures.
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
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUTENBERG = ROOT.parent / "shared" / "corpora" / "gutenberg30.txt"
RESULTS = ROOT / "tests" / "bench" / "results"
MB = 1 << 20
SIZES_MB = (1, 4, 16, 32)  # 32: the whole file (31.8 MB)
VOCAB = 32000
TARGET_RATIO = 1.0
TARGET_MIB = 512


# tiktoken's cl100k pattern and the cut tokviz's counting makes between a letter and a line break
# followed by a letter, written out so the HF process does not import tokviz (checked against
# tokviz's own in `check_constants`)
GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
SAFE_CUT = r"(?<=\p{L})(?=\r?\n\p{L})"


def check_constants() -> None:
    from tokviz.core.text import chunks
    from tokviz.core.text.split import GPT4_SPLIT_PATTERN

    # white box: the HF process must not import tokviz, so the cut is written out here and must stay tokviz's
    assert GPT4_PATTERN == GPT4_SPLIT_PATTERN and SAFE_CUT == chunks.SAFE_BOUNDARY.pattern


def pieces_of(text: str, size: int = 1_000_000) -> list[str]:
    """`text` in pieces of about `size` characters cut where the split pattern always cuts
    (tokviz.core.text.chunks.safe_slices)."""
    import regex

    cut, out, pos = regex.compile(SAFE_CUT), [], 0
    while len(text) - pos > size * 1.5:
        m = cut.search(text, pos + size, len(text) - size // 2)
        if m is None:
            break
        out.append(text[pos:m.start()])
        pos = m.start()
    out.append(text[pos:])
    return out


def hf_worker(path: str, vocab: int, out: str) -> None:
    """Train HF's BpeTrainer as bench_core does (the same chunks as tokviz) and save tokenizer.json."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    text = Path(path).read_text(encoding="utf-8")
    # ~1 MB pieces cut where the split pattern always cuts: HF can use all its threads and sees
    # exactly the chunks tokviz sees
    pieces = pieces_of(text)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GPT4_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(pieces, trainer=trainer)
    tok.save(out)


# -- measuring a process tree ---------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    """ppid -> [pid] of every process on the system (from /proc/*/stat)."""
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _tree(root: int) -> list[int]:
    kids, out, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, ()))
    return out


def _kib(path: str, key: bytes) -> int:
    try:
        with open(path, "rb") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Peak sum of RSS and of PSS over a process and its descendants, sampled every 10 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_rss, self.peak_pss, self.max_procs = pid, 0, 0, 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            pids = _tree(self.pid)
            rss = sum(_kib(f"/proc/{p}/status", b"VmRSS:") for p in pids)
            pss = sum(_kib(f"/proc/{p}/smaps_rollup", b"Pss:") for p in pids)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.max_procs = max(self.max_procs, len(pids))
            self.stop.wait(0.01)


def run_measured(cmd: list[str]) -> dict:
    """Run `cmd` to completion; wall seconds from start to exit and the tree's peak memory."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed: {err.strip().splitlines()[-1:]}")
    return {"seconds": seconds, "rss_mib": sampler.peak_rss / 1024, "pss_mib": sampler.peak_pss / 1024,
            "maxrss_mib": usage.ru_maxrss / 1024, "processes": sampler.max_procs}


# -- the benchmark --------------------------------------------------------------------------------


def write_prefix(src: Path, size_mb: int, folder: Path) -> Path:
    """The first `size_mb` MB of `src` cut at a line end (the whole file when it is smaller)."""
    data = src.read_bytes()
    if size_mb * MB < len(data):
        data = data[: data.rindex(b"\n", 0, size_mb * MB) + 1]
    out = folder / f"gutenberg30_{size_mb}MB.txt"
    out.write_bytes(data)
    return out


def tokviz_cmd(path: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "tokviz", "train", str(path), "-o", str(out),
            "--vocab-size", str(VOCAB), "--quiet"]


def hf_cmd(path: Path, out: Path) -> list[str]:
    return [sys.executable, __file__, "--worker", "hf", str(path), str(VOCAB), str(out)]


def merges_of(tokviz_model: Path, hf_json: Path) -> tuple[int, int]:
    ours = json.loads(tokviz_model.read_text())["steps"]["rows"]
    theirs = json.loads(hf_json.read_text())["model"]["merges"]
    return len(ours), len(theirs)


def bench_size(size_mb: int, path: Path, reps: int, folder: Path) -> dict:
    mbytes = path.stat().st_size / MB
    runs: dict[str, list[dict]] = {"tokviz": [], "hf": []}
    model, hf_json = folder / f"tokviz_{size_mb}.json", folder / f"hf_{size_mb}.json"
    for r in range(reps):
        order = [("tokviz", tokviz_cmd(path, model)), ("hf", hf_cmd(path, hf_json))]
        for name, cmd in order if r % 2 == 0 else order[::-1]:  # alternate who goes first
            res = run_measured(cmd)
            runs[name].append(res)
            print(f"  {size_mb:>2} MB {name:6s} rep {r + 1}: {res['seconds']:6.2f} s, RSS {res['rss_mib']:4.0f} MiB, "
                  f"PSS {res['pss_mib']:4.0f} MiB, load {os.getloadavg()[0]:.2f}", flush=True)
    ours, theirs = merges_of(model, hf_json)
    row = {"size_mb": size_mb, "megabytes": round(mbytes, 2), "reps": reps, "merges": [ours, theirs]}
    for name, rs in runs.items():
        row[name] = {
            "seconds": round(statistics.median(r["seconds"] for r in rs), 3),
            "all_seconds": [round(r["seconds"], 3) for r in rs],
            "rss_mib": round(max(r["rss_mib"] for r in rs)),
            "pss_mib": round(max(r["pss_mib"] for r in rs)),
            "maxrss_mib": round(max(r["maxrss_mib"] for r in rs)),
            "processes": max(r["processes"] for r in rs),
        }
    row["ratio"] = round(row["tokviz"]["seconds"] / row["hf"]["seconds"], 3)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=("hf",))
    ap.add_argument("args", nargs="*")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES_MB), metavar="MB")
    ap.add_argument("--quick", action="store_true", help="1 and 4 MB, one repetition")
    opts = ap.parse_args()
    if opts.worker:
        hf_worker(opts.args[0], int(opts.args[1]), opts.args[2])
        return 0
    if not GUTENBERG.exists():
        print(f"bench: needs {GUTENBERG} (the shared corpora)", file=sys.stderr)
        return 2
    check_constants()
    sizes, reps = (([1, 4], 1) if opts.quick else (opts.sizes, opts.reps))
    load_before = Path("/proc/loadavg").read_text().strip()
    print(f"training gutenberg30 prefixes at vocab {VOCAB:,}, GPT-4 split, bytes; {reps} rep(s); "
          f"loadavg {load_before}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for size in sizes:
            rows.append(bench_size(size, write_prefix(GUTENBERG, size, folder), reps, folder))
    load_after = Path("/proc/loadavg").read_text().strip()
    print()
    print(f"{'size':>8} {'tokviz s':>9} {'HF s':>7} {'ratio':>6} {'s/MB':>6} {'HF s/MB':>8} "
          f"{'RSS MiB':>8} {'PSS MiB':>8} {'HF MiB':>7} {'merges':>13}")
    for r in rows:
        t, h = r["tokviz"], r["hf"]
        print(f"{r['megabytes']:>6.1f}MB {t['seconds']:>9.2f} {h['seconds']:>7.2f} {r['ratio']:>5.2f}x "
              f"{t['seconds'] / r['megabytes']:>6.3f} {h['seconds'] / r['megabytes']:>8.3f} "
              f"{t['rss_mib']:>8} {t['pss_mib']:>8} {h['rss_mib']:>7} {r['merges'][0]:>6}/{r['merges'][1]:<6}")
    full = next((r for r in rows if r["size_mb"] >= 32), None)
    met = None
    if full is not None:
        met = full["ratio"] <= TARGET_RATIO and full["tokviz"]["rss_mib"] <= TARGET_MIB
        print(f"whole corpus: {full['ratio']:.2f}x HF (target <= {TARGET_RATIO}x), peak RSS of the tree "
              f"{full['tokviz']['rss_mib']} MiB, PSS {full['tokviz']['pss_mib']} MiB (target <= {TARGET_MIB} MiB): "
              f"{'met' if met else 'NOT met'}")
    print(f"loadavg before {load_before}; after {load_after}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "training.json").write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "vocab": VOCAB, "reps": reps,
        "python": platform.python_version(), "cpu_count": os.cpu_count(),
        "loadavg_before": load_before, "loadavg_after": load_after, "rows": rows,
        "targets": {"ratio": TARGET_RATIO, "peak_mib": TARGET_MIB}, "met": met,
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
