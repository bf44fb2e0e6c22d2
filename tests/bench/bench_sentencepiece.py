"""SentencePiece models: tokviz against the `sentencepiece` library, same files, ids identical.

    python tests/bench/bench_sentencepiece.py [--reps 5] [--big] [--model MODEL] [--plain]

Models: Mistral 7B's ``tokenizer.model`` (BPE with byte fallback, from ../shared) and a Unigram model
trained by `sentencepiece` on tinyshakespeare at run time (8,000 pieces, nmt_nfkc); with ``--big``
also a 250,000-piece Unigram model (the distinct words and word pieces of gutenberg30 and udhr2_all
scored by log frequency, written with the protobuf writer of the tests; about a minute to build),
or ``--model`` a model built before. For each model and 1 MB of text (the first MB of gutenberg30,
and of udhr2_all: ~380 languages):

- whole processes (without ``PYTHONDONTWRITEBYTECODE``: an installed tokviz has its bytecode):
  ``tokviz encode MODEL -f FILE --ids`` against a script that loads the model with sentencepiece, reads the file, encodes it and prints the ids the same way (outputs
  identical); CPU time (user + system of the child), wall time and peak RSS, medians;
- in process, tokviz's ``encode_ids`` against ``SentencePieceProcessor.encode`` on the text as
  one call and line by line (one call per line), each tokviz run on a freshly loaded model (cold
  caches) after two untimed runs and `warm_up` (a process that has encoded this much, or the window,
  has loaded the compiled Viterbi or merge loop: `tokviz.core.unigram.encoder.lattice.COMPILE_MIN`,
  `tokviz.core.formats.sentencepiece.bpe.COMPILE_MIN`), CPU and wall medians; and loading
  the model (then one word), in process and in a new interpreter (imports included).

Target: within 1.5x sentencepiece (CPU time: on a shared machine it moves less than wall time,
which is printed beside it) and peak memory within 2x. tokviz and sentencepiece run in turn,
`--reps` times each; the load average is printed beside the figures; JSON in
results/sentencepiece.json. With ``--big``, the big model as a T5/XLM-R-style tokenizer.json
against `tokenizers` too (no target). ``--plain`` runs tokviz without its compiled kernels
(``TOKVIZ_JIT=0``; results/sentencepiece_plain.json).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
N_PIECES = 250_000
TARGET = 1.5  # CPU time against sentencepiece's
MEMORY_TARGET = 2.0  # peak RSS against sentencepiece's
MISTRAL = SHARED / "vocab" / "hf" / "mistral-7b-v0.1" / "tokenizer.model"
SP_SCRIPT = """\
import sys
import sentencepiece as spm
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
with open(sys.argv[2], encoding="utf-8-sig", newline="") as f:
    text = f.read()
