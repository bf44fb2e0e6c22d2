"""One long pre-token (a minified file, a base64 blob, a DNA string: here runs of one letter, of a
short pattern, and random base64) costs time and memory near-linear in its length, for every
algorithm and file format, and gives the reference library's ids.

Modelled on tiktoken's ``test_catastrophically_repetitive`` and ``test_large_repeated``. Growth is
measured deterministically: tracemalloc's peak while encoding 4n characters against n (linear: about
4x; quadratic: 16x), each tokenizer warmed first so one-time tables do not count. The full-size
cases (a megabyte in the command line and in training) run in a child process under an
address-space limit, so a blow-up fails the test instead of taking the machine.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import random
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from tests.conftest import shared_file

N = 3_000  # characters of the small size; the big one is 4 N
MAX_GROWTH = 6.0  # peak memory at 4 N over the peak at N (quadratic would be about 16)
PARITY_CHARS = 6_000
MEGABYTE = 1_000_000
CHILD_LIMIT = 2 << 30  # address space of a child encoding or training a megabyte


def pattern_text(kind: str, n: int) -> str:
    """`n` characters of one long pre-token of the given kind."""
    if kind == "x":
        return "x" * n
    if kind == "abc":
        return ("abc" * n)[:n]
    if kind == "ab":
        return ("ab" * n)[:n]
    return base64.b64encode(random.Random(n).randbytes(n)).decode()[:n]  # "b64"


PATTERNS = ("x", "ab", "abc", "b64")


def peak_bytes(fn) -> int:
    """tracemalloc's peak while `fn()` runs (bytes)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def growth(encode, kind: str = "x", n: int = N) -> float:
    """Peak memory of ``encode(text)`` for 4 n characters over that for n, after a first encode of
    another length (tables built on first use do not count; neither text is in a chunk cache)."""
    encode(pattern_text(kind, n + 7))
    small, big = pattern_text(kind, n), pattern_text(kind, 4 * n)
    return peak_bytes(lambda: encode(big)) / max(peak_bytes(lambda: encode(small)), 1)


# -- the tokenizers: shared files, models built with the reference libraries, trained ones -----------


_LOADED: dict[str, object] = {}


def _vocab(*parts: str) -> Path:
    return shared_file("vocab", *parts)


