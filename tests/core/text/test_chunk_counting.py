"""Counting chunks: order of first appearance, special tokens cut out, cancellation, progress, and
parallel counting identical to serial counting (key order included)."""

from __future__ import annotations

import os

import pytest

import tokviz.core.text.chunks as chunks
from tests.conftest import skip_unless_fork
from tokviz.core import Cancelled, count_chunks, count_word_table, parse_split
from tokviz.core.bpe.reference import oracle_counts, oracle_table_counts


def test_counts_in_order_of_first_appearance():
    counts = count_chunks(["b a b", "c a"], parse_split("whitespace"))
    assert list(counts.items()) == [("b", 2), ("a", 2), ("c", 1)]


def test_split_none_counts_each_text_as_one_chunk():
    counts = count_chunks(["ab", "cd", "ab"], parse_split("none"))
    assert list(counts.items()) == [("ab", 2), ("cd", 1)]


def test_special_tokens_are_cut_out_and_never_counted():
    counts = count_chunks(["hi<|e|>hi <s>there<|e|>"], parse_split("gpt4"), specials=("<|e|>", "<s>"))
    assert list(counts.items()) == [("hi", 2), (" ", 1), ("there", 1)]
    counts = count_chunks(["x<s>y"], parse_split("none"), specials=("<s>",))
    assert list(counts.items()) == [("x", 1), ("y", 1)]


def test_word_table_counts():
    table = {"hello world": 3, "hello": 2, "zero": 0, "minus": -4, "a<s>b": 5}
    counts = count_word_table(table, parse_split("gpt4"), specials=("<s>",))
    assert list(counts.items()) == [("hello", 5), (" world", 3), ("a", 5), ("b", 5)]
    assert count_word_table({"a b": 2}, parse_split("none")) == {"a b": 2}


def test_cancellation():
    with pytest.raises(Cancelled):
        count_chunks(["some text"], parse_split("gpt4"), should_stop=lambda: True)
    calls = []

    def stop_on_second_check():
        calls.append(1)
        return len(calls) >= 2

    with pytest.raises(Cancelled):
        count_chunks(["first", "second", "third"], parse_split("gpt4"), should_stop=stop_on_second_check)
    assert len(calls) == 2


def test_progress_reaches_the_total():
    seen = []
    count_chunks(["abc def", "<s>gh"], parse_split("gpt4"), specials=("<s>",), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(7, 12), (9, 12)]  # the special token is not counted as progress


def _spy_on_pools(monkeypatch) -> list:
    """Record the children count_chunks forks ("fork" each; with 2 processes one child counts
beside this process); skip where forking is unsafe."""
    skip_unless_fork()
    used = []
    real = chunks.fork_call

    def spy(fn):
        used.append("fork")
        return real(fn)

    monkeypatch.setattr(chunks, "fork_call", spy)
    return used


@pytest.mark.parametrize("spec", ["gpt2", "gpt4", "o200k", "whitespace"])
@pytest.mark.parametrize("corpus", ["udhr2_all.txt", "tinyshakespeare.txt"])
def test_parallel_equals_serial_on_many_small_slices(monkeypatch, corpus_text, spec, corpus):
    # Shrink the thresholds so a 400k-character text is cut into ~20 slices. Slices end only
    # where a line starts with a letter, so the indentation of the multilingual text goes.
    text = "\n".join(line.strip() for line in corpus_text(corpus, 400_000).splitlines())
    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1000)
    monkeypatch.setattr(chunks, "SLICE_CHARS", 20_000)
    assert len(chunks.safe_slices(text, 0, len(text), chunks.SLICE_CHARS)) >= 10
    used = _spy_on_pools(monkeypatch)
    splitter = parse_split(spec)
    parallel = count_chunks([text, text[:50_000]], splitter, processes=2)
    assert used == ["fork", "fork"]
    serial = count_chunks([text, text[:50_000]], splitter, processes=1)
    assert count_chunks([text, text[:50_000]], splitter) == serial  # the default: one process
    assert used == ["fork", "fork"]
    assert list(parallel.items()) == list(serial.items())
    assert list(serial.items()) == list(oracle_counts([text, text[:50_000]], spec).items())


