"""Models measured side by side in forked children: the same results as one after the other, items
in model order, failures reported for their model alone, no child left behind, and a refused fork
measured here."""

from __future__ import annotations

import os

import pytest

from tests.conftest import skip_unless_fork
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.compare import ModelSpec, iter_compare, run
from tokviz.core.compare import side_by_side as sbs
from tokviz.core.compare.side_by_side import Failed, side_by_side
from tokviz.core.errors import TokvizError
from tokviz.core.explain.loaded_timeline import as_timeline

TEXT = "Article 1. All human beings are born free and equal in dignity and rights: 1948, 2024.\n" * 40 + \
    "Статья 1. Все люди рождаются свободными и равными в своем достоинстве и правах.\n" * 40 + \
    "第一条 人人生而自由，在尊严和权利上一律平等。\n" * 40 + "    def max_len(self): return getValue(_x) 😀\n" * 20


def model(extra: list[bytes], pattern: str = r" ?\w+| ?[^\w\s]+|\s+"):
    ranks = {bytes([b]): b for b in range(256)}
    for piece in extra:
        ranks.setdefault(piece, len(ranks))
    return as_timeline(RankBpeTokenizer(ranks, pattern=pattern))


MODELS = [model([]), model([b"in", b" a", b"an", b"and", b" and"]), model([b"\xd0\xb0", b"\xe4\xba", b"\xe4\xba\xba"])]


def specs():
    return [ModelSpec(f"m{k}", lambda t=t: t) for k, t in enumerate(MODELS)]


def drained(processes: int, **kw):
    events = list(iter_compare(TEXT, specs(), processes=processes, **kw))
    return [e.result for e in events if e.result is not None], [e.model_index for e in events]


@pytest.mark.parametrize("by_document", [False, True])
def test_side_by_side_gives_what_one_after_the_other_gives(by_document, monkeypatch):
    """Side by side, each child reads the text in smaller pieces (here 3,000 characters: seven)."""
    skip_unless_fork()
    monkeypatch.setattr(run, "SIDE_PIECE_SIZE", 3000)
    serial, serial_order = drained(1, by_document=by_document)
    parallel, parallel_order = drained(2, by_document=by_document)
    assert parallel == serial
    assert parallel_order == serial_order == sorted(serial_order)  # every event of a model before the next's
    assert [r.error for r in parallel] == [None] * 3


def test_a_model_that_fails_is_reported_alone():
    skip_unless_fork()

    def broken():
        raise TokvizError("cannot read m1: not a tokenizer")

    models = specs()
    models[1] = ModelSpec("m1", broken)
    results = [e.result for e in iter_compare(TEXT, models, processes=2) if e.result is not None]
    assert [r.error for r in results] == [None, "cannot read m1: not a tokenizer", None]
    assert results[0].metrics is not None and results[2].metrics is not None


def test_items_come_in_job_order_from_children():
    skip_unless_fork()
    runs = side_by_side([lambda n=n: iter([(n, os.getpid()), (n, os.getpid())]) for n in range(4)], 3)
    got = [list(items) for items in runs]
    assert [[n for n, _ in items] for items in got] == [[0, 0], [1, 1], [2, 2], [3, 3]]
    assert os.getpid() not in {pid for items in got for _, pid in items}


def test_errors_and_deaths_of_children_become_failures():
    skip_unless_fork()

    def expected():
        yield 1
        raise TokvizError("bad file")

    def dies():
        yield 1
        os._exit(3)

    def unexpected():
        raise ValueError("a bug")

    got = [list(items) for items in side_by_side([expected, dies, unexpected], 2)]
    assert got[0] == [1, Failed("bad file")]
    assert got[1][0] == 1 and isinstance(got[1][1], Failed) and "stopped" in got[1][1].message
    assert len(got[2]) == 1 and "ValueError: a bug" in got[2][0].message


def test_closing_early_kills_every_child():
    skip_unless_fork()
    pids_r, pids_w = os.pipe()
    hold_r, hold_w = os.pipe()  # never written: a child reading it waits until it is killed

    def blocked():
        os.write(pids_w, f"{os.getpid()}\n".encode())
        yield "started"
        os.read(hold_r, 1)
        yield "never"

    try:
        runs = side_by_side([blocked, blocked, blocked], 2)
        first = next(runs)
        assert next(first) == "started"
        written = b""
        while len(written.split()) < 2:  # both children started (the third waits for a free one)
            written += os.read(pids_r, 64)
        pids = [int(p) for p in written.split()]
        runs.close()
        for pid in pids:
            with pytest.raises(ChildProcessError):  # reaped: no child of ours is left behind
                os.waitpid(pid, os.WNOHANG)
    finally:
        for fd in (pids_r, pids_w, hold_r, hold_w):
            os.close(fd)


def test_a_refused_fork_is_measured_here(monkeypatch):
    def refuse(fn):
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(sbs, "fork_stream", refuse)
    got = [list(items) for items in side_by_side([lambda: iter([os.getpid()]), lambda: iter("ab")], 2)]
    assert got == [[os.getpid()], ["a", "b"]]


def test_each_model_is_measured_with_the_collector_paused_and_given_back_between_items():
    """Opening and encoding run with the cyclic collector paused; the reader gets it back as it was."""
    import gc

    seen = []

    def opened():
        seen.append(gc.isenabled())
        return MODELS[1]

    assert gc.isenabled()
    for _ in iter_compare(TEXT, [ModelSpec("m", opened)], by_document=True, processes=1):
        seen.append(("between", gc.isenabled()))
    assert seen[0] is False and all(enabled for _, enabled in seen[1:]) and len(seen) >= 2
