"""``tokviz compare`` as users run it, a whole process each time, against a reference process that
reads the same file and counts the same tokens with the tokenizers' own libraries.

    python tests/bench/bench_compare_cli.py [--reps N] [--skip-mistral] [--memory]

Rows: the three OpenAI encodings by name (``r50k_base cl100k_base o200k_base``, their
``.tiktoken`` files found through ``$TOKVIZ_VOCAB_DIR``) on the whole ``udhr2_all.txt``, without
and with ``--by-document``, against tiktoken's ``encode_ordinary``; Mistral's ``tokenizer.model``
and ``tokenizer.json`` against ``sentencepiece`` and ``tokenizers``. Each figure is the median of N
runs (default 3) of the CPU time of the child process (user + system, `os.wait4`'s usage of that
child: what a loaded shared machine changes least) and of its wall time, with the ratio to the
reference's; the child's peak RSS too, and the peak of the sum of RSS over its process tree (models
are measured side by side in children of their own), sampled every 10 ms in one more run that is
not timed (sampling takes a share of a core from a run that uses both). ``--memory`` adds the peak RSS of one run on the 31.8 MB
``gutenberg30.txt``. The load average (``os.getloadavg``) is written next to the figures: trust
the CPU ratios on a busy machine. Progress is off (``--quiet``). Target: wall ratio <= 1.5 for the
tiktoken rows (the time the user waits for the answer, the issue's measure; tokviz measures its
models side by side on both cores, so its CPU ratio is higher, and it is printed beside).
Writes ``tests/bench/results/compare_cli.json``; data comes from ``../shared`` (skips what is missing).
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
from datetime import date
from pathlib import Path

from process_tree import wait_sampled

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpora" / "udhr2_all.txt"
BIG = SHARED / "corpora" / "gutenberg30.txt"
VOCAB = SHARED / "vocab" / "tiktoken"
MISTRAL = SHARED / "vocab" / "hf" / "mistral-7b-v0.1"
NAMES = ("r50k_base", "cl100k_base", "o200k_base")
TARGET_RATIO = 1.5
RESULTS = ROOT / "tests" / "bench" / "results"

# The reference: read the file, load each tokenizer with its own library, count its tokens as plain
# text (special-token strings as text); prints {label: tokens} as JSON.
REFERENCE = r"""
import json, sys
kind, path, corpus = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(corpus, encoding="utf-8").read()
counts = {}
if kind == "tiktoken":
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS
    for name in sys.argv[4:]:
        k = KNOWN_ENCODINGS[name]
        enc = tiktoken.Encoding(name, pat_str=k.pattern, special_tokens=dict(k.special_tokens),
                                mergeable_ranks=load_tiktoken_bpe(f"{path}/{name}.tiktoken"))
        counts[name] = len(enc.encode_ordinary(text))
elif kind == "sentencepiece":
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    counts["tokenizer.model"] = len(sp.encode(text))
else:
    import tokenizers
    tok = tokenizers.Tokenizer.from_file(path)
    counts["tokenizer.json"] = len(tok.encode(text, add_special_tokens=False).ids)
print(json.dumps(counts))
"""


def run_child(argv: list[str], env: dict, *, sample: bool = False) -> tuple[float, float, int, str, str, int, int]:
    """CPU seconds (user + system, of this child and what it waited for), wall seconds, peak RSS
    of one process (KB), stdout, stderr, exit status and, with `sample`, the peak RSS of the whole
    process tree (KB, sampled every 10 ms; else 0). Timed runs are not sampled: reading /proc
    every 10 ms takes a share of a core, which slows a run whose children use both cores and
    not a reference that uses one."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, cwd=ROOT, env=env)
        if sample:
            status, usage, tree = wait_sampled(p, 0.01)
        else:
            _, status, usage = os.wait4(p.pid, 0)
            tree = 0
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss, out.read().decode(), err.read().decode(),
                p.returncode, tree)


def environment() -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TOKVIZ_VOCAB_DIR=str(VOCAB))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def cli_argv(models: list[str], corpus: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "tokviz", "compare", *models, "-f", str(corpus), "--json", "--quiet", *extra]


def tokens_of(stdout: str) -> dict[str, int]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    return {Path(r["model"]).name.removesuffix(".tiktoken"): r["tokens"] for r in rows}


