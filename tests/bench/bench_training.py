"""Training speed as users meet it: the whole ``tokviz train`` process against the reference trainers.

Run from the repository root (after ``pip install -e '.[test,bench]'``)::

    python tests/bench/bench_training.py            # 1, 4, 16, 32 MB of gutenberg30, 3 repetitions
    python tests/bench/bench_training.py --quick    # 1 and 4 MB, 1 repetition (a smoke run)
    python tests/bench/bench_training.py --algorithm wordpiece   # tinyshakespeare and 10 MB, vocab 8000
    python tests/bench/bench_training.py --algorithm unigram     # the same against sentencepiece

BPE's reference is HF trained as its documentation does, ``Tokenizer.train([FILE])`` (the file
read line by line); ``--algorithm bpe-pieces`` feeds it the text in memory instead, cut into the
1 MB pieces tokviz counts (``train_from_iterator``: the very chunks tokviz sees, and a far larger
peak). WordPiece runs against HF's ``WordPieceTrainer`` (whitespace words, ``[UNK]``), Unigram against
``spm.SentencePieceTrainer`` (``model_type=unigram``, its defaults), both at the same vocabulary
size, into ``training_wordpiece.json`` / ``training_unigram.json``. CPU seconds (user + system of
the process and the children it waited for) and the load average are recorded for every run.

Both sides run as fresh child processes, alternating, and are timed from start to exit (start-up,
imports, reading, counting, merging and writing the model): tokviz is ``python -m tokviz train
FILE -o MODEL.json --vocab-size 32000 --quiet`` (bytes, GPT-4 split); Hugging Face is this file's
``--worker hf``: the same GPT-4 split regex with ByteLevel, ``BpeTrainer`` with its default threads,
``tokenizer.json`` written (or ``--worker hf-files``). The corpus prefixes are the first 1, 4, 16 MB and the whole of
gutenberg30 (31.8 MB), cut at a line end. Memory is sampled every 10 ms over the whole process
tree (forked children included): the sum of RSS (shared copy-on-write pages counted in every
process, the pessimistic figure) and the sum of PSS (shared pages divided among the processes that
share them, what the tree really holds). The table gives medians, the ratio to HF, seconds per MB
(near-linear growth keeps it flat) and the targets (BPE from 4 MB on: <= 1.0x HF's wall time and
<= 1.2x its peak RSS; WordPiece and Unigram <= 1.5x the reference's wall time). BPE's JSON goes to ``tests/bench/results/training.json``; ``/proc/loadavg`` is printed beside the figures.
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
TINY = ROOT.parent / "shared" / "corpora" / "tinyshakespeare.txt"
RESULTS = ROOT / "tests" / "bench" / "results"
MB = 1 << 20
SIZES_MB = (1, 4, 16, 32)  # 32: the whole file (31.8 MB)
VOCAB = 32000
# wall time and peak RSS of the tree against the reference's (BPE: from 4 MB on)
TARGETS = {"bpe": {"ratio": 1.0, "rss_ratio": 1.2}, "bpe-pieces": {"ratio": 1.0, "rss_ratio": 1.2}, "wordpiece": {"ratio": 1.5}, "unigram": {"ratio": 1.5}}


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


def _hf_bpe(vocab: int):
    """HF's BPE tokenizer with the GPT-4 split and ByteLevel, and its `BpeTrainer` at `vocab`."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GPT4_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    return tok, trainer


def hf_worker(path: str, vocab: int, out: str) -> None:
    """Train HF's BpeTrainer as bench_core does (the same chunks as tokviz) and save tokenizer.json."""
    text = Path(path).read_text(encoding="utf-8")
    # ~1 MB pieces cut where the split pattern always cuts: HF can use all its threads and sees
    # exactly the chunks tokviz sees
    pieces = pieces_of(text)
    tok, trainer = _hf_bpe(vocab)
    tok.train_from_iterator(pieces, trainer=trainer)
    tok.save(out)


def hf_files_worker(path: str, vocab: int, out: str) -> None:
    """`hf_worker` as its documentation trains: ``Tokenizer.train([path])``, the file read line by
    line (HF's peak memory is then its word counts, not the text)."""
    tok, trainer = _hf_bpe(vocab)
    tok.train([path], trainer=trainer)
    tok.save(out)


def hf_wordpiece_worker(path: str, vocab: int, out: str) -> None:
    """HF's WordPieceTrainer on whitespace words (tokviz's WordPiece default split), tokenizer.json saved."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab, special_tokens=["[UNK]"], show_progress=False)
    tok.train([path], trainer=trainer)
    tok.save(out)


def spm_unigram_worker(path: str, vocab: int, out: str) -> None:
    """sentencepiece's Unigram trainer with its defaults at `vocab` pieces (the model written to `out`)."""
    import sentencepiece as spm

    spm.SentencePieceTrainer.train(input=path, model_prefix=out, vocab_size=vocab, model_type="unigram",
                                   minloglevel=2)


