"""`TrainingEngine`: end to end, batching, progress, cancel, newest run wins, failures, shutdown."""

from __future__ import annotations

import gc
import os
import signal
import sys

import pytest

from tests.qt_fixtures import drain_events
from tokviz.core import TokvizError, TrainSettings, train
from tokviz.engine.training import engine as training_mod
from tokviz.engine.training.engine import CorpusInput, TrainingEngine
from tokviz.engine.workers import background_mode, resume_collector

SAMPLE = "the cat sat on the mat. the rat sat on the hat. " * 40


@pytest.fixture
def engine(qtbot):
    e = TrainingEngine()
    yield e
    assert e.shutdown(), "threads did not stop"
    assert e.thread_count == 0


class Recorder:
    def __init__(self, engine: TrainingEngine) -> None:
        self.events: list[tuple] = []
        self.batches: list[list] = []
        engine.started.connect(lambda: self.events.append(("started",)))
        engine.prepared.connect(lambda tl: self.events.append(("prepared", tl)))
        engine.steps_ready.connect(self._on_steps)
        engine.finished.connect(lambda tl: self.events.append(("finished", tl)))
        engine.cancelled.connect(lambda: self.events.append(("cancelled",)))
        engine.failed.connect(lambda m: self.events.append(("failed", m)))
        self.progress = []
        engine.progress_changed.connect(self.progress.append)

    def _on_steps(self, steps):
        self.batches.append(steps)
        self.events.append(("steps", len(steps)))

    def kinds(self) -> list[str]:
        return [e[0] for e in self.events if e[0] != "steps"]

    def terminal(self) -> list[tuple]:
        return [e for e in self.events if e[0] in ("finished", "cancelled", "failed")]


def test_end_to_end_matches_core_train(engine, qtbot):
    rec = Recorder(engine)
    settings = TrainSettings(vocab_size=300)
    with qtbot.waitSignal(engine.finished, timeout=30_000) as blocker:
        engine.start(settings, CorpusInput(SAMPLE))
    timeline = blocker.args[0]
    expected = train(settings, texts=[SAMPLE])
    assert [(s.pair, s.count) for s in timeline.steps] == [(s.pair, s.count) for s in expected.steps]
    assert timeline.finished is True
    streamed = [s for batch in rec.batches for s in batch]
    assert [s.rank for s in streamed] == list(range(timeline.n_merges))
    assert rec.kinds() == ["started", "prepared", "finished"]
    last = rec.progress[-1]
    assert (last.stage, last.done, last.budget, last.fraction) == ("training", timeline.n_merges, 44, 1.0)
    assert engine.is_running is False


def test_merges_arrive_in_batches(engine, qtbot, long_text):
    rec = Recorder(engine)
    with qtbot.waitSignal(engine.finished, timeout=60_000) as blocker:
        engine.start(TrainSettings(merges=3000, min_count=1), CorpusInput(long_text[:150_000]))
    n = blocker.args[0].n_merges
    assert n == 3000
    assert sum(len(b) for b in rec.batches) == n
    assert len(rec.batches) < n / 10  # batched, not one signal per merge


def test_cancel_mid_run_is_immediate_and_the_thread_ends(engine, qtbot, long_text):
    rec = Recorder(engine)
    with qtbot.waitSignal(engine.steps_ready, timeout=30_000):
        engine.start(TrainSettings(min_count=1), CorpusInput(long_text))
    assert engine.is_running
    reported = []
    engine.cancelled.connect(lambda: reported.append(engine.is_running))
    assert engine.cancel() is True
    assert reported == [False]  # reported before cancel() returned, not when the worker stops
    qtbot.waitUntil(lambda: engine.thread_count == 0, timeout=10_000)
    drain_events()  # nothing from the cancelled run may arrive any more
    assert rec.terminal() == [("cancelled",)]
    assert engine.is_running is False
    assert engine.cancel() is False  # nothing left to cancel


def test_a_new_run_replaces_the_running_one(engine, qtbot, long_text):
    rec = Recorder(engine)
    with qtbot.waitSignal(engine.steps_ready, timeout=30_000):
        engine.start(TrainSettings(min_count=1), CorpusInput(long_text))
    second = TrainSettings(merges=25)
    with qtbot.waitSignal(engine.finished, timeout=30_000) as blocker:
        engine.start(second, CorpusInput(SAMPLE))
    qtbot.waitUntil(lambda: engine.thread_count == 0, timeout=10_000)
    assert blocker.args[0].settings == second
    assert [e[0] for e in rec.terminal()] == ["finished"]  # the first run ended silently
    prepared = [e[1] for e in rec.events if e[0] == "prepared"]
    assert prepared[-1].settings == second
    after_second = rec.events[[e[0] for e in rec.events].index("started", 1):]
    n_second = sum(n for kind, *rest in after_second if kind == "steps" for n in rest)
    assert n_second == blocker.args[0].n_merges == train(second, texts=[SAMPLE]).n_merges