print(" ".join(map(str, sp.encode(text))))
"""


def build_model(folder: Path) -> Path:
    """A 250k-piece Unigram model from word and substring counts (see the module docstring)."""
    import sentencepiece as spm

    from tests.core.formats.sentencepiece.spm_helpers import model_bytes

    udhr = (SHARED / "corpora" / "udhr2_all.txt").read_text(encoding="utf-8")
    gut = (SHARED / "corpora" / "gutenberg30.txt").read_text(encoding="utf-8")[:4_000_000]
    small = folder / "small"
    spm.SentencePieceTrainer.train(sentence_iterator=iter(udhr.split("\n")[::10]), model_prefix=str(small),
                                   vocab_size=4000, model_type="unigram", minloglevel=2, num_threads=2)
    proto = small.with_suffix(".model").read_bytes()
    from tokviz.core.formats.sentencepiece.proto import parse_model_proto

    base = parse_model_proto(proto)
    counts: Counter[str] = Counter()
    for word in (udhr + "\n" + gut).split():
        w = "\u2581" + word
        counts[w] += 1
        for n in range(2, min(len(w), 16) + 1):
            for i in range(0, len(w) - n + 1):
                counts[w[i : i + n]] += 1
    chars = {c for p in base.pieces for c in p}
    extra = [p for p, _ in counts.most_common(N_PIECES * 2) if p not in set(base.pieces)]
    total = sum(counts.values())
    pieces = [(p, s, {1: "normal", 2: "unknown", 3: "control"}.get(t, "normal"))
              for p, s, t in zip(base.pieces, base.scores, base.types)]
    for p in extra[: N_PIECES - len(pieces)]:
        pieces.append((p, math.log(counts[p] / total) - 2.0, "normal"))
    del chars
    out = folder / "big.model"
    out.write_bytes(model_bytes(pieces, trainer={"model_type": 1},
                                normalizer={"name": "nmt_nfkc",
                                            "precompiled_charsmap": base.normalizer.precompiled_charsmap}))
    return out


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def tokenizer_json(model: Path, out: Path) -> Path:
    """The model as transformers' converters write a SentencePiece Unigram model (T5, XLM-R):
    Precompiled charsmap, runs of spaces replaced, Metaspace; written by `tokenizers`."""
    import tokenizers as tk
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    from tokviz.core.formats.sentencepiece.proto import parse_model_proto

    proto = parse_model_proto(model.read_bytes())
    unk = proto.types.index(2) if 2 in proto.types else 0
    tok = tk.Tokenizer(models.Unigram(list(zip(proto.pieces, proto.scores)), unk, False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(proto.normalizer.precompiled_charsmap),
                                           normalizers.Replace(tk.Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.save(str(out))
    return out


def _tokenizer_json_rows(model: Path, reps: int) -> dict:
    """The same model as a tokenizer.json: tokviz against `tokenizers` (no target; for the record)."""
    import tokenizers as tk

    from tokviz.core.loading import load_tokenizer

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = tokenizer_json(model, Path(tmp) / "unigram.json")
        ref_tok = tk.Tokenizer.from_file(str(path))
        for corpus in ("gutenberg30.txt", "udhr2_all.txt"):
            with open(SHARED / "corpora" / corpus, encoding="utf-8") as f:
                text = f.read(1_000_000)
            assert load_tokenizer(path).encode_ids(text) == ref_tok.encode(text).ids, f"ids differ on {corpus}"
            ours, ref = _alternate(lambda tok, t=text: tok.encode_ids(t), lambda t=text: ref_tok.encode(t).ids, reps,
                                   setup=lambda: load_tokenizer(path))
            print(f"tokenizer.json Unigram, 1 MB of {corpus:<16} tokviz {ours:6.3f} s  tokenizers {ref:6.3f} s  "
                  f"{ours / ref:5.2f}x   (load average {_loadavg()})")
            rows[f"tokenizer.json {corpus} one text"] = {"tokviz_s": ours, "tokenizers_s": ref, "ratio": ours / ref}
    return rows


def _fresh_process(code: str) -> None:
    """Run `code` in a new interpreter (the test of a user's first load: every import included)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tokviz has its bytecode
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)


CPU: dict[str, tuple[float, float]] = {}  # the last `_alternate`'s medians in CPU seconds


def _alternate(ours, ref, reps: int, setup=lambda: None) -> tuple[float, float]:
    """Medians of `reps` timings of ``ours(setup())`` and ``ref()``, run in turn (ours, ref, ours,
    ...) so that both sides meet the same load on a shared machine; `setup` is not timed. The
    medians of the process's CPU time go to ``CPU["last"]`` (less moved by other jobs' load)."""
    a, b, ca, cb = [], [], [], []
    for _ in range(reps):
        arg = setup()
        c, t = time.process_time(), time.perf_counter()
        ours(arg)
        a.append(time.perf_counter() - t)
        ca.append(time.process_time() - c)
        del arg
        c, t = time.process_time(), time.perf_counter()
        ref()
        b.append(time.perf_counter() - t)
        cb.append(time.process_time() - c)
    CPU["last"] = (statistics.median(ca), statistics.median(cb))
    return statistics.median(a), statistics.median(b)


def train_unigram(folder: Path) -> Path:
    """An 8,000-piece Unigram model trained by sentencepiece on tinyshakespeare (nmt_nfkc)."""
    import sentencepiece as spm

    spm.SentencePieceTrainer.train(input=str(SHARED / "corpora" / "tinyshakespeare.txt"),
                                   model_prefix=str(folder / "shakespeare"), vocab_size=8000, model_type="unigram",
                                   minloglevel=2, num_threads=2)
    return folder / "shakespeare.model"