WORKERS = {"hf": hf_worker, "hf-files": hf_files_worker, "hf-wordpiece": hf_wordpiece_worker, "spm-unigram": spm_unigram_worker}
# algorithm -> (the reference's worker, its name in the table, the default vocabulary)
REFERENCES = {"bpe": ("hf-files", "HF BpeTrainer, train(files)", 32000),
              "bpe-pieces": ("hf", "HF BpeTrainer, train_from_iterator(1 MB pieces)", 32000), "wordpiece": ("hf-wordpiece", "HF WordPieceTrainer", 8000),
              "unigram": ("spm-unigram", "sentencepiece", 8000)}


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
    """Peak sum of RSS and of PSS over a process and its descendants, RSS sampled every 10 ms and
    PSS every 100 ms: reading ``smaps_rollup`` walks the whole address space under the process's
    memory lock, which at every tick cost a 240 MiB training 0.05 s of its 0.8 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_rss, self.peak_pss, self.max_procs = pid, 0, 0, 0
        self.stop = threading.Event()

    def run(self) -> None:
        tick = 0
        while not self.stop.is_set():
            pids = _tree(self.pid)
            rss = sum(_kib(f"/proc/{p}/status", b"VmRSS:") for p in pids)
            self.peak_rss = max(self.peak_rss, rss)
            if tick % 10 == 0:
                self.peak_pss = max(self.peak_pss, sum(_kib(f"/proc/{p}/smaps_rollup", b"Pss:") for p in pids))
            tick += 1
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
    cpu = usage.ru_utime + usage.ru_stime  # the process and the children it waited for
    sampler.stop.set()
    sampler.join()
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed: {err.strip().splitlines()[-1:]}")
    return {"seconds": seconds, "cpu_seconds": cpu, "load": os.getloadavg()[0], "rss_mib": sampler.peak_rss / 1024, "pss_mib": sampler.peak_pss / 1024,
            "maxrss_mib": usage.ru_maxrss / 1024, "processes": sampler.max_procs}


# -- the benchmark --------------------------------------------------------------------------------


def write_prefix(src: Path, size_mb: int, folder: Path) -> Path:
    """The first `size_mb` MB of `src` cut at a line end (the whole file when it is smaller);
    size 0 stands for tinyshakespeare."""
    if size_mb == 0:
        return TINY
    data = src.read_bytes()
    if size_mb * MB < len(data):
        data = data[: data.rindex(b"\n", 0, size_mb * MB) + 1]
    out = folder / f"gutenberg30_{size_mb}MB.txt"
    out.write_bytes(data)
    return out


def tokviz_cmd(path: Path, out: Path, algorithm: str = "bpe", vocab: int = VOCAB) -> list[str]:
    return [sys.executable, "-m", "tokviz", "train", str(path), "-o", str(out), "--algorithm", algorithm,
            "--vocab-size", str(vocab), "--quiet"]


def hf_cmd(path: Path, out: Path, worker: str = "hf", vocab: int = VOCAB) -> list[str]:
    return [sys.executable, __file__, "--worker", worker, str(path), str(vocab), str(out)]


def merges_of(tokviz_model: Path, hf_json: Path) -> tuple[int, int]:
    """BPE: the number of merges of each side."""
    ours = json.loads(tokviz_model.read_text())["steps"]["rows"]
    theirs = json.loads(hf_json.read_text())["model"]["merges"]
    return len(ours), len(theirs)


def bench_size(size_mb: int, path: Path, reps: int, folder: Path, algorithm: str = "bpe", vocab: int = VOCAB) -> dict:
    mbytes = path.stat().st_size / MB
    worker = REFERENCES[algorithm][0]
    runs: dict[str, list[dict]] = {"tokviz": [], "hf": []}
    model, hf_json = folder / f"tokviz_{size_mb}.json", folder / f"hf_{size_mb}.json"
    label = f"{size_mb:>2} MB" if size_mb else "tiny "
    for r in range(reps):
        order = [("tokviz", tokviz_cmd(path, model, algorithm.split("-")[0], vocab)), ("hf", hf_cmd(path, hf_json, worker, vocab))]
        for name, cmd in order if r % 2 == 0 else order[::-1]:  # alternate who goes first
            res = run_measured(cmd)
            runs[name].append(res)
            print(f"  {label} {name:6s} rep {r + 1}: {res['seconds']:6.2f} s, CPU {res['cpu_seconds']:6.2f} s, "
                  f"RSS {res['rss_mib']:4.0f} MiB, PSS {res['pss_mib']:4.0f} MiB, load {res['load']:.2f}", flush=True)
    merges = list(merges_of(model, hf_json)) if algorithm.startswith("bpe") else None
    row = {"size_mb": size_mb, "corpus": path.name, "megabytes": round(mbytes, 2), "reps": reps, "merges": merges}
    for name, rs in runs.items():
        row[name] = {
            "seconds": round(statistics.median(r["seconds"] for r in rs), 3),
            "all_seconds": [round(r["seconds"], 3) for r in rs],
            "cpu_seconds": round(statistics.median(r["cpu_seconds"] for r in rs), 3),
            "all_cpu_seconds": [round(r["cpu_seconds"], 3) for r in rs],
            "loads": [round(r["load"], 2) for r in rs],
            "rss_mib": round(max(r["rss_mib"] for r in rs)),
            "pss_mib": round(max(r["pss_mib"] for r in rs)),
            "maxrss_mib": round(max(r["maxrss_mib"] for r in rs)),
            "processes": max(r["processes"] for r in rs),
        }
    row["ratio"] = round(row["tokviz"]["seconds"] / row["hf"]["seconds"], 3)
    row["cpu_ratio"] = round(row["tokviz"]["cpu_seconds"] / row["hf"]["cpu_seconds"], 3)
    row["rss_ratio"] = round(row["tokviz"]["rss_mib"] / max(row["hf"]["rss_mib"], 1), 3)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=tuple(WORKERS))
    ap.add_argument("args", nargs="*")
    ap.add_argument("--algorithm", choices=tuple(REFERENCES), default="bpe",
                    help="bpe-pieces: BPE against HF fed the 1 MB pieces tokviz counts (train_from_iterator)")
    ap.add_argument("--vocab", type=int, help="default: bpe 32000, wordpiece and unigram 8000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", metavar="MB",
                    help="gutenberg30 prefixes, 0 for tinyshakespeare (default: bpe 1 4 16 32, others 0 10)")
    ap.add_argument("--quick", action="store_true", help="1 and 4 MB, one repetition")
    opts = ap.parse_args()
    if opts.worker:
        WORKERS[opts.worker](opts.args[0], int(opts.args[1]), opts.args[2])
        return 0
    if not GUTENBERG.exists():
        print(f"bench: needs {GUTENBERG} (the shared corpora)", file=sys.stderr)
        return 2
    check_constants()
    algo = opts.algorithm
    _, reference, default_vocab = REFERENCES[algo]
    vocab = opts.vocab or default_vocab
    bpe = algo.startswith("bpe")
    sizes = opts.sizes or (list(SIZES_MB) if bpe else [0, 10])
    sizes, reps = (([1, 4], 1) if opts.quick else (sizes, opts.reps))
    target = TARGETS[algo]
    load_before = Path("/proc/loadavg").read_text().strip()
    print(f"training {algo} at vocab {vocab:,} against {reference}; {reps} rep(s); loadavg {load_before}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for size in sizes:
            rows.append(bench_size(size, write_prefix(GUTENBERG, size, folder), reps, folder, algo, vocab))
    load_after = Path("/proc/loadavg").read_text().strip()
    print()
    print(f"{'corpus':>8} {'tokviz s':>9} {'ref s':>7} {'ratio':>6} {'CPU s':>7} {'ref CPU':>7} {'CPU ratio':>9} "
          f"{'RSS MiB':>8} {'PSS MiB':>8} {'ref MiB':>7} {'RSS ratio':>9} {'merges':>13}")
    met = True
    for r in rows:
        t, h = r["tokviz"], r["hf"]
        merges = f"{r['merges'][0]:>6}/{r['merges'][1]:<6}" if r["merges"] else ""
        print(f"{r['megabytes']:>6.1f}MB {t['seconds']:>9.2f} {h['seconds']:>7.2f} {r['ratio']:>5.2f}x "
              f"{t['cpu_seconds']:>7.2f} {h['cpu_seconds']:>7.2f} {r['cpu_ratio']:>8.2f}x "
              f"{t['rss_mib']:>8} {t['pss_mib']:>8} {h['rss_mib']:>7} {r['rss_ratio']:>8.2f}x {merges}")
        if not bpe or r["size_mb"] >= 4:
            met &= r["ratio"] <= target["ratio"] and r["rss_ratio"] <= target.get("rss_ratio", float("inf"))
    print(f"targets {target}: {'met' if met else 'NOT met'}; loadavg before {load_before}; after {load_after}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "training.json" if algo == "bpe" else f"training_{algo}.json"
    (RESULTS / name).write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "algorithm": algo, "reference": reference,
        "vocab": vocab, "reps": reps, "python": platform.python_version(), "cpu_count": os.cpu_count(),
        "loadavg_before": load_before, "loadavg_after": load_after, "rows": rows, "targets": target, "met": met,
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