@pytest.mark.parametrize(
    ("settings", "corpus", "message"),
    [
        (TrainSettings(units="chars", vocab_size=2), CorpusInput("abc"), "vocabulary size 2 is too small"),
        (TrainSettings(split="regex:x"), CorpusInput("abc abc"), "no text to train on"),
        (TrainSettings(), CorpusInput("low 5\nlower two\n", word_counts=True, name="t"), "t:2:"),
    ],
)
def test_failures_become_messages(engine, qtbot, settings, corpus, message):
    rec = Recorder(engine)
    with qtbot.waitSignal(engine.failed, timeout=30_000) as blocker:
        engine.start(settings, corpus)
    assert message in blocker.args[0]
    assert rec.terminal() == [("failed", blocker.args[0])]
    assert engine.is_running is False


def test_impossible_settings_fail_at_once(engine):
    with pytest.raises(TokvizError, match="vocabulary size 100 is too small"):
        engine.start(TrainSettings(vocab_size=100), CorpusInput("abc"))
    with pytest.raises(TokvizError, match="either a vocabulary size or a number of merges"):
        engine.start(TrainSettings(vocab_size=300, merges=3), CorpusInput("abc"))
    assert engine.is_running is False and engine.thread_count == 0


def test_word_count_table(engine, qtbot):
    with qtbot.waitSignal(engine.finished, timeout=30_000) as blocker:
        engine.start(TrainSettings(merges=10, word_counts=True, split="whitespace"),
                     CorpusInput("low 5\nlower 2\nnewest 6\nwidest 3\n", word_counts=True))
    tokens = [s.token for s in blocker.args[0].steps]
    assert tokens[:4] == [b"es", b"est", b"lo", b"low"]


def test_process_mode_gives_the_same_merges(engine, qtbot, monkeypatch):
    monkeypatch.setattr(training_mod, "PROCESS_MIN_CHARS", 10)
    settings = TrainSettings(vocab_size=320)
    corpus = CorpusInput(word_counts=False, pieces=(SAMPLE[:700], SAMPLE[700:]))
    rec = Recorder(engine)
    with qtbot.waitSignal(engine.finished, timeout=60_000) as blocker:
        engine.start(settings, corpus)
    expected = train(settings, texts=[SAMPLE])
    assert [s.pair for s in blocker.args[0].steps] == [s.pair for s in expected.steps]
    assert sum(len(b) for b in rec.batches) == expected.n_merges == 16


@pytest.mark.parametrize("use_process", [False, True])
@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_one_step_list_shared_read_only(engine, qtbot, monkeypatch, use_process, algorithm):
    """The run's steps live in one list: the object `prepared` hands out is the one that grows,
    that `finished` returns and that the step model shows; the worker returns a count, not a copy,
    and the trainer (in this process) records nothing."""
    from tokviz.core import registry
    from tokviz.core.algorithm.staged import StagedTraining
    from tokviz.engine.step_model import StepModel

    monkeypatch.setattr(training_mod, "PROCESS_MIN_CHARS", 10 if use_process else 10**9)
    trainings = []
    real_steps = StagedTraining.steps
    monkeypatch.setattr(StagedTraining, "steps", lambda self, **kw: trainings.append(self) or real_steps(self, **kw))
    sm = StepModel()
    sm.follow(engine)
    shown, sizes = [], []
    sm.timeline_changed.connect(lambda: shown.append(sm.timeline))
    engine.steps_ready.connect(lambda steps: sizes.append(len(engine.timeline.steps)))
    settings = {"bpe": TrainSettings(vocab_size=300),
                "wordpiece": registry.settings_from_json({"algorithm": "wordpiece", "vocab_size": 120}),
                "unigram": registry.settings_from_json({"algorithm": "unigram", "vocab_size": 60})}[algorithm]
    with qtbot.waitSignal(engine.prepared, timeout=60_000) as prepared:
        with qtbot.waitSignal(engine.finished, timeout=60_000) as finished:
            engine.start(settings, CorpusInput(SAMPLE))
    timeline = prepared.args[0]
    assert finished.args[0] is timeline is engine.timeline is sm.timeline
    assert shown == [timeline]  # the step model took that object, not a copy
    assert timeline.finished is True and timeline.n_steps > 0
    assert sizes[-1] == timeline.n_steps and sizes == sorted(sizes)  # appended before each signal
    if not use_process:
        runs = [t for t in trainings if t.settings == settings]  # not the warm-up's tiny training
        assert runs and all(t.timeline.n_steps == 0 for t in runs)  # no second list
    worker = training_mod.TrainingWorker(0, settings, CorpusInput(SAMPLE), use_process=use_process)
    assert worker.work() == timeline.n_steps  # a count: the worker keeps no list either