def test_parallel_with_special_tokens(monkeypatch, corpus_text):
    text = corpus_text("tinyshakespeare.txt", 200_000).replace("\n\n", "\n<|endoftext|>")
    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1000)
    monkeypatch.setattr(chunks, "SLICE_CHARS", 5_000)
    splitter = parse_split("gpt4")
    specials = ("<|endoftext|>",)
    parallel = count_chunks([text], splitter, specials=specials, processes=2)
    serial = count_chunks([text], splitter, specials=specials, processes=1)
    assert list(parallel.items()) == list(serial.items()) == list(oracle_counts([text], "gpt4", specials).items())
    assert not any("<|endoftext|>" in c for c in parallel)


@pytest.mark.slow
def test_parallel_equals_serial_on_a_large_real_text(monkeypatch, corpus_text):
    """The real thresholds: a 4.2M-character slice of gutenberg30 counted by 2 processes."""
    # corpus_text reads with universal newlines: slices end only at "\S\n" boundaries, which
    # CRLF text has none of
    text = corpus_text("gutenberg30.txt", 4_200_000)
    assert len(text) > chunks.PARALLEL_MIN_CHARS
    assert len(chunks.safe_slices(text, 0, len(text), chunks.SLICE_CHARS)) >= 2
    used = _spy_on_pools(monkeypatch)
    splitter = parse_split("gpt4")  # the other splits are checked on the many small slices above
    parallel = count_chunks([text], splitter, processes=2)
    serial = count_chunks([text], splitter, processes=1)
    assert list(parallel.items()) == list(serial.items()) == list(oracle_counts([text], "gpt4").items())
    assert used == ["fork"]


def test_word_table_counts_match_oracle(corpus_text):
    words = corpus_text("taylorswift.txt", 20_000).split()
    table: dict[str, int] = {}
    for w in words:
        table[w] = table.get(w, 0) + 1
    for spec in ("gpt4", "none", "whitespace"):
        assert list(count_word_table(table, parse_split(spec)).items()) == list(oracle_table_counts(table, spec).items())


def test_parallel_counting_cancels_and_reaps_its_child(monkeypatch, corpus_text):
    text = corpus_text("tinyshakespeare.txt", 200_000)
    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1000)
    monkeypatch.setattr(chunks, "SLICE_CHARS", 5_000)
    skip_unless_fork()
    children = []
    real = chunks.fork_call

    def spy(fn):
        children.append(real(fn))
        return children[-1]

    monkeypatch.setattr(chunks, "fork_call", spy)
    checks = []

    def stop_on_third_check():
        checks.append(1)
        return len(checks) >= 3

    with pytest.raises(Cancelled):
        count_chunks([text], parse_split("gpt4"), processes=2, should_stop=stop_on_third_check)
    assert len(checks) == 3 and len(children) == 1
    with pytest.raises(ChildProcessError):  # killed and reaped: no zombie left behind
        os.waitpid(children[0].pid, os.WNOHANG)


def test_given_processes_are_not_used_where_forking_is_unsafe(monkeypatch, corpus_text):
    """From a second thread (forking is unsafe while it runs) two processes count in one, alike."""
    import threading

    text = corpus_text("tinyshakespeare.txt", 100_000)
    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1000)
    monkeypatch.setattr(chunks, "SLICE_CHARS", 5_000)
    used = []
    monkeypatch.setattr(chunks, "fork_call", lambda fn: used.append("fork"))
    got = {}
    worker = threading.Thread(target=lambda: got.update(counts=count_chunks([text], parse_split("gpt4"), processes=2)))
    worker.start()
    worker.join()
    assert used == []
    assert list(got["counts"].items()) == list(oracle_counts([text], "gpt4").items())