def _hf_wordpiece_unbounded(folder: Path) -> Path:
    """BERT's tokenizer.json with no word-length limit: every long word is matched piece by piece."""
    data = json.loads(_vocab("hf", "bert-base-uncased", "tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["max_input_chars_per_word"] = 10**9
    path = folder / "bert-unbounded.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _hf_unigram(folder: Path) -> Path:
    from tests.core.formats.tokenizer_json.hf_unigram_helpers import built, t5_like

    path = folder / "t5-like.json"
    path.write_text(built("t5-like", folder, t5_like)[1], encoding="utf-8")
    return path


def _sp_unigram(folder: Path) -> Path:
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    return trained_model("unigram-nmt", folder)


FILES = {  # name -> the file, given a folder for the ones built at test time
    "o200k": lambda d: _vocab("tiktoken", "o200k_base.tiktoken"),
    "cl100k": lambda d: _vocab("tiktoken", "cl100k_base.tiktoken"),
    "r50k": lambda d: _vocab("tiktoken", "r50k_base.tiktoken"),
    "data-gym": lambda d: _vocab("gpt2-data-gym"),
    "gpt2.json": lambda d: _vocab("hf", "gpt2", "tokenizer.json"),
    "deepseek.json": lambda d: _vocab("hf", "deepseek-v3", "tokenizer.json"),
    "mistral.json": lambda d: _vocab("hf", "mistral-7b-v0.1", "tokenizer.json"),
    "mistral.model": lambda d: _vocab("hf", "mistral-7b-v0.1", "tokenizer.model"),
    "bert.json": lambda d: _vocab("hf", "bert-base-uncased", "tokenizer.json"),
    "bert-unbounded.json": _hf_wordpiece_unbounded,
    "unigram.json": _hf_unigram,
    "unigram.model": _sp_unigram,
}
TIKTOKEN_NAMES = {"o200k": "o200k_base", "cl100k": "cl100k_base", "r50k": "r50k_base", "data-gym": "r50k_base"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("long-pretokens")


def load(name: str, folder: Path):
    """tokviz's tokenizer for `name` (loaded once per module)."""
    if name not in _LOADED:
        from tokviz.core.loading import load_tokenizer

        _LOADED[name] = load_tokenizer(FILES[name](folder))
    return _LOADED[name]


def reference(name: str, folder: Path):
    """``text -> ids`` of the reference library for the same file (skips without the library)."""
    if name in TIKTOKEN_NAMES:
        from tests.real_tokenizers import load_reference

        enc = load_reference(TIKTOKEN_NAMES[name])
        return enc.encode_ordinary
    path = FILES[name](folder)
    if path.suffix == ".model":
        spm = pytest.importorskip("sentencepiece")
        return spm.SentencePieceProcessor(model_file=str(path)).encode
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(path))
    return lambda text: ref.encode(text).ids


def trained(algorithm: str):
    """A small model trained by tokviz (BPE, WordPiece with no practical word limit, Unigram)."""
    key = "trained-" + algorithm
    if key not in _LOADED:
        text = shared_file("corpora", "taylorswift.txt").read_text(encoding="utf-8")[:60_000]
        if algorithm == "bpe":
            from tokviz.core import TrainSettings, train

            tl = train(TrainSettings(vocab_size=600, split="gpt4"), texts=[text])
        elif algorithm == "wordpiece":
            from tokviz.core.wordpiece.timeline import WordPieceSettings, train_wordpiece

            tl = train_wordpiece(WordPieceSettings(vocab_size=600, max_word_chars=100_000), texts=[text])
        else:
            from tokviz.core.unigram.timeline import UnigramSettings, train_unigram

            tl = train_unigram(UnigramSettings(vocab_size=600), texts=[text])
        _LOADED[key] = tl.tokenizer()
    return _LOADED[key]


def ids_path(tok, text: str) -> list[int]:
    from tokviz.core.algorithm.ids_path import encode_ids_like

    return encode_ids_like(tok, text)


def ids_text(tok, text: str) -> str:
    """What ``tokviz encode --ids`` prints."""
    from tokviz.core.algorithm.ids_path import encode_ids_text_like

    return encode_ids_text_like(tok, text)


def spans_path(tok, text: str):
    """The token view's encode: ids, tokens and spans."""
    enc = tok.encode(text, allowed_special="all")
    return enc.ids, enc.spans


def plain_ids(name: str, tok, text: str) -> list[int]:
    """Our ids as the reference library counts them (tokenizer.json files add their specials)."""
    if name in TIKTOKEN_NAMES:
        return tok.encode_ids(text)
    return ids_path(tok, text)


# -- the same ids as the reference libraries -------------------------------------------------------


@pytest.mark.parametrize("kind", PATTERNS)
@pytest.mark.parametrize("name", sorted(set(FILES) - {"bert-unbounded.json"}))
def test_a_long_pretoken_gives_the_reference_ids(name, kind, folder):
    tok, ref = load(name, folder), reference(name, folder)
    for text in (pattern_text(kind, PARITY_CHARS), " " + pattern_text(kind, PARITY_CHARS) + "\n"):
        want = ref(text)
        assert plain_ids(name, tok, text) == want
        assert spans_path(tok, text)[0] == plain_ids(name, tok, text)


def test_a_long_word_without_a_length_limit_gives_the_reference_ids(folder):
    # Hugging Face's WordPiece tries every end of the rest of the word (cubic in its length), so
    # the reference runs on a short word; ours is checked for growth below
    tok, ref = load("bert-unbounded.json", folder), reference("bert-unbounded.json", folder)
    for kind in PATTERNS:
        text = pattern_text(kind, 300)
        assert ids_path(tok, text) == ref(text) == spans_path(tok, text)[0]


@pytest.mark.parametrize("c", ["^", "0", "a", "'s", " ", "\n", "X", "\u00e9", "\U0001f600"])
def test_catastrophically_repetitive_text_gives_tiktokens_ids(c, folder):
    tok, ref = load("o200k", folder), reference("o200k", folder)
    for text in (c * 4_000, " " + c * 4_000, c * 4_000 + "\n"):
        assert tok.encode_ids(text) == ref(text)
        assert ids_text(tok, text) == " ".join(map(str, ref(text)))


def _merge_all_the_way(tok, text: str) -> list[int]:
    """The obviously correct trained-BPE encode: apply the lowest-ranked merge present to every
    occurrence, left to right, until none applies (the merges in training order)."""
    ranks = {pair: r for r, pair in enumerate(tok.merges)}
    out: list[int] = []
    for chunk in tok.chunks(text):
        ids = list(chunk.encode("utf-8"))
        while len(ids) > 1:
            r = min((ranks.get(p, len(ranks)) for p in zip(ids, ids[1:])))
            if r == len(ranks):
                break
            pair, new, merged, i = tok.merges[r], tok.base_size + r, [], 0
            while i < len(ids):
                if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                    merged.append(new)
                    i += 2
                else:
                    merged.append(ids[i])
                    i += 1
            ids = merged
        out.extend(ids)
    return out


@pytest.mark.parametrize("kind", PATTERNS)
def test_a_trained_bpe_model_merges_a_long_pretoken_as_training_did(kind):
    tok = trained("bpe")
    text = pattern_text(kind, 4_000)
    assert tok.encode_ids(text) == tok.encode(text).ids == _merge_all_the_way(tok, text)


# -- near-linear memory -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FILES))
def test_memory_grows_linearly_with_one_long_pretoken(name, folder):
    tok = load(name, folder)
    warm_up = getattr(tok, "warm_up", None)
    if warm_up is not None:
        warm_up()
    assert growth(lambda t: ids_text(tok, t), "abc") < MAX_GROWTH  # what `tokviz encode --ids` prints
    assert growth(lambda t: spans_path(tok, t), "x") < MAX_GROWTH  # the token view's encode


@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_memory_grows_linearly_for_trained_models(algorithm):
    tok = trained(algorithm)
    assert growth(lambda t: ids_path(tok, t), "b64") < MAX_GROWTH
    assert growth(lambda t: spans_path(tok, t), "x") < MAX_GROWTH


def test_the_json_output_grows_linearly(folder):
    import io

    from tokviz.core.algorithm.ids_path import encode_once, write_json_once

    tok = load("o200k", folder)

    def as_json(text: str) -> None:
        out = io.StringIO()
        if not write_json_once(tok, text, out.write):
            encode_once(tok, text).write_json(out.write)

    assert growth(as_json) < MAX_GROWTH


def test_the_token_view_grows_linearly(folder):
    from tokviz.engine.token_view.requests import RowSpec, TokenViewRequest
    from tokviz.engine.token_view.token_view_engine import TokenViewWorker

    tok = load("o200k", folder)

    def view(text: str) -> None:
        req = TokenViewRequest(text, (RowSpec("loaded:0", "o200k", None, tok),))
        result = TokenViewWorker(1, req, None, None).work()
        assert len(result.rows[0].encoding.spans) == len(result.rows[0].encoding.ids)

    assert growth(view, n=6_000) < MAX_GROWTH


# -- a megabyte in a child process under an address-space limit ----------------------------------------


def _limited() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CHILD_LIMIT, CHILD_LIMIT))


