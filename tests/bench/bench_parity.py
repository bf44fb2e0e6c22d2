"""Benchmark (figures, not timings): id parity of every format tokviz reads against its reference
library, on the same lines, and the time `tokviz diff` takes to find the first difference of a
real pair.

Lines: every `--step`-th non-empty line of udhr2 (383 translations) and taylorswift. For each format
the ids of tokviz and the reference are compared line by line (no special tokens added):

- tokenizer.json (gpt2, bert-base-uncased, mistral-7b-v0.1, deepseek-v3) against `tokenizers`;
- .tiktoken (r50k, cl100k, o200k) and o200k_harmony against `tiktoken`;
- SentencePiece .model (mistral) against `sentencepiece`;
- tekken.json (the two mistral-common ships) against mistral-common's Tekkenizer;
- GGUF files written from the shared tokenizer.json files with the `gguf` package (as llama.cpp's
  converter does) against `tokenizers` on the tokenizer.json they came from; a llama GGUF from
  Mistral's .model against tokenizers, and a t5 GGUF from a Unigram model sentencepiece trains here
  against sentencepiece;
- llama.cpp's own test vectors (tests/data/llama_cpp) for the GGUF files they apply to.

Then `tokviz diff` on Mistral's tokenizer.json against its tokenizer.model (whole command, seconds).

Run: python tests/bench/bench_parity.py [--step N]; prints a table, writes results/parity.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
RESULTS = Path(__file__).parent / "results" / "parity.json"


def lines(step: int) -> list[str]:
    out = []
    for name in ("udhr2_all.txt", "taylorswift.txt"):
        text = (SHARED / "corpora" / name).read_text(encoding="utf-8")
        out += [x for x in text.splitlines() if x.strip()][::step]
    return out


def compare(ours, reference, texts: list[str]) -> tuple[int, int, str | None]:
    """(inputs, mismatches, first mismatching input)."""
    bad, first = 0, None
    for t in texts:
        if ours(t) != reference(t):
            bad += 1
            first = first if first is not None else t
    return len(texts), bad, first


def cases(tmp: Path):
    """(format, name, our ids function, reference ids function) for every pair there is."""
    import tiktoken
    import tokenizers

    from tokviz.core.loading import load_tokenizer

    hf = SHARED / "vocab" / "hf"
    for name in ("gpt2", "bert-base-uncased", "mistral-7b-v0.1", "deepseek-v3"):
        ref = tokenizers.Tokenizer.from_file(str(hf / name / "tokenizer.json"))
        ours = load_tokenizer(hf / name / "tokenizer.json")
        yield "tokenizer.json", name, ours.encode_ids, lambda t, r=ref: r.encode(t, add_special_tokens=False).ids
    from tests.real_tokenizers import load_reference

    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        enc = load_reference(name)  # tiktoken's Encoding over the shared file (no download)
        ours = load_tokenizer(SHARED / "vocab" / "tiktoken" / f"{name}.tiktoken")
        yield ".tiktoken", name, ours.encode_ids, enc.encode_ordinary
    if "o200k_harmony" in tiktoken.list_encoding_names():
        import hashlib
        import os
        import shutil

        from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS

        url = KNOWN_ENCODINGS["o200k_harmony"].url  # tiktoken's cache, holding the shared o200k file
        shutil.copy(SHARED / "vocab" / "tiktoken" / "o200k_base.tiktoken", tmp / hashlib.sha1(url.encode()).hexdigest())
        os.environ["TIKTOKEN_CACHE_DIR"] = str(tmp)
        enc = tiktoken.get_encoding("o200k_harmony")
        ours = load_tokenizer("o200k_harmony", download=False)
        yield "o200k_harmony", "o200k_harmony", ours.encode_ids, enc.encode_ordinary
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(hf / "mistral-7b-v0.1" / "tokenizer.model"))
    ours = load_tokenizer(hf / "mistral-7b-v0.1" / "tokenizer.model")
    yield "SentencePiece .model", "mistral-7b-v0.1", ours.encode_ids, sp.encode
    import mistral_common
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    data = Path(mistral_common.__file__).parent / "data"
    for name in ("tekken_240718.json", "tekken_240911.json"):
        ref = Tekkenizer.from_file(data / name)
        ours = load_tokenizer(data / name)
        yield "tekken.json", name, ours.encode_ids, lambda t, r=ref: r.encode(t, bos=False, eos=False)
    from tests.core.formats import gguf_files

    built = {
        "gpt2": gguf_files.byte_level_gguf(hf / "gpt2", tmp / "gpt2.gguf", "gpt-2"),
        "deepseek-v3": gguf_files.byte_level_gguf(hf / "deepseek-v3", tmp / "ds3.gguf", "deepseek-v3"),
        "bert-base-uncased": gguf_files.word_piece_gguf(hf / "bert-base-uncased", tmp / "bert.gguf", tmp),
    }
    for name, path in built.items():
        ref = tokenizers.Tokenizer.from_file(str(hf / name / "tokenizer.json"))
        ours = load_tokenizer(path)
        yield "GGUF", name, lambda t, o=ours: o.encode_ordinary(t).ids, \
            lambda t, r=ref: r.encode(t, add_special_tokens=False).ids
    # llama (SentencePiece BPE) from Mistral's .model, against tokenizers on its tokenizer.json
    mistral = gguf_files.sentencepiece_gguf(hf / "mistral-7b-v0.1" / "tokenizer.model", tmp / "mistral.gguf",
                                            hf_folder=hf / "mistral-7b-v0.1")
    ref = tokenizers.Tokenizer.from_file(str(hf / "mistral-7b-v0.1" / "tokenizer.json"))
    yield "GGUF (llama)", "mistral-7b-v0.1", load_tokenizer(mistral).encode_ids, \
        lambda t, r=ref: r.encode(t, add_special_tokens=False).ids
    # t5 (Unigram) from a model sentencepiece trains here, against sentencepiece on that model
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    unigram = trained_model("unigram-nmt", tmp)
    t5 = gguf_files.sentencepiece_gguf(unigram, tmp / "t5.gguf", kind="t5")
    yield "GGUF (t5)", "unigram-nmt (trained)", load_tokenizer(t5).encode_ids, \
        spm.SentencePieceProcessor(model_file=str(unigram)).encode


def llama_cpp_rows(tmp: Path) -> list[dict]:
    """llama.cpp's ``ggml-vocab-*.gguf.inp/.out`` vectors on GGUF files written from the same models."""
    from tests.core.formats import gguf_files
    from tests.core.formats.test_gguf_llama_cpp_vectors import vectors
    from tokviz.core.loading import load_tokenizer

    hf = SHARED / "vocab" / "hf"
    files = {"gpt-2": gguf_files.byte_level_gguf(hf / "gpt2", tmp / "v-gpt2.gguf", "gpt-2"),
             "bert-bge": gguf_files.word_piece_gguf(hf / "bert-base-uncased", tmp / "v-bert.gguf", tmp)}
    rows = []
    for name, path in files.items():
        tok, cases = load_tokenizer(path), vectors(name)
        bad = [text for text, ids in cases if tok.encode_ordinary(text).ids != ids]
        rows.append({"format": "llama.cpp vectors", "tokenizer": name, "inputs": len(cases), "mismatches": len(bad),
                     "first": bad[0] if bad else None})
    return rows


