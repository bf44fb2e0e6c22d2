"""The engine's child processes (training, comparison) decide how many processes their job uses
(`choose_processes`, once) and pass the number down; the window's own threads keep the default
(one process). The results are the same either way."""

from __future__ import annotations

import os

from tests.conftest import shared_file
from tokviz.core import TrainSettings
from tokviz.core.processes.pipes import write_frame
from tokviz.engine import compare_child
from tokviz.engine.training import child as training_child


def run_child_main(module, monkeypatch, frames: list) -> None:
    """Run `module.child_main` in this process on `frames` (the parent's side closed after them)."""
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    for frame in frames:
        write_frame(w_in, frame)
    os.close(w_in)
    monkeypatch.setattr(module, "child_pipes", lambda: (r_in, w_out))
    monkeypatch.setattr(module, "watch_parent", lambda fd, stop: None)
    monkeypatch.setattr("signal.signal", lambda *a: None)  # the test process keeps its handlers
    try:
        assert module.child_main() == 0
    finally:
        for fd in (r_in, r_out, w_out):
            os.close(fd)


def test_the_training_child_chooses_its_processes_and_passes_them_down(monkeypatch):
    given = []
    monkeypatch.setattr(training_child, "choose_processes", lambda: 3)
    monkeypatch.setattr(training_child, "training_events",
                        lambda *a, processes=1, **k: given.append(processes) or iter(()))
    run_child_main(training_child, monkeypatch, [(TrainSettings(merges=3), False, "t", 1), b"low lower"])
    assert given == [3]


def test_the_compare_child_chooses_its_processes_and_passes_them_down(monkeypatch):
    given = []
    monkeypatch.setattr(compare_child, "choose_processes", lambda **_: 3)
    monkeypatch.setattr(compare_child, "run_comparison",
                        lambda *a, processes=1, **k: given.append(processes) or "result")
    run_child_main(compare_child, monkeypatch, [("text", [], False, None)])
    assert given == [3]


def test_training_events_count_with_the_processes_given(monkeypatch, corpus_text, forks):
    from tokviz.core.text import chunks

    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1000)
    monkeypatch.setattr(chunks, "SLICE_CHARS", 20_000)
    real = chunks.fork_call
    monkeypatch.setattr(chunks, "fork_call", lambda fn: forks.append(1) or real(fn))  # imported by name there
    corpus = training_child.CorpusInput(corpus_text("tinyshakespeare.txt", 100_000))
    merges = {}
    for n in (1, 2):
        forks.clear()
        events = list(training_child.training_events(TrainSettings(merges=20, split="gpt4"), corpus,
                                                     should_stop=lambda: False, processes=n))
        merges[n] = [step.pair for kind, batch in events if kind == "steps" for step in batch]
        assert len(forks) == n - 1
    assert merges[1] == merges[2] and len(merges[1]) == 20
    forks.clear()
    list(training_child.training_events(TrainSettings(merges=20, split="gpt4"), corpus, should_stop=lambda: False))
    assert forks == []  # the default (the window's thread): one process


def test_a_comparison_measures_its_models_side_by_side_with_the_processes_given(monkeypatch, corpus_text, forks):
    """Two models given two processes: each in a forked child of its own; given one, none. One
    model is measured in one process whatever it is given (halves of its pieces saved no time)."""
    from tokviz.core.compare import side_by_side

    real = side_by_side.fork_stream
    monkeypatch.setattr(side_by_side, "fork_stream", lambda fn: forks.append(1) or real(fn))
    text = corpus_text("gutenberg30.txt", 150_000)
    specs = [compare_child.path_spec(name, str(shared_file("vocab", "tiktoken", f"{name}.tiktoken")))
             for name in ("cl100k_base", "r50k_base")]
    results = {}
    for n in (1, 2):
        forks.clear()
        results[n] = compare_child.run_comparison(text, specs, should_stop=lambda: False,
                                                  progress=lambda what, f: None, processes=n)
        assert len(forks) == (2 if n == 2 else 0)
    assert results[1].results == results[2].results
    assert [r.error for r in results[2].results] == [None, None]
    forks.clear()
    compare_child.run_comparison(text, specs[:1], should_stop=lambda: False, progress=lambda what, f: None,
                                 processes=2)
    assert forks == []