def _run_limited(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m tokviz ARGS`` (the tokviz this test imports) under `CHILD_LIMIT` of address space."""
    if sys.platform == "win32":
        pytest.skip("address-space limits are POSIX")
    import tokviz

    env = {**os.environ, "PYTHONPATH": str(Path(tokviz.__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-m", "tokviz", *args], cwd=cwd, capture_output=True, text=True,
                          preexec_fn=_limited, env=env, timeout=240)


@pytest.mark.slow
def test_the_command_line_encodes_a_megabyte_of_one_letter_within_two_gigabytes(tmp_path, folder):
    path = tmp_path / "x.txt"
    path.write_text("x" * MEGABYTE, encoding="utf-8")
    model = FILES["o200k"](folder)
    done = _run_limited("encode", str(model), "-f", str(path), "--ids", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == list(map(str, reference("o200k", folder)("x" * MEGABYTE)))


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, options", [
    ("bpe", ("--merges", "40")),
    ("wordpiece", ("--vocab-size", "300", "--max-word-chars", "2000000")),
    ("unigram", ("--vocab-size", "300")),
])
def test_training_on_a_megabyte_pretoken_stays_within_two_gigabytes(algorithm, options, tmp_path):
    corpus = tmp_path / "corpus.txt"
    text = shared_file("corpora", "taylorswift.txt").read_text(encoding="utf-8")[:20_000]
    corpus.write_text(text + " " + "x" * MEGABYTE + " " + text, encoding="utf-8")
    out = tmp_path / "model.json"
    done = _run_limited("train", "--quiet", "--algorithm", algorithm, *options, "-o", str(out), str(corpus),
                        cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0