def measure(label: str, cli: list[str], ref: list[str], reps: int, env: dict) -> dict:
    """Median CPU and wall of the CLI and of the reference, run alternately (same machine state)."""
    cpu, wall, rss, trees, rcpu, rwall = [], [], [], [], [], []
    tokens, ref_tokens = {}, {}
    for _ in range(reps):
        c, w, m, out, err, code, tree = run_child(cli, env)
        if code != 0:
            raise SystemExit(f"{label}: tokviz compare failed ({code}): {err.strip()}")
        cpu.append(c)
        wall.append(w)
        rss.append(m)
        trees.append(tree)
        tokens = tokens_of(out)
        c, w, _, out, err, code, _ = run_child(ref, env)
        if code != 0:
            raise SystemExit(f"{label}: reference failed ({code}): {err.strip()}")
        rcpu.append(c)
        rwall.append(w)
        ref_tokens = json.loads(out)
    trees.append(run_child(cli, env, sample=True)[6])  # memory: one more run, sampled, not timed
    row = {"row": label, "cpu_s": round(statistics.median(cpu), 3), "wall_s": round(statistics.median(wall), 3),
           "ref_cpu_s": round(statistics.median(rcpu), 3), "ref_wall_s": round(statistics.median(rwall), 3),
           "peak_rss_mb": round(max(rss) / 1024, 1), "peak_tree_rss_mb": round(max(trees) / 1024, 1), "tokens": tokens, "ref_tokens": ref_tokens,
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    row["cpu_ratio"] = round(row["cpu_s"] / row["ref_cpu_s"], 3)
    row["wall_ratio"] = round(row["wall_s"] / row["ref_wall_s"], 3)
    print(f"{label:<40} cpu {row['cpu_s']:6.2f}s / {row['ref_cpu_s']:5.2f}s = {row['cpu_ratio']:4.2f}x   "
          f"wall {row['wall_s']:6.2f}s / {row['ref_wall_s']:5.2f}s = {row['wall_ratio']:4.2f}x   "
          f"rss {row['peak_rss_mb']:.0f} MB (tree {row['peak_tree_rss_mb']:.0f} MB)   load {row['load_average'][0]:.1f}   "
          f"tokens {'=' if tokens == ref_tokens else '!='} reference", flush=True)
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--skip-mistral", action="store_true", help="only the three tiktoken encodings")
    p.add_argument("--memory", action="store_true", help="also the peak RSS on gutenberg30.txt")
    args = p.parse_args()
    missing = [f for f in [CORPUS, *(VOCAB / f"{n}.tiktoken" for n in NAMES)] if not f.exists()]
    if missing:
        print(f"skipped: missing {', '.join(map(str, missing))}")
        return 0
    env = environment()
    reference = [sys.executable, "-c", REFERENCE]
    rows = []
    ref = [*reference, "tiktoken", str(VOCAB), str(CORPUS), *NAMES]
    for label, extra in (("3 tiktoken", []), ("3 tiktoken --by-document", ["--by-document"])):
        rows.append(measure(label, cli_argv(list(NAMES), CORPUS, extra), ref, args.reps, env))
    if not args.skip_mistral:
        for name, kind in (("tokenizer.model", "sentencepiece"), ("tokenizer.json", "tokenizers")):
            path = MISTRAL / name
            if not path.exists():
                continue
            for label, extra in ((f"mistral {name}", []), (f"mistral {name} --by-document", ["--by-document"])):
                rows.append(measure(label, cli_argv([str(path)], CORPUS, extra), [*reference, kind, str(path), str(CORPUS)],
                                    max(1, args.reps - 2), env))
    memory = None
    if args.memory and BIG.exists():
        c, w, m, _, _, code, tree = run_child(cli_argv(list(NAMES), BIG, []), env, sample=True)
        memory = {"corpus": BIG.name, "mb": round(BIG.stat().st_size / 1e6, 1), "peak_rss_mb": round(m / 1024, 1),
                  "peak_tree_rss_mb": round(tree / 1024, 1),
                  "cpu_s": round(c, 2), "wall_s": round(w, 2), "exit": code}
        print(f"gutenberg30 ({memory['mb']} MB), 3 tiktoken: peak RSS {memory['peak_rss_mb']:.0f} MB "
              f"(tree {memory['peak_tree_rss_mb']:.0f} MB), "
              f"cpu {c:.1f}s, wall {w:.1f}s", flush=True)
    RESULTS.mkdir(exist_ok=True)
    machine = {"python": platform.python_version(), "cores": os.cpu_count(), "date": date.today().isoformat()}
    (RESULTS / "compare_cli.json").write_text(json.dumps(
        {"machine": machine, "target_wall_ratio": TARGET_RATIO, "reps": args.reps, "rows": rows, "memory": memory},
        indent=2, ensure_ascii=False) + "\n")
    ok = all(r["tokens"] == r["ref_tokens"] for r in rows)
    return 0 if ok and all(r["wall_ratio"] <= TARGET_RATIO for r in rows[:2]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
