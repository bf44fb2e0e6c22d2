"""Merge timeline: models, playback, keyboard, jumping, live filling, provenance, word tracing."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt

from tests.qt_fixtures import append_steps, drain_events
from tokviz.core import TrainSettings
from tokviz.core.bpe.replay import decision_at, merge_tree, segment_text, trace_word
from tokviz.core.bpe.timeline import train
from tokviz.core.display.tokens import visible_token
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.engine.tables import merge_model
from tokviz.engine.tables.merge_model import COL_COUNT, COL_LEFT, COL_RIGHT, COL_TOKEN, MergeModel
from tokviz.panels.timeline.panel import TimelinePanel

LOW = TrainSettings(units="chars", split="whitespace", end_of_word="_", merges=10)


@pytest.fixture(scope="module")
def low_timeline():
    return train(LOW, texts=[sample("low-lower-lowest").read()])


@pytest.fixture
def panel(qtbot, low_timeline):
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    p.set_corpus(sample("low-lower-lowest").read())
    model.set_timeline(low_timeline, source="test")
    p.resize(1200, 500)
    p.show()
    qtbot.waitExposed(p)
    p.refresh()
    return p


def texts(timeline, ids):
    vocab = timeline.token_bytes()
    return " ".join(vocab[i].decode() for i in ids)


# -- core replay ------------------------------------------------------------------------------


def test_trace_word_lowest_known_answer(low_timeline):
    lines = [texts(low_timeline, s.ids) for s in trace_word(low_timeline.tokenizer(), "lowest")]
    assert lines[0] == "l o w e s t _"
    assert lines[-3:] == ["lo w est_", "low est_", "lowest_"]
    ranks = [s.rank for s in trace_word(low_timeline.tokenizer(), "lowest")]
    assert ranks == [None, 0, 1, 2, 3, 4, 9]


def test_segment_text_marks_fresh_tokens(low_timeline):
    tok = low_timeline.tokenizer()
    seg = segment_text(tok, "low lowest", 4)  # merge 3 = l + o
    assert texts(low_timeline, [seg.ids[i] for i in seg.fresh]) == "lo lo"
    assert segment_text(tok, "low", 0).fresh == ()


def test_decision_explains_ties(low_timeline):
    d = decision_at(low_timeline, 1)
    assert d.rank == 0 and not d.upcoming
    winner = d.candidates[0]
    assert winner.winner and winner.tied and "first occurrence" in winner.reason
    tied = [c for c in d.candidates if c.tied]
    assert len(tied) == 3  # es, st, t_ all occur 12 times
    assert all("later first occurrence" in c.reason for c in tied[1:])
    assert decision_at(low_timeline, 0).upcoming


def test_merge_tree_down_to_characters(low_timeline):
    lowest = low_timeline.base_size + 9
    tree = merge_tree(low_timeline, lowest)
    assert tree.rank == 9
    assert texts(low_timeline, tree.leaves()) == "l o w e s t _"
    assert tree.depth() == 5


# -- merge model ------------------------------------------------------------------------------


def test_merge_model_rows_and_live_fill(qtmodeltester, low_timeline):
    from dataclasses import replace

    step_model = StepModel()
    model = MergeModel()
    model.attach(step_model)
    step_model.set_timeline(replace(low_timeline, steps=[]))
    assert model.rowCount() == 0
    append_steps(step_model, low_timeline.steps[:4])
    append_steps(step_model, low_timeline.steps[4:])
    assert model.rowCount() == 10
    qtmodeltester.check(model)
    assert [model.index(0, c).data() for c in (COL_LEFT, COL_RIGHT, COL_TOKEN, COL_COUNT)] == ["e", "s", "es", "12"]
    assert model.index(9, COL_TOKEN).data() == "lowest_"


def test_merge_model_batch_is_one_insert_and_paints_asks_only_what_it_answers(low_timeline):
    """A batch of training steps is one rowsInserted (never a reset, which would repaint and
    re-measure the whole table); the roles a delegate asks on every paint that the table does
    not answer (font, colours, check state, icon) are None."""
    from dataclasses import replace

    step_model = StepModel()
    model = MergeModel()
    model.attach(step_model)
    step_model.set_timeline(replace(low_timeline, steps=[]))
    inserted, resets = [], []
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    model.modelReset.connect(lambda: resets.append(True))
    append_steps(step_model, low_timeline.steps[:4])
    append_steps(step_model, low_timeline.steps[4:])
    assert inserted == [(0, 3), (4, 9)] and resets == []
    cell = model.index(0, COL_TOKEN)
    for role in (Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole,
                 Qt.ItemDataRole.CheckStateRole, Qt.ItemDataRole.DecorationRole):
        assert model.data(cell, role) is None
    assert model.data(cell) == "es" and model.data(cell, Qt.ItemDataRole.UserRole + 1) == low_timeline.steps[0].id


def test_merge_model_100k_rows_draw_only_what_is_read(monkeypatch):
    """Token texts are made when a row is read, not for every merge up front (timings:
    tests/bench/bench_tables.py)."""
    text = " ".join(f"w{i:06d}" for i in range(3000)) * 2
    tl = train(TrainSettings(units="chars", split="none", merges=2000, min_count=1), texts=[text[:20000]])
    made = []

    def counting_visible_token(token: bytes) -> str:
        made.append(token)
        return visible_token(token)

    monkeypatch.setattr(merge_model, "visible_token", counting_visible_token)
    step_model = StepModel()
    model = MergeModel()
    model.attach(step_model)
    big = tl.__class__(tl.settings, tl.base, list(tl.steps) * 50, tl.corpus_length, tl.n_chunks, True)
    step_model.set_timeline(big)
    assert model.rowCount() == len(big.steps) >= 50_000
    assert made == []
    assert model.index(model.rowCount() - 1, COL_TOKEN).data() == visible_token(big.steps[-1].token)
    assert 0 < len(made) <= 3  # the token and its two parts at most


def test_export_csv(panel, tmp_path):
    path = tmp_path / "merges.csv"
    assert panel.export_csv(path) == 10
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    assert rows[0][:3] == ["rank", "left_id", "right_id"]
    assert rows[1][3:5] == ["e", "s"] and rows[10][6] == "lowest_"
    png = tmp_path / "chart.png"
    assert panel.export_chart_png(png) and png.stat().st_size > 1000


# -- panel ------------------------------------------------------------------------------------


def test_keyboard_stepping(panel, qtbot):
    m = panel.step_model
    assert m.step == 10
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_Home)
    assert m.step == 0
    qtbot.keyClick(panel.table, Qt.Key.Key_Right)
    qtbot.keyClick(panel.table, Qt.Key.Key_Right)
    assert m.step == 2
    qtbot.keyClick(panel.table, Qt.Key.Key_Left)
    assert m.step == 1
    qtbot.keyClick(panel.table, Qt.Key.Key_End)
    assert m.step == 10
    qtbot.keyClick(panel.table, Qt.Key.Key_Home)
    qtbot.keyClick(panel.table, Qt.Key.Key_Space)
    assert panel.playback.is_playing
    qtbot.keyClick(panel.table, Qt.Key.Key_Space)
    assert not panel.playback.is_playing


def test_jump_updates_every_view(panel):
    m = panel.step_model
    m.set_step(4)
    panel.refresh()
    assert panel.transport.slider.value() == 4 and panel.transport.spin.value() == 4
    rows = panel.table.selectionModel().selectedRows()
    assert [r.row() for r in rows] == [3]
    assert "merge 4 made “\u2068lo\u2069”: 10× in the text shown" in panel.corpus_label.text()  # merge k = step k
    assert panel.corpus_view.fresh_count == 10  # low ×5 + lower ×2 + lowest ×3
    assert panel.candidates.item(0, 0).text() == "★ winner"
    assert panel.chart.cursor_step == 4
    # the spin box and a click on the table jump too
    panel.transport.spin.setValue(7)
    assert m.step == 7
    panel.table.selectionModel().setCurrentIndex(panel.merge_model.index(1, 0),
                                                 QItemSelectionModel.SelectionFlag.ClearAndSelect)
    assert m.step == 2
    assert panel.provenance.token == panel.step_model.timeline.base_size + 1


def test_candidates_show_tie(panel):
    panel.step_model.set_step(1)
    panel.refresh()
    assert panel.candidates.item(0, 1).text() == "e + s"
    assert "won by first occurrence" in panel.candidates.item(0, 4).text()
    assert panel.candidates.item(1, 0).text() == "= tie"


def test_playback_plays_to_the_end(panel, qtbot):
    pb = panel.playback
    pb.set_speed(60)
    pb.go_home()
    with qtbot.waitSignal(pb.playing_changed, timeout=10_000, check_params_cb=lambda on: not on):
        pb.play()
    assert panel.step_model.step == 10
    panel.refresh()
    assert panel.chart.cursor_step == 10


def test_playback_loops(panel, qtbot):
    pb = panel.playback
    pb.set_speed(60)
    pb.set_loop(True)
    pb.go_end()
    pb.play()  # at the end: starts over
    assert panel.step_model.step == 0
    seen = set()
    panel.step_model.step_changed.connect(seen.add)
    qtbot.waitUntil(lambda: 10 in seen and panel.step_model.step < 5, timeout=10_000)
    pb.pause()
    assert not pb.is_playing


def test_speed_is_clamped(panel):
    panel.playback.set_speed(1000)
    assert panel.playback.speed == 60
    panel.playback.set_speed(0)
    assert panel.playback.speed == 0.25


def test_trace_word_in_panel(panel):
    lines = panel.trace("lowest")
    assert lines[0] == "l o w e s t _"
    assert lines[-3:] == ["lo w est_", "low est_", "lowest_"]
    t = panel.provenance.trace_table
    assert [t.item(r, 0).text() for r in range(t.rowCount())] == ["", "1", "2", "3", "4", "5", "10"]  # merge k = step k
    panel.step_model.set_step(4)  # the trace follows the step
    panel.refresh()
    assert panel.provenance.trace_lines()[-1] == "lo w est_"


def test_word_frequency_table_rows(qtbot, low_timeline):
    table_text = sample("word-frequencies").read()
    tl = train(TrainSettings(units="chars", split="whitespace", end_of_word="_", merges=6, word_counts=True),
               table={"low": 5, "lower": 2, "newest": 6, "widest": 3})
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    p.set_corpus(table_text, word_counts=True)
    model.set_timeline(tl)
    p.refresh()
    lines = p.corpus_view.toPlainText().splitlines()
    assert [line.split() for line in lines] == [["5", "low"], ["2", "lower"], ["6", "newest"], ["3", "widest"]]
    assert "4 of 4 words" in p.corpus_label.text()


def test_live_filling_and_follow(make_window, qtbot):
    w = make_window(load_default_sample=False)
    w.script.load_sample("english-prose")
    p = w.timeline_panel
    assert w.script.start_training(TrainSettings(vocab_size=700))
    assert w.script.wait_for_training(60_000) == "finished"
    qtbot.waitUntil(lambda: p.transport.spin.value() == w.step_model.n_steps and not p.pacing.pending, timeout=10_000)
    assert p.merge_model.rowCount() == w.step_model.n_steps == 444
    assert p.transport.follow_box.isChecked()
    assert f"Step {w.step_model.n_steps:,}" in p.corpus_label.text()
    p.step_model.set_step(5)
    assert not p.transport.follow_box.isChecked()
    p.transport.follow_box.setChecked(True)
    assert w.step_model.step == 444


def test_vocabulary_selection_shows_provenance(make_window, qtbot):
    w = make_window(load_default_sample=False)
    w.script.load_sample("low-lower-lowest")
    assert w.script.start_training(LOW)
    assert w.script.wait_for_training(30_000) == "finished"
    base = w.script.timeline.base_size
    row = w.vocab_model.row_of_id(base + 4)  # "low"
    w.vocab_panel.table.selectionModel().select(
        w.vocab_model.index(row, 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
    assert w.step_model.step == w.step_model.n_steps  # looking at a token keeps the model in use
    assert w.timeline_panel.provenance.token == base + 4
    w.timeline_panel.provenance.goto_button.click()  # "Go to step 5": the explicit action
    assert w.step_model.step == 5
    tree = w.timeline_panel.provenance.tree
    assert tree.topLevelItem(0).text(0) == "low" and tree.topLevelItem(0).childCount() == 2
    assert w.timeline_panel.trace("lower")[-1] == "low e r _"


def test_clicker_keys_work_window_wide_but_not_while_typing(make_window, qtbot):
    w = make_window(load_default_sample=False)
    w.script.load_sample("low-lower-lowest")
    assert w.script.start_training(LOW)
    assert w.script.wait_for_training(30_000) == "finished"
    m = w.step_model
    table = w.vocab_panel.table
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_Right)  # off: the vocabulary keeps its arrow keys
    assert m.step == 10
    w.timeline_panel.transport.set_clicker_keys(True)
    qtbot.keyClick(table, Qt.Key.Key_Home)
    qtbot.keyClick(table, Qt.Key.Key_PageDown)
    qtbot.keyClick(table, Qt.Key.Key_Right)
    assert m.step == 2
    editor = w.corpus_panel.editor
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_Right)  # typing: the editor moves its cursor instead
    assert m.step == 2 and editor.textCursor().position() == 1
    w.timeline_panel.transport.set_clicker_keys(False)
    qtbot.keyClick(table, Qt.Key.Key_End)
    assert m.step == 2


def test_chart_shows_as_many_plots_as_fit(panel, qtbot):
    chart = panel.chart.chart()  # the pyqtgraph chart behind the tab's stand-in
    panel.series_box.setCurrentIndex(panel.series_box.findData("count"))
    assert chart.shown == [2]
    panel.series_box.setCurrentIndex(panel.series_box.findData("all"))
    assert chart.shown == [0, 1, 2]
    panel.series_box.setCurrentIndex(panel.series_box.findData("auto"))
    chart.resize(400, 100)
    assert chart.shown == [0]
    chart.resize(400, 400)
    assert chart.shown == [0, 1, 2]


def test_clicking_the_chart_jumps(panel, qtbot):
    chart = panel.chart
    panel.tabs.setCurrentWidget(chart.parentWidget())
    chart.resize(500, 400)
    drain_events()
    plot = chart.plots[chart.shown[-1]]
    scene_pos = plot.vb.mapViewToScene(plot.vb.viewRect().center())
    scene_pos.setX(plot.vb.mapViewToScene(plot.vb.mapSceneToView(scene_pos).__class__(3, 0)).x())
    assert chart.step_at_scene_pos(scene_pos) == 3
    with qtbot.waitSignal(chart.step_clicked, timeout=10_000) as blocker:
        chart.step_clicked.emit(chart.step_at_scene_pos(scene_pos))
    assert blocker.args == [3]
    assert panel.step_model.step == 3


def test_timeline_fills_while_training_runs(make_window, qtbot, long_text):
    w = make_window(load_default_sample=False)
    w.script.set_corpus_text(long_text)
    p = w.timeline_panel
    assert w.script.start_training(TrainSettings(units="chars", split="whitespace", min_count=1, merges=20_000))
    qtbot.waitUntil(lambda: p.merge_model.rowCount() >= 50, timeout=30_000)  # rows come in the table's turns
    assert w.training_engine.is_running
    seen = w.step_model.n_steps
    qtbot.waitUntil(lambda: p.transport.spin.value() > seen, timeout=10_000)  # following the newest
    assert p.transport.follow_box.isChecked()
    p.transport.follow_box.setChecked(False)  # freeze while training goes on
    frozen = w.step_model.step
    qtbot.waitUntil(lambda: p.merge_model.rowCount() > frozen + 20, timeout=30_000)
    assert w.step_model.step == frozen and p.transport.spin.maximum() > frozen
    w.script.cancel_training()
    assert w.script.wait_for_training(30_000) == "cancelled"
    assert p.merge_model.rowCount() == w.step_model.n_steps


def test_selecting_a_new_token_right_after_training(make_window):
    w = make_window(load_default_sample=False)
    w.script.load_sample("cat-sat")
    assert w.script.start_training(TrainSettings(merges=5))
    assert w.script.wait_for_training(30_000) == "finished"
    w.vocab_panel.table.selectRow(w.vocab_model.row_of_id(260))  # no refresh has run yet
    assert w.timeline_panel.provenance.token == 260 and w.step_model.step == 5
    assert w.timeline_panel.provenance.tree.topLevelItem(0).text(1) == "260"


def test_trace_lowest_on_the_foundation_corpus(qtbot):
    """The issue's example: low x5, lower x2, lowest x1 with end-of-word `_` shows `lowest` going
    `l o w e s t _` -> `lo w e s t _` -> `low e s t _` -> ... in the panel's trace."""
    settings = TrainSettings(units="chars", split="whitespace", end_of_word="_", min_count=2)
    tl = train(settings, table={"low": 5, "lower": 2, "lowest": 1})
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    p.set_corpus("low 5\nlower 2\nlowest 1\n")
    model.set_timeline(tl, source="test")
    p.refresh()
    lines = p.trace("lowest")
    assert lines[:3] == ["l o w e s t _", "lo w e s t _", "low e s t _"]
    assert lines[-1] == "lowe s t _"  # (lowe, r) and (lower, _) never fire on lowest
    t = p.provenance.trace_table
    assert [t.item(r, 0).text() for r in range(t.rowCount())] == ["", "1", "2", "4"]  # merge k = step k


