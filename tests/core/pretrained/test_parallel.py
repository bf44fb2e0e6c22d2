"""Big texts encode in two processes (a forked child takes the second half) with the same ids,
a warm cache afterwards, and a fallback when the child fails; never from a worker thread."""

from __future__ import annotations

import threading

import pytest

from tokviz.core.pretrained import parallel

from .pretrained_helpers import corpus, load_ours, load_reference


@pytest.fixture
def small_parallel(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CHARS", 50_000)


def test_two_processes_give_the_ids_of_one(small_parallel, monkeypatch):
    if not parallel.can_fork():
        pytest.skip("forking is not available here (not Linux, or other threads run)")
    tok = load_ours("cl100k_base")
    text = corpus("gutenberg30.txt", 400_000)
    tok._caches.clear()
    calls = []
    real = parallel.run_halves
    monkeypatch.setattr(parallel, "run_halves", lambda *a: calls.append(a[-1]) or real(*a))
    ids = tok.encode_ids(text)
    assert calls and 100_000 < calls[0] < 300_000
    assert ids == load_reference("cl100k_base").encode_ordinary(text)
    cache = tok._cache(tok._threshold(None))
    assert set(tok.chunks(text)) <= set(cache)  # the child's chunks came back into the cache
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    assert tok.encode_ids(text) == ids


def test_child_failure_falls_back_to_this_process():
    if not parallel.can_fork():
        pytest.skip("forking is not available here")

    def encode(part: str) -> list[int]:
        return [len(part)]

    def broken() -> dict:
        raise RuntimeError("the child fails after encoding")

    merged = []
    assert parallel.run_halves(encode, broken, merged.append, "abcdefghij", 4) == [4, 6]
    assert merged == []
    assert parallel.run_halves(encode, lambda: {"x": (1,)}, merged.append, "abcdefghij", 4) == [4, 6]
    assert merged == [{"x": (1,)}]


def test_no_fork_from_a_worker_thread(small_parallel):
    # files and libraries first, on this thread: a missing one skips here, not inside the worker
    tok, text = load_ours("o200k_base"), corpus("taylorswift.txt", 120_000)
    expected = load_reference("o200k_base").encode_ordinary(text)
    seen = {}

    def work():
        try:
            seen["can_fork"] = parallel.can_fork()
            seen["ids"] = tok.encode_ids(text)
        except BaseException as exc:  # noqa: BLE001 - reported on the test's thread below
            seen["error"] = exc

    t = threading.Thread(target=work)
    t.start()
    t.join()
    if "error" in seen:
        raise seen["error"]
    assert seen["can_fork"] is False
    assert seen["ids"] == expected
