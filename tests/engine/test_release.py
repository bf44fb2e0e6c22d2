"""`GradualRelease`: big lists are emptied a slice per turn of the event loop, small ones at once."""

from __future__ import annotations

from tokviz.engine.release import SLICE, GradualRelease


def test_a_big_list_is_freed_over_several_turns(qtbot):
    release = GradualRelease()
    freed = []

    class Row:
        def __del__(self):
            freed.append(1)

    rows = [Row() for _ in range(3 * SLICE + 5)]
    release.drop(rows)
    assert release.pending == 3 * SLICE + 5 and freed == []  # nothing freed on the spot
    release.free_slice()  # one turn: one slice
    assert len(freed) == SLICE and release.pending == 2 * SLICE + 5
    qtbot.waitUntil(lambda: release.pending == 0)
    assert rows == [] and len(freed) == 3 * SLICE + 5


def test_a_small_list_is_freed_at_once(qtbot):
    release = GradualRelease()
    small = list(range(10))
    release.drop(small)
    assert small == [] and release.pending == 0


def test_a_result_graph_is_taken_apart_over_several_turns(qtbot):
    from dataclasses import dataclass, field

    release = GradualRelease()
    freed = []

    class Token:
        def __del__(self):
            freed.append(1)

    @dataclass
    class Row:
        tokens: list = field(default_factory=list)
        index: dict = field(default_factory=dict)

    @dataclass
    class Result:
        rows: list

    n = 3 * SLICE
    result = Result([Row([Token() for _ in range(n)], {i: Token() for i in range(10)}) for _ in range(2)])
    release.drop_graph(result)
    del result
    assert freed == []  # nothing freed on the spot
    release.free_slice()
    assert len(freed) < 2 * n + 20  # not all in one turn
    qtbot.waitUntil(lambda: release.pending == 0)
    assert len(freed) == 2 * n + 20


def test_pieces_held_elsewhere_are_let_go_untouched(qtbot):
    from dataclasses import dataclass

    @dataclass
    class Result:
        labels: list
        spans: list

    release = GradualRelease()
    shown = [str(i) for i in range(3 * SLICE)]  # the view still shows these labels
    result = Result(shown, [(i, i + 1) for i in range(3 * SLICE)])
    spans = result.spans
    release.drop_graph(result)
    del result
    qtbot.waitUntil(lambda: release.pending == 0)
    assert shown == [str(i) for i in range(3 * SLICE)]  # never emptied under the view
    assert len(spans) == 3 * SLICE  # held by this test: kept whole


def test_a_big_dict_is_freed_over_several_turns(qtbot):
    release = GradualRelease()
    freed = []

    class Value:
        def __del__(self):
            freed.append(1)

    release.drop_graph({i: Value() for i in range(3 * SLICE)})
    release.free_slice()  # takes the dict apart
    release.free_slice()  # one slice of its pairs
    assert 0 < len(freed) < 3 * SLICE
    qtbot.waitUntil(lambda: release.pending == 0)
    assert len(freed) == 3 * SLICE