def test_step_zero_scrolls_the_merge_table_to_the_top(qtbot):
    """At step 0 no merge is selected and the table shows its first rows, not the last ones."""
    settings = TrainSettings(units="bytes", split="gpt2", merges=300)
    timeline = train(settings, texts=[sample("english-prose").read()])
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    model.set_timeline(timeline, source="test")
    p.resize(1200, 500)
    p.show()
    qtbot.waitExposed(p)
    p.refresh()
    bar = p.table.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # the last merge is in view
    model.set_step(0)
    p.refresh()
    assert p.table.selectionModel().selectedRows() == []
    assert bar.value() == 0


def test_merge_tree_leaves_keep_their_room_at_depth(qtbot):
    """Every label of a deep merge tree ends well before the Id column, however deep it sits."""
    from PySide6.QtGui import QFontMetrics

    from tokviz.panels.timeline.provenance import ProvenanceView

    timeline = train(TrainSettings(units="bytes", split="gpt2", merges=400), texts=[sample("english-prose").read()])
    vocab = timeline.token_bytes()
    deep = max(range(len(vocab)), key=lambda i: (timeline.merge_tree(i).depth(), len(vocab[i])))
    assert timeline.merge_tree(deep).depth() >= 5
    view = ProvenanceView()
    qtbot.addWidget(view)
    view.resize(420, 400)
    view.show()
    view.set_state(timeline, timeline.tokenizer(), vocab, timeline.n_steps)
    view.show_token(deep)
    tree = view.tree
    fm = QFontMetrics(tree.font())

    def ends(item, depth):
        yield tree.indentation() * (depth + 1) + fm.horizontalAdvance(item.text(0))
        for i in range(item.childCount()):
            yield from ends(item.child(i), depth + 1)

    assert max(ends(tree.topLevelItem(0), 0)) + 12 <= tree.columnWidth(0)


