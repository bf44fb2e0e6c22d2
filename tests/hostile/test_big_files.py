"""Big files load and encode in time and memory that grow with the file: a tokenizer.json with
100,000 added tokens (found by one sorted table, not one pattern per token) gives tokenizers'
ids, and ten times the tokens costs about ten times the work."""

from __future__ import annotations

import json
import random
import time

import pytest

from tests.conftest import shared_file
from tokviz.core.pretrained import HfTokenizer
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
