"""The glitch-token panel follows the current model: its findings and summary are cleared, and a
search still running is cancelled, when another model becomes current."""

from __future__ import annotations

import os
import time

from PySide6.QtCore import Qt

import tokviz.engine.glitch_finder as glitch_finder
import tokviz.panels.glitch_panel as glitch_panel
from tests.conftest import skip_unless_fork
from tokviz.core import Cancelled, TrainSettings


def _train(window, text: str, merges: int) -> None:
    window.script.set_corpus_text(text, word_counts=False)
    assert window.script.start_training(TrainSettings(merges=merges, split="gpt2"))
    assert window.script.wait_for_training(60_000) == "finished"


def test_the_summary_is_cleared_when_another_model_becomes_current(window, qtbot):
    _train(window, "low lower lowest newer newest " * 20, 12)
    gp = window.script.panel("glitches")
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        assert gp.run()
    assert gp.outcome == "finished" and gp.model.rowCount() > 0
    assert "unreachable" in gp.label.text() and "unused" in gp.label.text()
    assert gp.coverage is not None and "Too small" in gp.coverage_label.text()  # 600 characters
    _train(window, "a completely different corpus " * 20, 8)
    assert gp.report is None and gp.model.rowCount() == 0 and gp.outcome == ""
    assert "unreachable" not in gp.label.text()
    assert gp.label.text().startswith("Current model: the trained model.")
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):  # the new model can be checked
        assert gp.run()
    assert gp.report.n_tokens == window.script.timeline.vocab_size


def test_a_running_search_is_cancelled_when_the_model_changes(window, qtbot, monkeypatch):
    def endless(tokenizer, corpus, *, should_stop, progress):  # a search that never ends by itself
        while not should_stop():
            time.sleep(0.005)
        raise Cancelled()
        yield  # a generator, as the real one

    monkeypatch.setattr(glitch_finder, "find_glitches", endless)
    _train(window, "low lower lowest newer newest " * 20, 12)
    gp = window.script.panel("glitches")
    assert gp.run() and gp.is_running and not gp.run_button.isEnabled()
    with qtbot.waitSignal(gp.report_ready, timeout=10_000):
        window.step_model.set_timeline(None)
    assert not gp.is_running and gp.outcome == "cancelled"
    assert gp.run_button.isEnabled() and not gp.cancel_button.isEnabled() and gp.progress.isHidden()
    assert gp.label.text() == glitch_panel.IDLE_TEXT
    assert gp.engine.wait_idle(10_000)


def test_rows_stream_into_the_ranked_table_while_the_finder_runs(window, qtbot, qtmodeltester, monkeypatch):
    import tokviz.core.glitch.report as report

    _train(window, "low lower lowest newer newest " * 20, 12)
    gp = window.script.panel("glitches")
    counts = []
    gp.rows_added.connect(counts.append)
    monkeypatch.setattr(report, "CHUNK", 64)  # the 268 tokens come in chunks
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        assert gp.run()
    assert gp.outcome == "finished" and counts and counts[-1] == gp.model.rowCount() == gp.report.n_tokens
    scores = [float(gp.model.index(r, 0).data()) for r in range(gp.model.rowCount())]
    assert scores == sorted(scores, reverse=True)  # ranked, highest first
    assert gp.model.index(0, 6).data()  # a "why" for every row
    assert gp.model.headerData(6, Qt.Orientation.Horizontal) == "Why"
    qtmodeltester.check(gp.model, force_py=True)


def test_streamed_chunks_keep_the_selection_on_its_token(window, qtbot):
    from tokviz.core.glitch import GlitchScan

    _train(window, "low lower lowest newer newest " * 20, 12)
    gp = window.script.panel("glitches")
    tok = window.script.timeline.tokenizer()
    chunks = list(GlitchScan(tok, "low lower").chunks(50))
    gp.model.add_rows(chunks[0])
    gp.table.selectRow(3)
    chosen = gp.model.finding(3).id
    for chunk in chunks[1:]:
        gp.model.add_rows(chunk)
    row = gp.table.selectionModel().currentIndex().row()
    assert gp.model.finding(row).id == chosen