@pytest.mark.parametrize("log", [False, True])
def test_chart_captions_stay_clear_of_the_curves(qtbot, log):
    """No point of a curve is drawn under its plot's caption (linear and log scale)."""
    from PySide6.QtCore import QPointF

    from tokviz.panels.timeline.chart import TimelineChart

    timeline = train(TrainSettings(units="bytes", split="gpt2", merges=300), texts=[sample("english-prose").read()])
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    model.set_timeline(timeline, source="test")
    p.resize(1000, 700)
    p.show()
    p.tabs.setCurrentWidget(p.chart.parentWidget())
    p.refresh()
    drain_events()
    chart = p.chart.chart()
    assert isinstance(chart, TimelineChart)
    chart.set_mode("all")
    chart.resize(700, 600)
    chart.set_log_scale(log)
    drain_events()
    for i in chart.shown:
        plot, caption = chart.plots[i], chart.captions[i]
        x, y = chart.curves[i].getData()
        assert len(x) > 10
        box = caption.mapRectToItem(plot.vb.childGroup, caption.boundingRect())  # view coordinates
        under = (x >= box.left()) & (x <= box.right())
        assert under.any()
        bottom = min(box.top(), box.bottom())  # y grows upwards in view coordinates
        assert (y[under] < bottom).all(), f"plot {i}: the curve runs under its caption"
        assert plot.vb.viewRect().contains(QPointF(float(x[-1]), float(y[-1])))


