"""Encoding as users meet it: whole ``tokviz encode`` processes against tiktoken's, and many short texts.

Run from the repository root (after ``pip install -e '.[test,bench]'``)::

    python tests/bench/bench_encode_paths.py            # every row, 3 repetitions (~3 minutes)
    python tests/bench/bench_encode_paths.py --quick    # fewer lines, 1 MB texts, 2 repetitions
    python tests/bench/bench_encode_paths.py --only ids_en,lines --reps 5

Rows (issue #19):

- ``ids_en``: ``tokviz encode cl100k_base.tiktoken -f 10MB.txt --ids`` (the first 10,000,000
  characters of gutenberg30) against a Python script that reads the file (``utf-8-sig``, no newline
  translation), calls tiktoken's ``encode_ordinary`` and prints the ids space-separated. Both are
  whole processes (start-up, loading the ``.tiktoken`` file, reading, encoding, printing), their
  outputs must be byte-identical; wall time, CPU time (user + system, the forked half included) and
  peak memory of each process tree.
- ``ids_udhr``: the same with o200k_base over all of udhr2_all.txt (~380 languages);
  ``ids_udhr_cl100k`` with cl100k_base.
- ``ids_{en,udhr}_1mb_{cl100k,o200k}``: the same on the first 1,000,000 characters of gutenberg30 and
  of udhr2, with each encoding: start-up and table building weigh most there.
- ``json``: ``tokviz encode --json`` (ids, tokens, spans) over udhr2 against ``--ids`` (the ratio
  asked for is json / ids).
- ``view``: the token view's encode (``encode`` with its spans read, on a worker thread as the
  view's engine runs it) against the ids path on the same thread, 1 MB of udhr2 with o200k_base,
  fresh processes alternating (at least 5 each), the tables built first as after loading.
- ``lines``: every k-th line of udhr2 encoded one call per line, for every shared tokenizer.json
  and ``.tiktoken`` file: tokviz's ``encode`` against tokenizers' ``encode`` (per-line
  microseconds of wall time, with the ratio of CPU times beside it for a busy machine; the same
  ids required). The reference of a ``.tiktoken`` file is the tokenizers
  BPE built from its ranks as transformers' ``TikTokenConverter`` does (`hf_from_tiktoken`); tiktoken's
  own ``encode`` is shown beside it for information.

The children run without ``PYTHONDONTWRITEBYTECODE`` (an installed tokviz has its bytecode) after
one untimed warm-up run; sides alternate; figures are medians. Peak memory is the largest sum of
VmRSS over the process tree (polled every 5 ms from /proc, so a forked helper counts in full) and
``ru_maxrss`` of the process. Writes ``tests/bench/results/encode_paths.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from process_tree import wait_sampled

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
GUTENBERG = SHARED / "corpora" / "gutenberg30.txt"
UDHR = SHARED / "corpora" / "udhr2_all.txt"
TIKTOKEN_DIR = SHARED / "vocab" / "tiktoken"
HF_DIR = SHARED / "vocab" / "hf"
RESULTS = ROOT / "tests" / "bench" / "results"
BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
ENCODE_CHARS = 10_000_000

TIKTOKEN_SCRIPT = """\
import sys
import tiktoken
enc = tiktoken.get_encoding(sys.argv[1])
with open(sys.argv[2], encoding="utf-8-sig", newline="") as f:
    text = f.read()
print(" ".join(map(str, enc.encode_ordinary(text))))
"""


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


# -- whole processes ------------------------------------------------------------------------------


def run_process(cmd: list[str], out_path: Path, env: dict) -> dict:
    """Run `cmd` with stdout to `out_path`: wall seconds, CPU seconds (user + system of the process
    and the children it waited for: a forked half counts), peak tree RSS (MiB), ru_maxrss (MiB)."""
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env)
        status, usage, peak = wait_sampled(proc)
        seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err[-2000:]}")
    return {"seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": peak / 1024,
            "maxrss_mb": usage.ru_maxrss / 1024}


def _child_env(cache_dir: Path) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tokviz has its bytecode
    env["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return env


def _tiktoken_cache(folder: Path) -> None:
    """tiktoken's cache layout (sha1 of the download address) over the shared files: offline."""
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        src = TIKTOKEN_DIR / f"{name}.tiktoken"
        dst = folder / hashlib.sha1((BLOB + f"{name}.tiktoken").encode()).hexdigest()
        if not dst.exists():
            dst.symlink_to(src)


