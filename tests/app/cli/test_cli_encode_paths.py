"""``tokviz encode --ids`` takes the ids path and ``--json`` writes its text directly; both print
exactly what the full encoding gives (``json.dumps(tok.encode(...).to_json())``)."""

from __future__ import annotations

import json

import pytest

from tests.app.cli.usage import usage_and_error
from tests.conftest import shared_file
from tokviz.core.loading import load_tokenizer
from tokviz.core.special_tokens import encode_specials_as_text

MODELS = [("tiktoken", "cl100k_base.tiktoken"), ("tiktoken", "o200k_base.tiktoken"), ("hf", "gpt2/tokenizer.json"),
          ("hf", "bert-base-uncased/tokenizer.json"), ("hf", "mistral-7b-v0.1/tokenizer.json")]


@pytest.mark.parametrize(("folder", "name"), MODELS)
@pytest.mark.parametrize("specials_as_text", [False, True])
def test_ids_and_json_equal_the_full_encoding(cli, tmp_path, corpus_text, folder, name, specials_as_text):
    path = str(shared_file("vocab", folder, name))
    tok = load_tokenizer(path)
    special = sorted(tok.special_tokens)[0]
    text = corpus_text("udhr2_all.txt", 30_000) + special + corpus_text("gutenberg30.txt", 30_000) + "\n"
    f = tmp_path / "text.txt"
    f.write_text(text, encoding="utf-8")
    extra = ["--specials-as-text"] if specials_as_text else []
    enc = encode_specials_as_text(tok, text) if specials_as_text else tok.encode(text, allowed_special="all")
    code, out, err = cli("encode", path, "-f", str(f), "--ids", *extra)
    assert (code, err) == (0, "")
    assert out == " ".join(map(str, enc.ids)) + "\n"
    code, out, err = cli("encode", path, "-f", str(f), "--json", *extra)
    assert (code, err) == (0, "")
    assert out == json.dumps(enc.to_json()) + "\n"


def test_encode_errors_stay_one_line(cli):
    code, out, err = cli("encode", "no-such-model.tiktoken", "hi", "--ids")
    assert code == 2 and out == "" and err.count("\n") == 1
    code, out, err = cli("encode", "--bogus")
    usage, line = usage_and_error(err)  # a parser's mistake: the usage, then one line
    assert code == 2 and usage.startswith("usage: tokviz encode") and line.startswith("tokviz encode: ")


_TIKTOKEN_HEAVY = ("numpy", "tokviz.core.bpe.trainer", "tokviz.core.formats.tokenizer_json.tokenizer",
                   "tokviz.core.formats.sentencepiece", "jinja2")
_SENTENCEPIECE_HEAVY = ("tokviz.core.bpe.ranked.tokenizer", "tokviz.core.bpe.trainer",
                        "tokviz.core.formats.tokenizer_json.tokenizer", "numba", "jinja2")


@pytest.mark.parametrize("parts,heavy,ids", [
    (("tiktoken", "cl100k_base.tiktoken"), _TIKTOKEN_HEAVY, "15339 1917"),
    (("hf", "mistral-7b-v0.1", "tokenizer.model"), _SENTENCEPIECE_HEAVY, "6312 28709 1526"),  # sentencepiece's
])
def test_encode_starts_with_what_its_format_needs(tmp_path, parts, heavy, ids):
    """The start-up of ``tokviz encode`` loads what encoding needs: a tiktoken file no numpy, no
    trainer, no tokenizer.json or SentencePiece code (they cost a third of a second before the first
    id); a SentencePiece model no tiktoken encoder, trainer or numba."""
    import subprocess
    import sys

    path = str(shared_file("vocab", *parts))
    code = (
        "import sys\n"
        "from tokviz.app.cli.main import main\n"
        f"rc = main(['encode', {path!r}, 'hello world', '--ids'])\n"
        f"print(rc, [m for m in {heavy!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [ids, "0 []"]


@pytest.mark.parametrize("enabled", [True, False])
def test_encode_ids_leaves_the_garbage_collector_as_it_found_it(cli, enabled):
    """``--ids`` pauses the collector while it encodes; a caller in the same process (a script, a
    test) gets it back as it was."""
    import gc

    path = str(shared_file("vocab", "tiktoken", "cl100k_base.tiktoken"))
    (gc.enable if enabled else gc.disable)()
    try:
        code, out, _ = cli("encode", path, "hello world", "--ids")
        assert (code, out) == (0, "15339 1917\n")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_a_one_off_encode_keeps_no_forked_cache_and_equals_encode(monkeypatch):
    """`encode_once` (the command line's --json and token listing) asks a tiktoken-style tokenizer
    for no cache from its forked half; the encoding is `encode`'s."""
    from tokviz.core.algorithm.ids_path import encode_once
    from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer

    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257})
    tok = RankBpeTokenizer(ranks, pattern=r"\S+|\s+")
    asked = []
    real = tok.encode
    monkeypatch.setattr(tok, "encode", lambda text, share_cache=True, processes=1, **kw:
                        asked.append((share_cache, processes)) or real(text, share_cache=share_cache,
                                                                       processes=processes, **kw))
    enc = encode_once(tok, "abc ab x")
    assert encode_once(tok, "abc ab x", processes=2).ids == enc.ids
    assert asked == [(False, 1), (False, 2)] and enc.ids == [257, 32, 256, 32, 120] and enc.spans == tok.encode("abc ab x").spans
