"""Big files load and encode in time and memory that grow with the file: a tokenizer.json with
100,000 added tokens (found by one sorted table, not one pattern per token) gives tokenizers'
ids, and ten times the tokens costs about ten times the work."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import shared_file
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.text.literals import Literals


def _added(n: int, first_id: int, seed: int = 0) -> list[dict]:
    """`n` added tokens with every combination of flags, some looking like words."""
    rnd = random.Random(seed)
    out = []
    for k in range(n):
        content = f"<tok{k}>" if k % 4 else f"w{k:x}q"
        if k % 13 == 0:
            content = " " + content  # leading space
        out.append({"id": first_id + k, "content": content, "special": rnd.random() < 0.5,
                    "normalized": rnd.random() < 0.3, "lstrip": rnd.random() < 0.2, "rstrip": rnd.random() < 0.2,
                    "single_word": rnd.random() < 0.2})
    return out


def _text(n: int, seed: int = 1) -> str:
    """Prose with added-token texts in every position: inside words, after spaces, at the ends."""
    rnd = random.Random(seed)
    parts = []
    for _ in range(2000):
        k = rnd.randrange(n)
        tok = f"<tok{k}>" if k % 4 else f"w{k:x}q"
        parts.append(rnd.choice(["the", " ", "  ", "x", "cat. ", "\n", "w", "<tok", "q"]))
        parts.append(tok)
    return "".join(parts) + " end"


def test_100k_added_tokens_give_the_ids_of_tokenizers(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    d = json.loads(shared_file("vocab", "hf", "gpt2", "tokenizer.json").read_text(encoding="utf-8"))
    d["added_tokens"] = [*d["added_tokens"], *_added(100_000, len(d["model"]["vocab"]))]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    tok = HfTokenizer.from_file(path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    text = _text(100_000)
    want = ref.encode(text).ids
    assert tok.encode(text).ids == want
    assert tok.encode_ids(text, add_special_tokens=True) == want
    assert [tok.encode(t).ids for t in ("w0q", " w0q ", "xw0q", "<tok1><tok1>")] == [
        ref.encode(t).ids for t in ("w0q", " w0q ", "xw0q", "<tok1><tok1>")]


def _tiny(n: int) -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": _added(n, 2),
            "normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "the": 1}, "unk_token": "[UNK]"}}


def _load_and_encode(n: int) -> float:
    d = _tiny(n)
    text = _text(n)
    t = time.perf_counter()
    tok = HfTokenizer.from_json(d)
    tok.encode(text).ids
    return time.perf_counter() - t


def test_ten_times_the_added_tokens_cost_about_ten_times_the_work():
    """A regex alternation of the tokens compiled and scanned in time that grows with their number
    times the text (10,000 tokens: 46 s; 100,000: over 10 minutes)."""
    _load_and_encode(1_000)  # imports and first-use costs out of the way
    small = min(_load_and_encode(10_000) for _ in range(2))
    big = _load_and_encode(100_000)
    assert big < 40 * small + 1.0, (small, big)


def test_literals_find_what_a_longest_first_alternation_finds():
    rnd = random.Random(3)
    for _ in range(400):
        strings = ["".join(rnd.choice("ab<") for _ in range(rnd.randint(0, 7))) for _ in range(rnd.randint(0, 9))]
        text = "".join(rnd.choice("ab<c") for _ in range(rnd.randint(0, 40)))
        want, pos = [], 0
        by_length = sorted({s for s in strings if s}, key=len, reverse=True)
        while True:  # the reference: at the leftmost position, the longest string
            hits = [(p, s) for p in range(pos, len(text)) for s in by_length if text.startswith(s, p)]
            if not hits:
                break
            p, s = min(hits, key=lambda h: (h[0], -len(h[1])))
            want.append((p, p + len(s), strings.index(s)))
            pos = p + len(s)
        assert list(Literals(strings).finditer(text)) == want, (strings, text)


def test_a_token_longer_than_the_first_window_is_found():
    long = "a" * 300 + "b"
    lit = Literals(["a", long, "a" * 100])
    assert list(lit.finditer("x" + long + "a" * 150)) == [(1, 302, 1), (302, 402, 2), (402, 403, 0),
                                                           (403, 404, 0), *[(k, k + 1, 0) for k in range(404, 452)]]


# -- a SentencePiece model with a million pieces ---------------------------------------------------------


def _unigram_model(n: int, seed: int = 0) -> bytes:
    """A Unigram ``.model`` with `n` pieces ``▁`` + five letters (the digits of k in base 26, the
    least significant first) after ``<unk>``, ``<s>``, ``</s>``; written with numpy (a second)."""
    import numpy as np

    from tests.core.formats.sentencepiece.spm_helpers import model_bytes

    head = model_bytes([("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("</s>", 0.0, "control")],
                       trainer={"model_type": 1}, normalizer={"name": "identity"})
    k = np.arange(n, dtype=np.int64)
    rec = np.empty((n, 17), dtype=np.uint8)  # 0A len 0A len piece 15 score: one SentencePiece each
    rec[:, :7] = np.frombuffer(b"\x0a\x0f\x0a\x08" + "\u2581".encode(), np.uint8)
    for j in range(5):
        rec[:, 7 + j] = ord("a") + (k // 26**j) % 26
    rec[:, 12] = 0x15
    rec[:, 13:] = (-1.0 - 10 * np.random.default_rng(seed).random(n)).astype("<f4").view(np.uint8).reshape(n, 4)
    return head + rec.tobytes()


def _word(k: int) -> str:
    return "".join(chr(ord("a") + (k // 26**j) % 26) for j in range(5))


def _spm_texts(n: int) -> list[str]:
    rnd = random.Random(3)
    words = [_word(rnd.randrange(n)) for _ in range(200)]
    return ["hello world", " ".join(words), "".join(words[:40]), " ".join(w[:3] + w for w in words[:50]) + " zz"]


def _limited_child() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (700 << 20, 700 << 20))


@pytest.mark.slow
def test_a_million_piece_sentencepiece_model_loads_in_700_mb_with_the_libraries_ids(tmp_path):
    """The file as Python lists and dicts needed 800-900 MB of address space (a 10-million-piece
    one: 89 s and 4.9 GB); as arrays, about 550 MB."""
    spm = pytest.importorskip("sentencepiece")
    if sys.platform == "win32":
        pytest.skip("address-space limits are POSIX")
    import tokviz

    n = 1_000_000
    model = tmp_path / "big.model"
    model.write_bytes(_unigram_model(n))
    ref = spm.SentencePieceProcessor(model_file=str(model))
    env = {**os.environ, "PYTHONPATH": str(Path(tokviz.__file__).resolve().parents[1])}
    text = " ".join(_spm_texts(n))
    src = tmp_path / "text.txt"
    src.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "tokviz", "encode", "--ids", str(model), "-f", str(src)],
                          capture_output=True, text=True, preexec_fn=_limited_child, env=env, timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == list(map(str, ref.encode(text)))


@pytest.mark.slow
def test_sentencepiece_loading_memory_grows_with_the_pieces_and_stays_small(tmp_path):
    """Memory Python allocates to load and encode (numpy arrays included): about 230 bytes per
    piece at a million pieces, where lists of strings and dicts took about 500."""
    import tracemalloc

    from tokviz.core.formats.sentencepiece import SentencePieceTokenizer

    spm = pytest.importorskip("sentencepiece")
    peaks = {}
    for n in (100_000, 1_000_000):
        path = tmp_path / f"m{n}.model"
        path.write_bytes(_unigram_model(n))
        tracemalloc.start()
        try:
            tok = SentencePieceTokenizer.from_file(path)
            ids = [tok.encode_ids(t) for t in _spm_texts(n)]
            peaks[n] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        ref = spm.SentencePieceProcessor(model_file=str(path))
        assert ids == [ref.encode(t) for t in _spm_texts(n)]
        assert tok.piece_to_id("\u2581" + _word(n - 1)) == n + 2 and tok.token_text(n + 2) == "\u2581" + _word(n - 1)
        del tok
    assert peaks[1_000_000] < 350 * 1_000_000, peaks
    assert peaks[1_000_000] < 12 * peaks[100_000], peaks