def compare_processes(label: str, sides: dict[str, list[str]], reps: int, tmp: Path, env: dict,
                      same_output: tuple[str, str] | None) -> dict:
    """Run each side `reps` times (alternating, after a warm-up), medians per side."""
    outs = {name: tmp / f"{label}-{name}.out" for name in sides}
    for name, cmd in sides.items():  # warm-up: bytecode, page cache
        run_process(cmd, outs[name], env)
    if same_output is not None:
        a, b = (outs[n].read_bytes() for n in same_output)
        if a != b:
            raise SystemExit(f"{label}: the outputs of {same_output[0]} and {same_output[1]} differ")
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    for rep in range(reps):
        order = list(sides) if rep % 2 == 0 else list(reversed(sides))
        for name in order:
            runs[name].append(run_process(sides[name], outs[name], env))
    row = {"row": label, "loadavg": loadavg()}
    for name, rs in runs.items():
        row[name] = {
            "seconds": statistics.median(r["seconds"] for r in rs),
            "cpu": statistics.median(r["cpu"] for r in rs),
            "peak_mb": statistics.median(r["peak_mb"] for r in rs),
            "maxrss_mb": statistics.median(r["maxrss_mb"] for r in rs),
            "all_seconds": [round(r["seconds"], 3) for r in rs],
            "all_cpu": [round(r["cpu"], 3) for r in rs],
        }
    return row


# -- many short texts (worker: one tokenizer, one side) -------------------------------------------


