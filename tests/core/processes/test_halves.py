"""Big texts given two processes encode in two (a forked child takes the second half) with the
same ids, a warm cache afterwards, and a fallback when the child fails; in one by default, and
never from a worker thread."""

from __future__ import annotations

import threading

import pytest

from tests.conftest import skip_unless_fork
from tests.real_tokenizers import corpus, fresh_copy, load_ours, load_reference
from tokviz.core.bpe.ranked import tokenizer as rank_bpe
from tokviz.core.processes import fork, halves


@pytest.fixture
def small_parallel(monkeypatch):
    monkeypatch.setattr(halves, "PARALLEL_MIN_CHARS", 50_000)
    monkeypatch.setattr(rank_bpe, "HALVES_MIN_LATIN", 50_000)


def needs_fork():
    skip_unless_fork()


def test_two_processes_give_the_ids_of_one(small_parallel, monkeypatch):
    needs_fork()
    tok = fresh_copy(load_ours("cl100k_base"))
    text = corpus("gutenberg30.txt", 400_000)
    calls, returned = [], []
    real = halves.run_halves

    def run_halves(encode, new_entries, merge, text, cut, **kw):
        calls.append(cut)
        return real(encode, new_entries, lambda entries: returned.append(entries) or merge(entries), text, cut, **kw)

    monkeypatch.setattr(halves, "run_halves", run_halves)
    forks = []
    real_fork = fork.fork_call
    monkeypatch.setattr(fork, "fork_call", lambda fn: forks.append(1) or real_fork(fn))
    ids = tok.encode_ids(text, processes=2)
    assert calls and 100_000 < calls[0] < 300_000
    assert forks == [1]
    assert ids == load_reference("cl100k_base").encode_ordinary(text)
    cut = calls[0]
    new_in_child = set(tok.chunks(text[cut:])) - set(tok.chunks(text[:cut]))
    assert returned and new_in_child and new_in_child <= set(returned[0])  # the child's chunks came back
    tok = fresh_copy(tok)
    assert tok.encode_ids(text) == ids  # the default: one process
    assert tok.encode(text, processes=1).ids == ids
    assert forks == [1]
    assert tok.encode(text, processes=2).ids == ids
    assert tok.encode_ordinary(text, processes=2).ids == ids
    assert forks == [1, 1, 1]
    assert rank_bpe.halves is halves


def test_a_text_of_ascii_letters_takes_two_processes_only_when_longer(monkeypatch):
    """Below `HALVES_MIN_LATIN`, mostly-English text is encoded in one process (two would take less
    time for a third more CPU); a text of other scripts of the same length in two."""
    needs_fork()
    monkeypatch.setattr(halves, "PARALLEL_MIN_CHARS", 50_000)
    monkeypatch.setattr(rank_bpe, "HALVES_MIN_LATIN", 300_000)
    forks = []
    real_fork = fork.fork_call
    monkeypatch.setattr(fork, "fork_call", lambda fn: forks.append(1) or real_fork(fn))
    tok = load_ours("cl100k_base")
    english, udhr = corpus("gutenberg30.txt", 200_000), corpus("udhr2_all.txt", 200_000)
    reference = load_reference("cl100k_base")
    assert fresh_copy(tok).encode_ids(english, processes=2) == reference.encode_ordinary(english)
    assert forks == []
    assert fresh_copy(tok).encode_ids(udhr, processes=2) == reference.encode_ordinary(udhr)
    assert forks == [1]
    longer = corpus("gutenberg30.txt", 400_000)
    assert fresh_copy(tok).encode_ids(longer, processes=2) == reference.encode_ordinary(longer)
    assert forks == [1, 1]