def _training_processes(monkeypatch) -> list:
    """The `ChildProcess` handles of the training processes started from now on."""
    made = []
    child_process = training_mod.ChildProcess

    def recorded(*args, **kwargs):
        made.append(child_process(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(training_mod, "ChildProcess", recorded)
    return made


def test_process_mode_cancel_stops_the_process(engine, qtbot, monkeypatch, long_text):
    monkeypatch.setattr(training_mod, "PROCESS_MIN_CHARS", 10)
    children = _training_processes(monkeypatch)
    with qtbot.waitSignal(engine.steps_ready, timeout=60_000):
        engine.start(TrainSettings(min_count=1), CorpusInput(long_text))
    (child,) = children
    proc = child.proc
    assert proc is not None and proc.poll() is None
    if hasattr(os, "getpriority"):  # the window wins the CPU on a busy machine
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) > os.getpriority(os.PRIO_PROCESS, 0)
    reported = []
    engine.cancelled.connect(lambda: reported.append(True))
    assert engine.cancel() is True
    assert reported == [True]  # at once, without waiting for the process to exit
    qtbot.waitUntil(lambda: engine.thread_count == 0, timeout=10_000)
    assert proc.poll() is not None  # the training process has exited


def test_process_mode_crash_is_reported_with_the_exit_code(engine, qtbot, monkeypatch, long_text):
    if not hasattr(signal, "SIGKILL"):
        pytest.skip("needs POSIX signals")
    monkeypatch.setattr(training_mod, "PROCESS_MIN_CHARS", 10)
    children = _training_processes(monkeypatch)
    with qtbot.waitSignal(engine.steps_ready, timeout=60_000):
        engine.start(TrainSettings(min_count=1), CorpusInput(long_text))
    (child,) = children
    with qtbot.waitSignal(engine.failed, timeout=10_000) as blocker:
        os.kill(child.pid, signal.SIGKILL)
    assert "the training process stopped unexpectedly (exit code -9)" in blocker.args[0]
    qtbot.waitUntil(lambda: engine.thread_count == 0, timeout=10_000)


def test_process_mode_failure_message(engine, qtbot, monkeypatch):
    monkeypatch.setattr(training_mod, "PROCESS_MIN_CHARS", 10)
    with qtbot.waitSignal(engine.failed, timeout=60_000) as blocker:
        engine.start(TrainSettings(split="regex:q"), CorpusInput("abc " * 10))
    assert "no text to train on" in blocker.args[0]


def test_shutdown_during_counting_and_training(qtbot, long_text):
    e = TrainingEngine()
    with qtbot.waitSignal(e.steps_ready, timeout=30_000):
        e.start(TrainSettings(min_count=1), CorpusInput(long_text))
    assert e.shutdown() is True
    assert e.thread_count == 0
    with pytest.raises(RuntimeError, match="shut down"):
        e.start(TrainSettings(), CorpusInput("abc"))


def test_background_mode_restores_gc_and_switch_interval():
    interval = sys.getswitchinterval()
    assert gc.isenabled()
    with background_mode():
        with background_mode():
            assert not gc.isenabled()
            assert sys.getswitchinterval() <= 0.001
            results = [[i] for i in range(1000)]  # long-lived results made in the background
        assert not gc.isenabled()
    assert gc.isenabled()
    assert sys.getswitchinterval() == interval
    assert gc.get_freeze_count() >= len(results)  # frozen: later collections skip them
def test_the_collector_resumed_after_start_up_waits_for_a_running_background_job():
    gc.disable()  # as the window's start-up leaves it
    try:
        with background_mode():
            resume_collector()  # the window is up while a job runs: the job keeps its pause
            assert not gc.isenabled()
        assert gc.isenabled()  # the job's end turns it on
        gc.disable()
        resume_collector()  # no job: at once, the objects made so far frozen
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.enable()


