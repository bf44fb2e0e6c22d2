"""``tokviz compare`` on the whole ``udhr2_all.txt`` (5.7 MB) with r50k, cl100k and o200k, as a whole
process (start-up, loading, encoding, metrics, output), against tiktoken counting the same tokens
(loading the three files and ``encode_ordinary`` on the whole text) in this process.

    python tests/bench/bench_compare.py [--reps N]

Target: <= 10 s for the three models together, with and without ``--by-document``, on a 2-core
machine. Prints medians of N runs (default 3) and the ratio to tiktoken; writes
``tests/bench/results/compare.json``. Data comes from ``../shared`` (skips what is missing).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpora" / "udhr2_all.txt"
NAMES = ("r50k_base", "cl100k_base", "o200k_base")
TARGET_S = 10.0
RESULTS = ROOT / "tests" / "bench" / "results"


def run_cli(extra: list[str]) -> tuple[float, list[dict]]:
    """Seconds of one ``tokviz compare`` process, and its JSON rows."""
    paths = [str(SHARED / "vocab" / "tiktoken" / f"{n}.tiktoken") for n in NAMES]
    argv = [sys.executable, "-m", "tokviz", "compare", *paths, "-f", str(CORPUS), "--json", *extra]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"tokviz compare failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, [json.loads(line) for line in done.stdout.splitlines()]


def run_tiktoken() -> tuple[float, dict[str, int]] | None:
    """Seconds for tiktoken to load the three files and count the tokens of the whole text."""
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError:
        return None
    from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS

    t = time.perf_counter()
    text = CORPUS.read_text(encoding="utf-8")
    counts = {}
    for name in NAMES:
        k = KNOWN_ENCODINGS[name]
        enc = tiktoken.Encoding(name, pat_str=k.pattern, special_tokens=dict(k.special_tokens),
                                mergeable_ranks=load_tiktoken_bpe(str(SHARED / "vocab" / "tiktoken" / f"{name}.tiktoken")))
        counts[name] = len(enc.encode_ordinary(text))
    return time.perf_counter() - t, counts


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    missing = [f for f in [CORPUS, *(SHARED / "vocab" / "tiktoken" / f"{n}.tiktoken" for n in NAMES)] if not f.exists()]
    if missing:
        print(f"skipped: missing {', '.join(map(str, missing))}")
        return 0
    rows = []
    ref_times, ref_counts = [], {}
    for label, extra in (("compare", []), ("compare --by-document", ["--by-document"])):
        times = []
        for _ in range(args.reps):
            seconds, out = run_cli(extra)
            times.append(seconds)
            ref = run_tiktoken()  # alternated with the CLI runs: same machine state
            if ref is not None:
                ref_times.append(ref[0])
                ref_counts = ref[1]
        ours = statistics.median(times)
        tokens = {r["model"].rsplit("/", 1)[-1].removesuffix(".tiktoken"): r["tokens"] for r in out}
        same = not ref_counts or tokens == ref_counts
        rows.append({"row": label, "tokviz_s": round(ours, 3), "target_s": TARGET_S, "met": ours <= TARGET_S,
                     "tokens": tokens, "tokens_equal_tiktoken": same})
    theirs = statistics.median(ref_times) if ref_times else None
    print(f"udhr2_all.txt ({CORPUS.stat().st_size / 1e6:.1f} MB), {', '.join(NAMES)}; medians of {args.reps}")
    print(f"{'run':<24} {'tokviz':>8} {'tiktoken':>9} {'ratio':>6}  target <= {TARGET_S:.0f} s")
    for r in rows:
        r["tiktoken_s"] = None if theirs is None else round(theirs, 3)
        ratio = "-" if theirs is None else f"{r['tokviz_s'] / theirs:.2f}x"
        r["ratio"] = None if theirs is None else round(r["tokviz_s"] / theirs, 3)
        print(f"{r['row']:<24} {r['tokviz_s']:>7.2f}s {'-' if theirs is None else f'{theirs:.2f}s':>9} {ratio:>6}"
              f"  {'ok' if r['met'] else 'MISSED'}; token counts equal tiktoken's: {r['tokens_equal_tiktoken']}")
    RESULTS.mkdir(exist_ok=True)
    machine = {"python": platform.python_version(), "cores": os.cpu_count(), "date": date.today().isoformat()}
    (RESULTS / "compare.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["met"] and r["tokens_equal_tiktoken"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