def test_every_one_off_path_lets_the_mergers_see_the_text_first(small_parallel, monkeypatch):
    """The ids, their text, the encoding and the two-process JSON each show the mergers the text
    before encoding it: how many new chunks it brings decides the loop (the compiled one, loaded
    for a text of many languages, or one chunk at a time for a few)."""
    from tokviz.core.bpe.byte_ranks import mergers

    needs_fork()
    seen: list[int] = []
    real = mergers.Mergers.prepare
    monkeypatch.setattr(mergers.Mergers, "prepare", lambda self, text: seen.append(len(text)) or real(self, text))
    tok = load_ours("o200k_base")
    text = corpus("udhr2_all.txt", 100_000)
    for run in (lambda t: t.encode_ids(text, processes=2), lambda t: t.encode_ids_text(text, processes=2),
                lambda t: t.encode(text, processes=2), lambda t: t.write_json_once(text, [].append, processes=2)):
        seen.clear()
        assert run(fresh_copy(tok))
        assert seen == [len(text)]


def test_two_processes_give_the_ids_text_of_one(small_parallel, monkeypatch):
    """`encode_ids_text` (the command line's ``--ids``): each half's text made in its process."""
    needs_fork()
    tok = load_ours("o200k_base")
    text = corpus("udhr2_all.txt", 400_000)
    forks = []
    real_fork = fork.fork_call
    monkeypatch.setattr(fork, "fork_call", lambda fn: forks.append(1) or real_fork(fn))
    expected = " ".join(map(str, load_reference("o200k_base").encode_ordinary(text)))
    assert tok.encode_ids_text(text, processes=2) == expected
    assert forks == [1]
    assert tok.encode_ids_text(text) == expected  # the default: one process
    assert forks == [1]
    assert halves.run_halves(lambda p: [p[:2], p[-1]], dict, lambda d: None, "abcdefghij", 4, ids=False) == [
        "ab", "d", "ef", "j"]


def test_child_failure_falls_back_to_this_process():
    needs_fork()

    def encode(part: str) -> list[int]:
        return [len(part)]

    def broken() -> dict:
        raise RuntimeError("the child fails after encoding")

    merged = []
    assert halves.run_halves(encode, broken, merged.append, "abcdefghij", 4) == [4, 6]
    assert merged == []
    assert halves.run_halves(encode, lambda: {"x": (1,)}, merged.append, "abcdefghij", 4) == [4, 6]
    assert merged == [{"x": (1,)}]


def test_a_refused_fork_encodes_here(monkeypatch):
    def refuse(fn):
        raise OSError("no more processes")

    monkeypatch.setattr(fork, "fork_call", refuse)
    assert halves.run_halves(lambda p: [len(p)], dict, lambda d: None, "abcdefghij", 3) == [3, 7]


def test_no_fork_from_a_worker_thread(small_parallel):
    tok, ref = load_ours("o200k_base"), load_reference("o200k_base")  # skips here, not in the thread
    text = corpus("taylorswift.txt", 120_000)
    seen = {}

    def work():
        seen["can_fork"] = fork.can_fork()
        seen["ids"] = tok.encode_ids(text, processes=2)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["can_fork"] is False
    assert seen["ids"] == ref.encode_ordinary(text)


def test_two_processes_give_the_json_of_one(small_parallel, monkeypatch):
    """`write_json_once` (the command line's ``--json``): each half encoded, its spans derived and
    its arrays formatted in its own process; the text equals the one-process JSON."""
    import json

    needs_fork()
    tok = load_ours("o200k_base")
    # emoji and combining marks: tokens that cut a character on both sides of the cut
    text = "\U0001f44d\u0301 " * 20 + corpus("udhr2_all.txt", 300_000) + " \U0001f9d1\u200d\U0001f4bb" * 30
    forks = []
    real_fork = fork.fork_call
    monkeypatch.setattr(fork, "fork_call", lambda fn: forks.append(1) or real_fork(fn))
    out: list[str] = []
    assert tok.write_json_once(text, out.append, processes=2)
    assert forks == [1]
    enc = tok.encode(text, allowed_special="all")
    assert "".join(out) == json.dumps(enc.to_json())
    special = next(iter(tok.special_tokens))
    out.clear()
    assert not tok.write_json_once(text, out.append) and out == []  # the default: one process
    for refused in (text[:1000], text + special):  # too small; holds a special token
        out.clear()
        assert not tok.write_json_once(refused, out.append, processes=2) and out == []
    assert forks == [1]