def _reaped(pid: int) -> bool:
    """True once `pid` is no child of ours left to wait for (``WNOWAIT``: looking does not reap it)."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return False


def _standalone_panel(qtbot, text: str):
    """A glitch panel on its own (as the benchmark runs it), on a small trained model."""
    from tokviz.core import train
    from tokviz.engine.step_model import StepModel

    steps = StepModel()
    steps.set_timeline(train(TrainSettings(merges=30, split="gpt2", min_count=1), texts=[text]))
    panel = glitch_panel.GlitchPanel(steps, corpus_text=lambda n: text[:n])
    qtbot.addWidget(panel)
    return panel, steps


def test_the_scan_runs_in_a_forked_child_and_ranks_as_in_process(qtbot, monkeypatch):
    """The window's thread never waits for a scoring worker: where forking is possible, the scan
    runs in a child process, and its ranking is the in-process one, row for row."""
    from tokviz.core.glitch import glitch_report

    text = "low lower lowest newer newest wider " * 30
    panel, steps = _standalone_panel(qtbot, text)
    skip_unless_fork()
    parent, real = os.getpid(), glitch_finder.find_glitches

    def only_in_a_child(*args, **kwargs):
        assert os.getpid() != parent, "scored in the window's process"
        return real(*args, **kwargs)

    monkeypatch.setattr(glitch_finder, "find_glitches", only_in_a_child)
    with qtbot.waitSignal(panel.report_ready, timeout=60_000):
        assert panel.run()
    assert panel.outcome == "finished"
    want = glitch_report(steps.timeline.tokenizer(), text[:len(text)])
    assert [(r.id, r.score, r.reason) for r in panel.report.rows] == [(r.id, r.score, r.reason) for r in want.rows]
    panel.shutdown()


def test_without_fork_the_scan_runs_on_the_worker_thread(qtbot, monkeypatch):
    monkeypatch.setattr(glitch_finder, "can_fork", lambda: False)
    panel, steps = _standalone_panel(qtbot, "low lower lowest newer newest " * 30)
    with qtbot.waitSignal(panel.report_ready, timeout=60_000):
        assert panel.run()
    assert panel.outcome == "finished" and panel.report.n_tokens == steps.timeline.vocab_size
    panel.shutdown()


def test_cancelling_a_forked_scan_ends_its_child(qtbot, monkeypatch):
    def endless(tokenizer, corpus, *, should_stop, progress):  # only a kill ends it
        while True:
            time.sleep(0.01)
        yield

    monkeypatch.setattr(glitch_finder, "find_glitches", endless)
    panel, _steps = _standalone_panel(qtbot, "low lower " * 30)
    skip_unless_fork()
    children = []
    real = glitch_finder.scan_in_child
    monkeypatch.setattr(glitch_finder, "scan_in_child", lambda *a: children.append(real(*a)) or children[-1])
    assert panel.run() and children and children[0] is not None
    with qtbot.waitSignal(panel.report_ready, timeout=10_000):
        panel.cancel()
    assert panel.outcome == "cancelled" and panel.engine.wait_idle(10_000)
    qtbot.waitUntil(lambda: _reaped(children[0].pid), timeout=10_000)  # killed and reaped
    panel.shutdown()


def test_findings_go_stale_when_another_corpus_is_opened(qtbot):
    """Findings never pass for the open corpus's: opening another marks them stale, and ranking
    again uses the new corpus."""
    from tokviz.core import train
    from tokviz.engine.step_model import StepModel
    from tokviz.engine.workspace import Workspace

    text = "low lower lowest newer newest " * 20
    steps = StepModel()
    steps.set_timeline(train(TrainSettings(merges=12, split="gpt2"), texts=[text]))
    workspace = Workspace(steps)
    corpus = [text[:300]]
    workspace.set_corpus_reader(lambda n: corpus[0][:n])
    gp = glitch_panel.GlitchPanel(steps, corpus_text=workspace.corpus_sample, corpus_changed=workspace.corpus_changed)
    qtbot.addWidget(gp)
    workspace.notify_corpus_changed()  # nothing ranked yet: nothing goes stale
    assert not gp.stale and gp.label.text().startswith("Current model: the trained model.")  # made with one
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        assert gp.run()
    assert gp.report.corpus_chars == 300 and "ranked on 300 corpus characters" in gp.label.text()
    corpus[0] = text * 3  # a bigger corpus is opened
    workspace.notify_corpus_changed()
    assert gp.stale and gp.label.text().startswith("Stale: these were ranked on 300 characters")
    assert gp.run_button.text() == "Rank again on the new corpus"
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        gp.run_button.click()
    assert not gp.stale and gp.report.corpus_chars == len(text) * 3
    assert f"ranked on {len(text) * 3:,} corpus characters" in gp.label.text()
    assert gp.run_button.text() == glitch_panel.RUN_TEXT