def test_a_tie_lists_every_tied_pair_and_five_rows_show(panel):
    panel.step_model.set_step(1)
    panel.refresh()
    t = panel.candidates
    tied = [t.item(r, 1).text() for r in range(t.rowCount()) if t.item(r, 0).text() == "= tie"]
    assert tied  # "tie with n other pairs": the winner's tooltip names them all
    tip = t.item(0, 0).toolTip()
    assert tip.startswith("Tied with: ") and tip.removeprefix("Tied with: ").split(", ") == tied
    assert all(t.item(0, c).toolTip() == tip for c in range(t.columnCount()))
    assert t.item(1, 0).toolTip() == ""  # only the winner's row explains
    panel.resize(1200, 260)  # a short dock: the merge table and the candidates keep five rows
    drain_events()
    for table in (t, panel.table):
        assert table.viewport().height() >= 5 * table.verticalHeader().defaultSectionSize(), table.objectName()


def test_switching_models_keeps_the_place_in_the_corpus(make_window, qtbot):
    """Comparing two models on the same passage: a switch of model shows the corpus window where
    the user left it, not back at the corpus's start."""
    w = make_window(load_default_sample=False)
    w.script.set_corpus_text(" ".join(f"word{i % 97} the cat sat" for i in range(4_000)))
    p = w.timeline_panel
    assert w.script.start_training(TrainSettings(merges=30))
    assert w.script.wait_for_training(30_000) == "finished"
    first = w.script.timeline
    assert p.position_slider.isVisible() and p.position_slider.maximum() > 1000
    p.position_slider.setValue(p.position_slider.maximum() // 2)
    qtbot.waitUntil(lambda: not p.pacing.pending, timeout=10_000)
    shown = p.corpus_view.toPlainText()
    other = train(TrainSettings(merges=10), texts=["the cat sat on the mat " * 20])
    w.step_model.set_timeline(other)
    qtbot.waitUntil(lambda: not p.pacing.pending, timeout=10_000)
    assert p.position_slider.value() == p.position_slider.maximum() // 2
    assert p.corpus_view.toPlainText() == shown
    w.step_model.set_timeline(first)
    qtbot.waitUntil(lambda: not p.pacing.pending, timeout=10_000)
    assert p.corpus_view.toPlainText() == shown