def _bpe_split(ranks: dict[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    """tiktoken's merge loop over `token` joining only tokens of rank < `max_rank`."""
    parts = [bytes([b]) for b in token]
    while True:
        best, at = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < max_rank and (best is None or r < best):
                best, at = r, i
        if best is None:
            return parts
        parts[at:at + 2] = [parts[at] + parts[at + 1]]


def hf_from_tiktoken(name: str, out: Path) -> Path:
    """A tokenizer.json equivalent to tiktoken's `name` (transformers' ``TikTokenConverter``: each
    token's merge is the two parts tiktoken's loop leaves when only lower ranks may join; the
    split pattern as an isolated ``Split``, then byte-level characters), written to `out`."""
    from tiktoken_ext import openai_public
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    spec = getattr(openai_public, name)()  # what tiktoken's `get_encoding(name)` is built from
    ranks, specials = spec["mergeable_ranks"], spec["special_tokens"]
    table = [chr(b) for b in range(256)]  # GPT-2's bytes_to_unicode
    shift = 0
    for b in range(256):
        if not (33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255):
            table[b] = chr(256 + shift)
            shift += 1

    def chars(data: bytes) -> str:
        return "".join(table[b] for b in data)

    vocab = {chars(t): r for t, r in ranks.items()}
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) > 1:
            parts = _bpe_split(ranks, token, rank)
            if len(parts) == 2:
                merges.append((chars(parts[0]), chars(parts[1])))
    for s, i in specials.items():
        vocab[s] = i
    hf = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    # Oniguruma reads cl100k's possessive ``\p{N}{1,3}+`` as "one or more runs of 1-3 digits";
    # at the end of its alternative it means the same as the greedy ``{1,3}``
    pattern = spec["pat_str"].replace("{1,3}+", "{1,3}")
    hf.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    path = out / f"{name}.tokenizer.json"
    hf.save(str(path))
    return path


def w_lines(side: str, kind: str, path: str, stride: int) -> dict:
    lines = [ln for ln in UDHR.read_text(encoding="utf-8").splitlines()[::stride] if ln]
    if side == "tokviz":
        from tokviz.core.loading import load_tokenizer

        tok = load_tokenizer(path)
        if kind == "tiktoken":
            def encode(s):
                return tok.encode(s, allowed_special="all").ids
        else:
            def encode(s):
                return tok.encode(s).ids
    elif side == "tiktoken":
        import tiktoken

        enc = tiktoken.get_encoding(Path(path).stem)

        def encode(s):
            return enc.encode(s, allowed_special="all")
    else:
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(path)

        def encode(s):
            return hf.encode(s).ids
    digest = hashlib.sha256()
    t0, c0 = time.perf_counter(), time.process_time()
    results = [encode(s) for s in lines]
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    for ids in results:
        digest.update(json.dumps(ids).encode())
    return {"per_line_us": seconds / len(lines) * 1e6, "cpu_per_line_us": cpu / len(lines) * 1e6,
            "lines": len(lines), "ids_sha256": digest.hexdigest()}


def w_view(side: str, path: str, chars: int) -> dict:
    """One run of the token view's encode (``encode`` with spans read, on a worker thread as the
    view's engine does: no forked half) or of the ids path on the same thread, a fresh tokenizer
    with its tables built (``warm_up``, as after loading in the window)."""
    import threading

    from tokviz.core.loading import load_tokenizer

    text = UDHR.read_text(encoding="utf-8")[:chars]
    tok = load_tokenizer(path)
    tok.warm_up()
    out: dict = {}

    def work() -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        if side == "view":
            enc = tok.encode(text, allowed_special="all")
            enc.spans  # noqa: B018 - the view reads the spans first (`_encode`)
            ids = enc.ids
        else:
            ids = tok.encode_ids(text, allowed_special="all")
        out.update(seconds=time.perf_counter() - t0, cpu=time.thread_time() - c0,
                   ids_sha256=hashlib.sha256(json.dumps(ids).encode()).hexdigest())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    return out


def view_row(reps: int, env: dict, chars: int) -> dict:
    """The token view's encode against the ids path, fresh processes alternating, medians."""
    path = str(TIKTOKEN_DIR / "o200k_base.tiktoken")
    runs: dict[str, list[dict]] = {"view": [], "ids": []}
    for rep in range(max(reps, 5)):
        for side in (("view", "ids") if rep % 2 == 0 else ("ids", "view")):
            runs[side].append(run_worker(env, "view", side, path, str(chars)))
    med = {side: statistics.median(r["seconds"] for r in rs) for side, rs in runs.items()}
    cpu = {side: statistics.median(r["cpu"] for r in rs) for side, rs in runs.items()}
    same = len({r["ids_sha256"] for rs in runs.values() for r in rs}) == 1
    row = {"label": "view", "chars": chars, "view_s": med["view"], "ids_s": med["ids"],
           "ratio": med["view"] / med["ids"], "cpu_ratio": cpu["view"] / cpu["ids"], "same_ids": same,
           "loadavg": loadavg()}
    print(f"  token view's encode {med['view']:.3f} s, ids path {med['ids']:.3f} s: ratio {row['ratio']:.2f}x "
          f"(CPU {row['cpu_ratio']:.2f}x), same ids: {same}   load {loadavg()}", flush=True)
    return row


def tokenizers_shared() -> list[tuple[str, str, Path]]:
    out = [(name, "tiktoken", TIKTOKEN_DIR / f"{name}.tiktoken") for name in ("r50k_base", "cl100k_base", "o200k_base")]
    for folder in sorted(HF_DIR.iterdir()) if HF_DIR.is_dir() else []:
        if (folder / "tokenizer.json").is_file():
            out.append((folder.name, "hf", folder / "tokenizer.json"))
    return [t for t in out if t[2].is_file()]


def run_worker(env: dict, *args: str) -> dict:
    cmd = [sys.executable, __file__, "--worker", *args]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"worker {args} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def lines_table(reps: int, stride: int, env: dict, tmp: Path) -> list[dict]:
    """Per-line microseconds of tokviz against tokenizers (and tiktoken for `.tiktoken` files)."""
    rows = []
    for name, kind, path in tokenizers_shared():
        paths = {"tokviz": path, "tokenizers": path}
        if kind == "tiktoken":
            paths["tokenizers"] = run_worker(env, "convert", name, str(tmp))["path"]
            paths["tiktoken"] = path
        runs: dict[str, list[dict]] = {side: [] for side in paths}
        for rep in range(reps):
            order = list(paths) if rep % 2 == 0 else list(reversed(paths))
            for side in order:
                runs[side].append(run_worker(env, "lines", side, kind, str(paths[side]), str(stride)))
        same = len({r["ids_sha256"] for rs in runs.values() for r in rs}) == 1
        us = {side: statistics.median(r["per_line_us"] for r in rs) for side, rs in runs.items()}
        cpu = {side: statistics.median(r["cpu_per_line_us"] for r in rs) for side, rs in runs.items()}
        tv, rf = us["tokviz"], us["tokenizers"]
        rows.append({"tokenizer": name, "reference": "tokenizers", "lines": runs["tokviz"][0]["lines"],
                     "tokviz_us": tv, "reference_us": rf, "ratio": tv / rf, "same_ids": same,
                     "tiktoken_us": us.get("tiktoken"), "cpu_us": cpu,
                     "tiktoken_cpu_ratio": cpu["tokviz"] / cpu["tiktoken"] if "tiktoken" in cpu else None,
                     "cpu_ratio": cpu["tokviz"] / cpu["tokenizers"], "loadavg": loadavg()})
        extra = (f"   tiktoken {us['tiktoken']:6.1f} (CPU {cpu['tokviz'] / cpu['tiktoken']:5.2f}x)"
                 if "tiktoken" in us else "")
        print(f"  {name:22s} tokviz {tv:8.1f} us/line   tokenizers {rf:7.1f} us/line   "
              f"ratio {tv / rf:5.2f}x{extra}   (CPU time: {cpu['tokviz'] / cpu['tokenizers']:5.2f}x)   "
              f"same ids: {same}   load {loadavg().split()[0]}", flush=True)
    return rows


# -- main ---------------------------------------------------------------------------------------


def _keep_rows_not_run(result: dict, out: Path) -> None:
    """Keep in `result` the rows of the last results file that this run (``--only``) did not
    measure again, each with the date it was measured: the file stays one table of every row."""
    try:
        last = json.loads(out.read_text())
    except (OSError, ValueError):
        return
    done = {r["row"] for r in result["rows"]}
    kept = [dict(r, date=r.get("date", last.get("date"))) for r in last.get("rows", []) if r.get("row") not in done]
    for r in result["rows"]:
        r.setdefault("date", result["date"])
    result["rows"] = kept + result["rows"]
    for key in ("view", "lines"):
        if key not in result and key in last:
            result[key] = last[key]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 MB texts, every 40th line, 2 repetitions")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--only", default="ids_en,ids_udhr,ids_udhr_cl100k,ids_en_1mb_cl100k,ids_en_1mb_o200k,"
                    "ids_udhr_1mb_cl100k,ids_udhr_1mb_o200k,json,view,lines")
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        name, *rest = args.worker
        if name == "convert":
            print(json.dumps({"path": str(hf_from_tiktoken(rest[0], Path(rest[1])))}))
        elif name == "view":
            print(json.dumps(w_view(rest[0], rest[1], int(rest[2]))))
        else:
            assert name == "lines"
            print(json.dumps(w_lines(rest[0], rest[1], rest[2], int(rest[3]))))
        return 0
    if not GUTENBERG.is_file() or not UDHR.is_file():
        print(f"needs ../shared (looked in {SHARED})", file=sys.stderr)
        return 1
    reps = args.reps or (2 if args.quick else 3)
    stride = 40 if args.quick else 10
    only = set(args.only.split(","))
    print(f"bench_encode_paths: {platform.python_version()}, {os.cpu_count()} cores, reps {reps}, "
          f"load {loadavg()}", flush=True)
    result: dict = {"date": time.strftime("%Y-%m-%d %H:%M"), "python": platform.python_version(),
                    "cpus": os.cpu_count(), "reps": reps, "quick": args.quick, "loadavg_start": loadavg(),
                    "rows": []}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cache = tmp / "tiktoken-cache"
        cache.mkdir()
        _tiktoken_cache(cache)
        env = _child_env(cache)
        chars = 1_000_000 if args.quick else ENCODE_CHARS
        en = tmp / "gutenberg.txt"
        with open(GUTENBERG, encoding="utf-8-sig", newline="") as f:
            en.write_text(f.read(chars), encoding="utf-8", newline="")
        udhr = tmp / "udhr2.txt"
        with open(UDHR, encoding="utf-8-sig", newline="") as f:
            text = f.read()
        udhr.write_text(text[:chars] if args.quick else text, encoding="utf-8", newline="")
        script = tmp / "tiktoken_ids.py"
        script.write_text(TIKTOKEN_SCRIPT)
        py = sys.executable
        o200k = str(TIKTOKEN_DIR / "o200k_base.tiktoken")
        en_1mb, udhr_1mb = tmp / "gutenberg-1mb.txt", tmp / "udhr2-1mb.txt"
        en_1mb.write_text(en.read_text(encoding="utf-8")[:1_000_000], encoding="utf-8", newline="")
        with open(UDHR, encoding="utf-8-sig", newline="") as f:
            udhr_1mb.write_text(f.read(1_000_000), encoding="utf-8", newline="")

        def ids_row(label: str, title: str, name: str, path: Path) -> tuple:
            vocab = str(TIKTOKEN_DIR / f"{name}.tiktoken")
            return (label, title, {"tokviz": [py, "-m", "tokviz", "encode", vocab, "-f", str(path), "--ids"],
                                   "tiktoken": [py, str(script), name, str(path)]}, ("tokviz", "tiktoken"))

        udhr_title = f"udhr2_all{' (1 MB)' if args.quick else ''}"
        whole = [
            ids_row("ids_en", f"encode --ids, {chars:,} chars of gutenberg30, cl100k_base", "cl100k_base", en),
            ids_row("ids_udhr", f"encode --ids, {udhr_title}, o200k_base", "o200k_base", udhr),
            ids_row("ids_udhr_cl100k", f"encode --ids, {udhr_title}, cl100k_base", "cl100k_base", udhr),
            *(ids_row(f"ids_{kind}_1mb_{name.split('_')[0]}", f"encode --ids, 1,000,000 chars of {corpus}, {name}", name,
                      path)
              for kind, corpus, path in (("en", "gutenberg30", en_1mb), ("udhr", "udhr2_all", udhr_1mb))
              for name in ("cl100k_base", "o200k_base")),
            ("json", f"encode --json against --ids, {udhr_title}, o200k_base", {
                "json": [py, "-m", "tokviz", "encode", o200k, "-f", str(udhr), "--json"],
                "ids": [py, "-m", "tokviz", "encode", o200k, "-f", str(udhr), "--ids"],
            }, None),
        ]
        for label, title, sides, same in whole:
            if label not in only:
                continue
            print(f"{label}: {title}", flush=True)
            row = compare_processes(label, sides, reps, tmp, env, same)
            row["title"] = title
            a, b = list(sides)
            row["ratio"] = row[a]["seconds"] / row[b]["seconds"]
            row["cpu_ratio"] = row[a]["cpu"] / row[b]["cpu"]
            row["peak_ratio"] = row[a]["peak_mb"] / row[b]["peak_mb"]
            for name in sides:
                r = row[name]
                print(f"  {name:9s} {r['seconds']:6.2f} s, CPU {r['cpu']:6.2f} s  (runs {r['all_seconds']})  peak tree RSS "
                      f"{r['peak_mb']:6.0f} MiB  ru_maxrss {r['maxrss_mb']:6.0f} MiB", flush=True)
            print(f"  ratio {a}/{b}: time {row['ratio']:.2f}x, CPU {row['cpu_ratio']:.2f}x, peak memory "
                  f"{row['peak_ratio']:.2f}x   "
                  f"load {loadavg()}", flush=True)
            result["rows"].append(row)
        if "view" in only:
            print("view: the token view's encode (ids, tokens, spans) against the ids path, 1 MB of udhr2, "
                  "o200k_base, on a worker thread", flush=True)
            result["view"] = view_row(reps, env, 1_000_000)
        if "lines" in only:
            print(f"lines: every {stride}th line of udhr2, one encode call per line", flush=True)
            result["lines"] = lines_table(reps, stride, env, tmp)
    result["loadavg_end"] = loadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "encode_paths.json"
    _keep_rows_not_run(result, out)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}   load {loadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