def diff_seconds() -> dict:
    hf = SHARED / "vocab" / "hf" / "mistral-7b-v0.1"
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tokviz", "diff", str(hf / "tokenizer.json"), str(hf / "tokenizer.model"),
                           "--ignore", "bos_eos", "--json"], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    found = json.loads(done.stdout) if done.stdout.strip() else {}
    return {"pair": "mistral tokenizer.json vs tokenizer.model (--ignore bos_eos)", "seconds": round(seconds, 2),
            "exit": done.returncode, "input": found.get("input"), "stage": found.get("stage"),
            "checked": found.get("checked")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", type=int, default=20, help="compare every N-th line (default 20)")
    args = ap.parse_args(argv)
    texts = lines(args.step)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'format':<22} {'tokenizer':<20} {'inputs':>7} {'mismatches':>10}")
        for fmt, name, ours, ref in cases(Path(tmp)):
            n, bad, first = compare(ours, ref, texts)
            rows.append({"format": fmt, "tokenizer": name, "inputs": n, "mismatches": bad, "first": first})
            print(f"{fmt:<22} {name:<20} {n:>7,} {bad:>10,}")
        for row in llama_cpp_rows(Path(tmp)):
            rows.append(row)
            print(f"{row['format']:<22} {row['tokenizer']:<20} {row['inputs']:>7,} {row['mismatches']:>10,}")
    d = diff_seconds()
    print(f"tokviz diff, {d['pair']}: {d['seconds']} s, exit {d['exit']}, stage {d['stage']} on {d['input']!r} "
          f"after {d['checked']} inputs")
    RESULTS.write_text(json.dumps({"rows": rows, "diff": d}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
