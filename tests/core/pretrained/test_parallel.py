"""Big texts encode in two processes (a forked child takes the second half) with the same ids,
a warm cache afterwards, and a fallback when the child fails; never from a worker thread."""

from __future__ import annotations

import threading

import pytest

from tokviz.core.pretrained import parallel

from tests.conftest import shared_file

from .pretrained_helpers import corpus, load_ours, load_reference


@pytest.fixture
def small_parallel(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CHARS", 50_000)


# Forking is only done from a process no other thread runs in; once a Qt test has run in this
# process it has threads for good. So the forking runs in a fresh interpreter, whatever ran before.
FRESH = r"""
import json, sys
from tokviz.core.pretrained import load_tokenizer, parallel
parallel.PARALLEL_MIN_CHARS = 50_000
case = sys.argv[1]
if case == "halves":
    tok = load_tokenizer(sys.argv[2])
    text = open(sys.argv[3], encoding="utf-8").read()[:400_000]
    calls, real = [], parallel.run_halves
    parallel.run_halves = lambda *a: calls.append(a[-1]) or real(*a)
    ids = tok.encode_ids(text)
    cached = set(tok.chunks(text)) <= set(tok._cache(tok._threshold(None)))  # the child's chunks came back
    parallel.can_fork = lambda: False
    print(json.dumps({"can_fork": True, "calls": calls, "ids": ids, "cached": cached,
                      "same_in_one": tok.encode_ids(text) == ids}))
else:
    def broken():
        raise RuntimeError("the child fails after encoding")
    merged = []
    first = parallel.run_halves(lambda part: [len(part)], broken, merged.append, "abcdefghij", 4)
    second = parallel.run_halves(lambda part: [len(part)], lambda: {"x": [1]}, merged.append, "abcdefghij", 4)
    print(json.dumps({"can_fork": parallel.can_fork(), "first": first, "second": second, "merged": merged}))
"""


def _fresh(*args: str) -> dict:
    import json
    import subprocess
    import sys
    from pathlib import Path

    if not sys.platform.startswith("linux"):
        pytest.skip("tokviz forks on Linux only")
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", FRESH, *args], capture_output=True, text=True, cwd=root,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_two_processes_give_the_ids_of_one():
    from .pretrained_helpers import tiktoken_path

    text_file = shared_file("corpora", "gutenberg30.txt")
    expected = load_reference("cl100k_base").encode_ordinary(corpus("gutenberg30.txt", 400_000))
    got = _fresh("halves", str(tiktoken_path("cl100k_base")), str(text_file))
    assert got["calls"] and 100_000 < got["calls"][0] < 300_000  # the second half went to a child
    assert got["ids"] == expected and got["cached"] and got["same_in_one"]


def test_child_failure_falls_back_to_this_process():
    got = _fresh("failure")
    assert got["can_fork"]
    assert got["first"] == [4, 6] and got["second"] == [4, 6]
    assert got["merged"] == [{"x": [1]}]  # the failing child's entries are dropped, the good one's kept


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
