"""Helpers for the pretrained-tokenizer tests: the shared vocabularies, loaded once per session,
their reference libraries (skipped when not installed), the TestPlans file, corpus samples.

``TOKVIZ_FULL_PARITY=1`` switches on the exhaustive runs (whole corpora, every code point).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import strategies as st

FULL = bool(os.environ.get("TOKVIZ_FULL_PARITY"))
full_only = pytest.mark.skipif(not FULL, reason="exhaustive parity: set TOKVIZ_FULL_PARITY=1")
SAMPLE_CHARS = 400_000  # characters of each corpus in the default run
CORPORA = ("tinyshakespeare.txt", "taylorswift.txt", "gutenberg30.txt", "udhr2_all.txt")
TIKTOKEN_NAMES = ("r50k_base", "cl100k_base", "o200k_base")
HF_NAMES = ("gpt2", "bert-base-uncased", "mistral-7b-v0.1")


from tests.conftest import shared_file  # noqa: E402

_TOKENIZERS: dict[str, object] = {}
_REFERENCES: dict[str, object] = {}


def tiktoken_path(name: str) -> Path:
    return shared_file("vocab", "tiktoken", f"{name}.tiktoken")


def hf_path(name: str) -> Path:
    return shared_file("vocab", "hf", name, "tokenizer.json")


def load_ours(name: str):
    """tokviz's tokenizer for a shared vocabulary (cached for the session)."""
    if name not in _TOKENIZERS:
        from tokviz.core.loading import load_tokenizer

        path = tiktoken_path(name) if name in TIKTOKEN_NAMES else hf_path(name)
        _TOKENIZERS[name] = load_tokenizer(path)
    return _TOKENIZERS[name]


def fresh_copy(tok):
    """A new tiktoken-style tokenizer like `tok` (vocabulary, pattern, special tokens) whose chunk
    caches are empty: what a test of the cold path needs (the shared ones are warm)."""
    from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer

    return RankBpeTokenizer(tok.mergeable_ranks, pattern=tok.pattern, special_tokens=tok.special_tokens, name=tok.name)


def piece_ids(ranks: dict[bytes, int], piece: bytes, thr: int) -> tuple[int, ...]:
    """tiktoken's ids of one chunk's bytes, by the one-chunk loop (the oracle of the faster paths):
    a piece that is a token of rank below `thr` (or a single byte) is that token."""
    from tokviz.core.bpe.byte_ranks.one_chunk import bpe_parts

    r = ranks.get(piece)
    if r is not None and (r < thr or len(piece) == 1):
        return (r,)
    b = bpe_parts(ranks, piece, thr)
    return tuple(ranks[piece[b[i] : b[i + 1]]] for i in range(len(b) - 1))


def load_reference(name: str):
    """The reference library's tokenizer for the same file (skips without the library)."""
    if name not in _REFERENCES:
        if name in TIKTOKEN_NAMES:
            tiktoken = pytest.importorskip("tiktoken")
            from tiktoken.load import load_tiktoken_bpe

            from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS

            k = KNOWN_ENCODINGS[name]
            _REFERENCES[name] = tiktoken.Encoding(
                name, pat_str=k.pattern, mergeable_ranks=load_tiktoken_bpe(str(tiktoken_path(name))),
                special_tokens=dict(k.special_tokens),
            )
        else:
            tokenizers = pytest.importorskip("tokenizers")
            _REFERENCES[name] = tokenizers.Tokenizer.from_file(str(hf_path(name)))
    return _REFERENCES[name]


def reference_ids(name: str, text: str) -> list[int]:
    """The parity target: tiktoken's encode_ordinary, tokenizers' encode(text).ids."""
    ref = load_reference(name)
    if name in TIKTOKEN_NAMES:
        return ref.encode_ordinary(text)
    return ref.encode(text).ids


def our_ids(name: str, text: str) -> list[int]:
    tok = load_ours(name)
    if name in TIKTOKEN_NAMES:
        return tok.encode_ids(text)
    return tok.encode_ids(text, add_special_tokens=True)


def load_test_plans() -> list[tuple[str, str, list[int]]]:
    """``(encoding name, sample, expected ids)`` of gpt-tokenizer's TestPlans file."""
    text = shared_file("vocab", "testdata", "gpt-tokenizer-TestPlans.txt").read_text(encoding="utf-8")
    plans = []
    for block in text.strip("\n").split("\n\n"):
        lines = block.split("\n")
        name = lines[0].split(": ", 1)[1]
        sample = lines[1][len("Sample: "):]
        ids = [int(x) for x in lines[2][len("Encoded: "):].strip("[]").split(",") if x.strip()]
        plans.append((name, sample, ids))
    return plans


def corpus(name: str, n: int | None = SAMPLE_CHARS) -> str:
    """The first `n` characters of a shared corpus (all of it for None), read no further."""
    with shared_file("corpora", name).open(encoding="utf-8") as f:
        return f.read(-1 if n is None else n)


# -- generated Unicode -----------------------------------------------------------------------------

PIECES = [
    "\r\n", "\r", "\n\n", " " * 17, "\t \t", "\u00a0", "\u3000", "\u2028", "\x85",
    "e\u0301", "\u0915\u094d\u0937", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "🇪🇸", "\U0003d000", "\U00010d50",
    "\U000e0001", "\U0010ffff", "\ufffd", "'s", "'LL", "ſ", "İ", "ΣΑΣ", "123456", "٣٤٥", "<|endoftext|>",
    "<s>", "[CLS]", "  \n ", "日本語", "한국어", "\u0378", "\x00", "\x1c", "ﬀ", "$", "...",
]


def unicode_text():
    chars = st.characters(exclude_categories=("Cs",))
    piece = st.one_of(
        st.text(chars, max_size=12),
        st.sampled_from(PIECES),
        st.integers(1, 40).map(lambda n: " " * n),
        st.text(st.sampled_from(" \t\r\n\u00a0\u2003"), min_size=1, max_size=30),
        st.text(st.characters(categories=("Mn", "Me", "Mc")), min_size=1, max_size=4),
        st.text(st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF), min_size=1, max_size=4),
    )
    return st.lists(piece, max_size=12).map("".join)


# -- a Hugging Face cache ----------------------------------------------------------------------------


def hf_snapshot(cache, name: str, commit: str, files: dict, *, main: bool = True):
    """``models--ORG--NAME/{blobs,refs,snapshots}`` in `cache` as huggingface_hub lays it out, the
    files (name -> source path) as symlinks into blobs/; ``refs/main`` names `commit` if `main`."""
    import os
    import shutil

    repo = cache / ("models--" + name.replace("/", "--"))
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    (repo / "blobs").mkdir(exist_ok=True)
    for fname, src in files.items():
        blob = repo / "blobs" / f"{commit[:8]}-{fname}"
        shutil.copyfile(src, blob)
        os.symlink(os.path.relpath(blob, snap), snap / fname)
    if main:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    return snap
