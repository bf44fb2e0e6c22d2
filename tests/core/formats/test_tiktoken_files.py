"""Reading .tiktoken files, recognising OpenAI's encodings, finding them by name, lazy merge lists
(load times: tests/bench/bench_load.py)."""

from __future__ import annotations

import hashlib
import shutil
import sys

import pytest

from tests.real_tokenizers import tiktoken_path
from tokviz.core import ModelFormatError, TokvizError
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS, cache_path, find_encoding_file, known_tokenizers
from tokviz.core.formats.tiktoken import PatternRequired, looks_like_tiktoken, parse_tiktoken, read_tiktoken_file
from tokviz.core.loading import load_tiktoken, load_tokenizer
from tokviz.core.text.split import GPT4_SPLIT_PATTERN


@pytest.mark.parametrize(("name", "n_vocab", "specials"), [
    ("r50k_base", 50257, {"<|endoftext|>": 50256}),
    ("cl100k_base", 100277, {"<|endoftext|>": 100257, "<|endofprompt|>": 100276}),
    ("o200k_base", 200019, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
])
def test_recognised_by_sha256(name, n_vocab, specials):
    f = read_tiktoken_file(tiktoken_path(name))
    assert f.known is not None and f.known.name == name
    tok = load_tokenizer(tiktoken_path(name))
    assert isinstance(tok, RankBpeTokenizer)
    assert tok.name == name and tok.n_vocab == n_vocab
    assert {k: tok.special_tokens[k] for k in specials} == specials
    assert tok.pattern == KNOWN_ENCODINGS[name].pattern
    assert tok.token_bytes(tok.special_tokens["<|endoftext|>"]) == b"<|endoftext|>"


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_loading_builds_no_merge_list(name):
    """Opening a big encoding leaves the merge list lazy (load times: tests/bench/bench_load.py)."""
    tok = load_tokenizer(tiktoken_path(name))
    assert tok.encode_ids("hello world")
    assert tok.n_merges > 99_000


def test_unknown_file_needs_a_pattern(tmp_path):
    src = read_tiktoken_file(tiktoken_path("r50k_base"))
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"".join(
        __import__("base64").b64encode(t) + b" %d\n" % r for t, r in zip(src.tokens[:300], src.ranks[:300])
    ))
    with pytest.raises(PatternRequired, match="split pattern"):
        load_tokenizer(path)
    tok = load_tiktoken(path, pattern=GPT4_SPLIT_PATTERN, name="mine")
    assert tok.name == "mine" and tok.n_vocab == 300 and tok.n_merges == 44
    assert load_tiktoken(path, pattern="gpt4").pattern == GPT4_SPLIT_PATTERN
    assert tok.decode(tok.encode_ids("the theory")) == "the theory"


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty"),
    (b"IQ== 0\nnot-base64!! 1\n", "line 2"),
    (b"IQ== 0\nIg==\n", "line 2"),
    (b"IQ== zero\n", "line 1"),
])
def test_malformed_files_say_which_line(data, message):
    with pytest.raises(ModelFormatError, match=message):
        parse_tiktoken(data, source="x.tiktoken")


def test_missing_bytes_are_refused():
    with pytest.raises(ModelFormatError, match="256"):
        RankBpeTokenizer({b"a": 0, b"b": 1, b"ab": 2}, pattern=GPT4_SPLIT_PATTERN)


def test_sniffing():
    assert looks_like_tiktoken(tiktoken_path("cl100k_base").read_bytes()[:4096])
    assert not looks_like_tiktoken(b'{"model": {}}')


def test_by_name_from_the_tiktoken_cache(tmp_cache):
    enc = KNOWN_ENCODINGS["cl100k_base"]
    target = tmp_cache / hashlib.sha1(enc.url.encode()).hexdigest()
    assert cache_path(enc.url) == target
    shutil.copy(tiktoken_path("cl100k_base"), target)
    assert find_encoding_file("cl100k_base", download=False) == target
    tok = load_tokenizer("cl100k_base", download=False)
    assert tok.name == "cl100k_base" and tok.encode_ids("hello world") == [15339, 1917]
    cached = {k.name: k.cached for k in known_tokenizers()}
    assert cached["cl100k_base"] and not cached["o200k_base"]


def test_by_name_with_a_corrupt_cache_file_is_not_used(tmp_cache):
    enc = KNOWN_ENCODINGS["r50k_base"]
    (tmp_cache / hashlib.sha1(enc.url.encode()).hexdigest()).write_bytes(b"IQ== 0\n")
    with pytest.raises(TokvizError, match="Download https://"):
        find_encoding_file("r50k_base", download=False)


def test_by_name_without_file_or_tiktoken_says_how_to_supply_it(tmp_cache, monkeypatch):
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken -> ImportError
    monkeypatch.setitem(sys.modules, "tiktoken.load", None)
    with pytest.raises(TokvizError) as err:
        load_tokenizer("o200k_base")
    msg = str(err.value)
    assert "tiktoken" in msg and "not installed" in msg
    assert KNOWN_ENCODINGS["o200k_base"].url in msg and str(tmp_cache) in msg


def test_by_name_download_failure_is_reported(tmp_cache, monkeypatch):
    pytest.importorskip("tiktoken")
    import tiktoken.load

    def offline(url, expected_hash=None):
        raise ConnectionError("network is unreachable")

    monkeypatch.setattr(tiktoken.load, "read_file_cached", offline)
    with pytest.raises(TokvizError, match="downloading it failed .*unreachable"):
        load_tokenizer("p50k_base")


def test_offline_error_is_whole_and_names_the_menu_item(tmp_cache, monkeypatch):
    """requests wraps urllib3's retry error, which holds the real reason: the message keeps the
    reason and every address whole (it used to be cut at 120 characters, mid-URL)."""
    pytest.importorskip("tiktoken")
    import tiktoken.load

    class NameResolutionError(OSError):
        pass

    class MaxRetryError(Exception):
        def __init__(self, message, reason):
            super().__init__(message)
            self.reason = reason

    def offline(url, expected_hash=None):
        host = "openaipublic.blob.core.windows.net"
        reason = NameResolutionError(f"HTTPSConnection(host='{host}', port=443): Failed to resolve '{host}' "
                                     f"([Errno -2] Name or service not known)")
        raise ConnectionError(MaxRetryError(f"HTTPSConnectionPool(host='{host}', port=443): Max retries "
                                            f"exceeded with url: /encodings/cl100k_base.tiktoken", reason))

    monkeypatch.setattr(tiktoken.load, "read_file_cached", offline)
    with pytest.raises(TokvizError) as err:
        load_tokenizer("cl100k_base")
    enc = KNOWN_ENCODINGS["cl100k_base"]
    assert str(err.value) == (
        "cannot find the cl100k_base encoding: it is not in tiktoken's cache and downloading it failed "
        "(ConnectionError: Failed to resolve 'openaipublic.blob.core.windows.net' ([Errno -2] Name or service "
        f"not known)). Download {enc.url} and open the file (File > Open Tokenizer…, or pass its path as MODEL) "
        f"or copy it to {tmp_cache / hashlib.sha1(enc.url.encode()).hexdigest()}, or put it in a folder named "
        f"by $TOKVIZ_VOCAB_DIR")


def test_unknown_names():
    with pytest.raises(ModelFormatError, match="not a known tokenizer name"):
        load_tokenizer("cl200k_base")