# Runs its arguments as a child and writes that child's CPU seconds and peak RSS (KiB) to stderr: a
# process forked from the (large) benchmark itself would count the benchmark's pages in its peak.
LAUNCHER = """\
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss, file=sys.stderr)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _child(argv: list[str], out: Path) -> tuple[float, float, float]:
    """CPU seconds (user + system), wall seconds and peak RSS (MiB) of one process writing to `out`
    (wall time includes starting the small launcher, the same for both sides)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tokviz has its bytecode
    with open(out, "wb") as f:
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", LAUNCHER, *argv], check=False, stdout=f, stderr=subprocess.PIPE,
                           cwd=ROOT, env=env)
        wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}: {p.stderr.decode(errors='replace').strip()[-300:]}")
    cpu, rss = p.stderr.decode().split()[-2:]
    return float(cpu), wall, int(rss) / 1024


def whole_process_rows(label: str, model: Path, files: dict[str, Path], reps: int, tmp: Path) -> dict:
    """``tokviz encode MODEL -f FILE --ids`` against the sentencepiece script, whole processes."""
    script = tmp / "sp_ids.py"
    script.write_text(SP_SCRIPT, encoding="utf-8")
    rows = {}
    for corpus, path in files.items():
        ours_argv = [sys.executable, "-m", "tokviz", "encode", str(model), "-f", str(path), "--ids"]
        ref_argv = [sys.executable, str(script), str(model), str(path)]
        ours, ref = [], []
        for _ in range(reps):
            ours.append(_child(ours_argv, tmp / "ours.txt"))
            ref.append(_child(ref_argv, tmp / "ref.txt"))
        if (tmp / "ours.txt").read_bytes() != (tmp / "ref.txt").read_bytes():
            raise SystemExit(f"{label}: the ids of tokviz encode differ from sentencepiece's on {corpus}")
        (c, w, m), (rc, rw, rm) = ([statistics.median(x[k] for x in runs) for k in range(3)] for runs in (ours, ref))
        la = _loadavg()
        print(f"{label:<12} whole process, 1 MB of {corpus:<16} CPU {c:6.3f} / {rc:6.3f} s = {c / rc:5.2f}x  "
              f"wall {w:6.3f} / {rw:6.3f} s = {w / rw:5.2f}x  peak {m:4.0f} / {rm:4.0f} MiB = {m / rm:4.2f}x  "
              f"{_verdict(c / rc, m / rm)}   (load average {la})", flush=True)
        rows[f"{label} {corpus} whole process"] = {
            "cpu_tokviz_s": c, "cpu_sentencepiece_s": rc, "cpu_ratio": c / rc, "tokviz_s": w, "sentencepiece_s": rw,
            "ratio": w / rw, "peak_tokviz_mib": m, "peak_sentencepiece_mib": rm, "memory_ratio": m / rm, "loadavg": la}
    return rows


def _verdict(cpu_ratio: float, memory_ratio: float | None = None) -> str:
    ok = cpu_ratio <= TARGET and (memory_ratio is None or memory_ratio <= MEMORY_TARGET)
    return "ok" if ok else "MISSED"


def in_process_rows(label: str, path: Path, files: dict[str, Path], reps: int) -> dict:
    """Loading, then 1 MB as one text and line by line, in this process (see the module docstring)."""
    import sentencepiece as spm

    from tokviz.core.loading import load_tokenizer

    rows: dict = {}
    load, load_sp = _alternate(lambda _: load_tokenizer(path).encode_ids("warm up"),
                               lambda: spm.SentencePieceProcessor(model_file=str(path)).encode("warm up"), reps)
    cold, cold_sp = _alternate(lambda _: _fresh_process(f"from tokviz.core.loading import load_tokenizer; "
                                                        f"load_tokenizer({str(path)!r}).encode_ids('warm up')"),
                               lambda: _fresh_process(f"import sentencepiece as s; s.SentencePieceProcessor("
                                                      f"model_file={str(path)!r}).encode('warm up')"), 3)
    print(f"{label:<12} load + one word: tokviz {load:.3f} s, sentencepiece {load_sp:.3f} s; in a new process "
          f"(imports included): {cold:.3f} s, {cold_sp:.3f} s   (load average {_loadavg()})", flush=True)
    rows[f"{label} load"] = {"tokviz_s": load, "sentencepiece_s": load_sp}
    rows[f"{label} load in a new process"] = {"tokviz_s": cold, "sentencepiece_s": cold_sp}
    sp = spm.SentencePieceProcessor(model_file=str(path))
    for corpus, file in files.items():
        text = file.read_text(encoding="utf-8")
        lines = text.split("\n")
        for how, ours_fn, ref_fn in (
            ("one text", lambda tok, t=text: tok.encode_ids(t), lambda t=text: sp.encode(t)),
            ("by line", lambda tok, ls=lines: [tok.encode_ids(line) for line in ls],
             lambda ls=lines: [sp.encode(line) for line in ls]),
        ):
            tok = load_tokenizer(path)
            assert ours_fn(tok) == ref_fn(), f"ids differ on {corpus} {how}"
            # untimed: with the check, more than `COMPILE_MIN` characters, so the timed runs are
            # those of a process that has loaded the compiled Viterbi (the whole-process rows are
            # the first use)
            warm = load_tokenizer(path)
            warm.warm_up()  # as the window does for the tokenizer it opens (a BPE model's compiled loop)
            ours_fn(warm)
            del tok, warm
            # each run with a freshly loaded model: empty caches
            ours, ref = _alternate(ours_fn, ref_fn, reps, setup=lambda: load_tokenizer(path))
            cpu_ours, cpu_ref = CPU["last"]
            la = _loadavg()
            print(f"{label:<12} in process,    1 MB of {corpus:<16} {how:<9} CPU {cpu_ours:6.3f} / {cpu_ref:6.3f} s = "
                  f"{cpu_ours / cpu_ref:5.2f}x  wall {ours:6.3f} / {ref:6.3f} s = {ours / ref:5.2f}x  "
                  f"{_verdict(cpu_ours / cpu_ref)}   (load average {la})", flush=True)
            rows[f"{label} {corpus} {how}"] = {"tokviz_s": ours, "sentencepiece_s": ref, "ratio": ours / ref,
                                                "loadavg": la, "cpu_tokviz_s": cpu_ours, "cpu_sentencepiece_s": cpu_ref,
                                                "cpu_ratio": cpu_ours / cpu_ref}
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--big", action="store_true", help="also the 250,000-piece Unigram model (about a minute to build)")
    ap.add_argument("--model", help="a big model built before (implies --big without building one)")
    ap.add_argument("--plain", action="store_true", help="tokviz without its compiled kernels (TOKVIZ_JIT=0)")
    args = ap.parse_args(argv)
    if args.plain:
        os.environ["TOKVIZ_JIT"] = "0"
    results: dict = {"loadavg_before": _loadavg(), "target_cpu_ratio": TARGET, "target_memory_ratio": MEMORY_TARGET}
    print(f"load average {results['loadavg_before']} (2-core VM shared with other jobs: figures are noisy)")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        files = {}
        for corpus in ("gutenberg30.txt", "udhr2_all.txt"):
            with open(SHARED / "corpora" / corpus, encoding="utf-8") as f:
                files[corpus] = tmp / corpus
                files[corpus].write_text(f.read(1_000_000), encoding="utf-8")
        models = {"shakespeare": train_unigram(tmp)}
        if MISTRAL.exists():
            models = {"mistral": MISTRAL, **models}
        if args.model:
            models["big unigram"] = Path(args.model)
        elif args.big:
            t = time.perf_counter()
            models["big unigram"] = build_model(tmp)
            size = models["big unigram"].stat().st_size / 1e6
            print(f"built a {N_PIECES:,}-piece model in {time.perf_counter() - t:.1f} s ({size:.1f} MB)")
        for label, path in models.items():  # first, while this process is small (see `LAUNCHER`)
            results.update(whole_process_rows(label, path, files, args.reps, tmp))
        for label, path in models.items():
            results.update(in_process_rows(label, path, files, args.reps))
        if "big unigram" in models:
            results.update(_tokenizer_json_rows(models["big unigram"], args.reps))
    out = ROOT / "tests" / "bench" / "results" / ("sentencepiece_plain.json" if args.plain else "sentencepiece.json")
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
