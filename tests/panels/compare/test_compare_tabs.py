"""The Compare panel's Vocabularies, Health and Growth tabs, driven like a user: pick models,
run, read the tables and curves, select a token, export."""

from __future__ import annotations

import pytest

from tests.panels.compare.test_compare_panel import TEXT
from tokviz.core import TrainSettings, save_timeline, train
from tokviz.core.compare import ModelSpec, compare
from tokviz.core.compare.health import vocabulary_health
from tokviz.core.compare.report import growth_steps
from tokviz.core.compare.trace import STAGES
from tokviz.core.compare.vocab import compare_vocabularies


@pytest.fixture
def two_models(window, tmp_path):
    """The window trained on TEXT (the current model) and a smaller model from a file."""
    window.script.set_corpus_text(TEXT * 5)
    assert window.script.start_training(TrainSettings(merges=40))
    assert window.script.wait_for_training(60_000) == "finished"
    small = train(TrainSettings(merges=8), texts=[TEXT])
    path = tmp_path / "small.json"
    save_timeline(small, path)
    panel = window.script.panel("compare")
    assert panel.add_current_model()
    panel.add_path(path)
    return panel, window.script.timeline, small


def run_tab(qtbot, tab) -> str:
    with qtbot.waitSignal(tab.ready, timeout=120_000):
        assert tab.run()
    return tab.outcome


def test_vocabularies_side_by_side(window, qtbot, two_models):
    panel, big, small = two_models
    tab = panel.vocab_tab
    assert [tab.pickers[0].itemText(i) for i in range(2)] == [s.label for s in panel.specs]
    tab.pickers[1].setCurrentIndex(1)
    assert run_tab(qtbot, tab) == "finished"
    expected = compare_vocabularies(big, small)
    c = tab.result[0]
    assert [t.data for t in c.shared] == [t.data for t in expected.shared]
    assert f"Jaccard overlap {expected.jaccard:.3f}" in tab.status.text()
    assert tab.model.rowCount() == len(expected.shared)
    tab.show_box.setCurrentIndex(1)  # only in A: the big model's later merges
    assert tab.model.rowCount() == len(expected.only_a) > 0
    seen = []
    panel.token_selected.connect(lambda tl, i: seen.append((tl, i)))
    tab.table.selectRow(0)
    token = tab.model.tokens[tab.table.model().mapToSource(tab.table.model().index(0, 0)).row()]
    assert seen == [(big, token.id_a)]
    assert "(not in it)" in tab.trees.toPlainText() and f"merge {token.rank_a + 1}" in tab.trees.toPlainText()
    # the window shows the token of the model on screen in its vocabulary
    assert window.vocab_panel.selected_ids() == [token.id_a]


def test_health_finds_what_the_core_finds_and_exports(window, qtbot, two_models, tmp_path):
    panel, big, _small = two_models
    tab = panel.health_tab
    assert run_tab(qtbot, tab) == "finished"
    report = tab.result[0]
    expected = vocabulary_health(big, TEXT * 5)
    assert report.rows == expected.rows and report.totals == expected.totals
    assert tab.model.rowCount() == len(expected.rows)
    assert "tokens on" in tab.status.text() and "corpus is small" in tab.status.text()
    tab.filter_box.setCurrentIndex(tab.filter_box.findData("special"))
    assert tab.model.rowCount() == sum(r.category == "special" for r in expected.rows)
    out = tmp_path / "h.csv"
    tab.export(out)
    assert out.read_text(encoding="utf-8").splitlines()[0] == "id,token,category,rank,count,inside,ios,flags"


def test_health_of_an_empty_corpus_says_why(window, two_models):
    panel, _big, _small = two_models
    window.script.set_corpus_text("")
    assert not panel.health_tab.run() and "corpus is empty" in panel.health_tab.status.text()


def test_growth_curve_equals_measuring_each_step(window, qtbot, two_models):
    panel, big, _small = two_models
    tab = panel.growth_tab
    assert run_tab(qtbot, tab) == "finished"
    steps = growth_steps(big.last_step, 40)
    assert [k for k, _ in tab.result] == steps
    direct = compare(TEXT * 5, [ModelSpec(str(k), lambda: big, k) for k in steps])
    assert [m.tokens for _, m in tab.result] == [r.metrics.tokens for r in direct.results]
    tab.metric_box.setCurrentIndex(tab.metric_box.findData("tokens"))
    xs, ys = tab.curve.getData()
    assert list(xs) == steps and list(ys) == [float(r.metrics.tokens) for r in direct.results]
    assert ys[0] > ys[-1]  # more merges, fewer tokens


def test_removing_a_model_updates_every_tab(window, two_models):
    panel, _big, _small = two_models
    panel.models_list.setCurrentRow(1)
    panel.remove_selected()
    for tab in panel.job_tabs:
        assert all(box.count() == 1 for box in tab.pickers)
    assert not panel.vocab_tab.run() and "Add tokenizers" in panel.vocab_tab.status.text()


def test_why_marks_the_first_stage_where_tokenizers_differ(window, qtbot, tmp_path):
    from tests.conftest import shared_file
    from tokviz.core.compare.trace import trace_pipeline
    from tokviz.core.loading import open_timeline

    panel = window.script.panel("compare")
    paths = [shared_file("vocab", "tiktoken", n) for n in ("r50k_base.tiktoken", "cl100k_base.tiktoken")]
    for p in paths:
        panel.add_path(p)
    tab = panel.why_tab
    tab.span.setText("Hello world 12345!")
    assert run_tab(qtbot, tab) == "finished"
    # r50k keeps " 12345" one piece, cl100k cuts digits in threes: the pieces differ first
    assert tab.status.text() == "First difference: pieces (marked)."
    expected = trace_pipeline(open_timeline(str(paths[1])), "Hello world 12345!")
    assert tab.table.item(3, 1).text() == " │ ".join(expected.stages["ids"])
    assert tab.table.item(0, 0).font().bold() and not tab.table.item(2, 0).font().bold()


def test_why_compares_one_tokenizer_at_two_steps(window, qtbot, two_models):
    panel, big, _small = two_models
    panel.add_timeline("current@5", big, 5)
    tab = panel.why_tab
    tab.span.setText("the cat sat on the mat")
    panel.models_list.setCurrentRow(1)
    panel.remove_selected()  # keep the current model at its end and at step 5
    assert run_tab(qtbot, tab) == "finished"
    assert tab.table.horizontalHeaderItem(1).text().endswith("@5")
    assert tab.status.text() == "First difference: tokens (marked)."  # same pieces, fewer merges


def test_why_without_a_span_uses_the_token_view_text(window, qtbot, two_models):
    panel, _big, _small = two_models
    window.token_view_panel.set_text("low lower lowest\nsecond line")
    tab = panel.why_tab
    tab.span.clear()
    assert run_tab(qtbot, tab) == "finished"
    assert tab.span.text() == "low lower lowest"


def test_why_opens_each_model_once_and_traces_as_before(window, qtbot):
    from tests.conftest import shared_file
    from tokviz.core.compare.trace import trace_pipeline
    from tokviz.core.loading import open_timeline

    path = str(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))
    opened = []

    def open_counted():
        opened.append(path)
        return open_timeline(path)

    panel = window.script.panel("compare")
    panel.add_model("gpt2", open_counted)
    tab = panel.why_tab
    for span in ("Hello world, 12345 o", " naïve café, ok 42!"):
        tab.span.setText(span)
        assert run_tab(qtbot, tab) == "finished"
        expected = trace_pipeline(open_timeline(path), span, label="gpt2")
        assert [tab.table.item(row, 0).text() for row in range(4)] == [
            (" │ " if stage != "segmentation" else "\n").join(expected.stages[stage]) for stage in STAGES]
    assert opened == [path]  # the second span is traced on the model opened for the first
    panel.models_list.setCurrentRow(0)
    panel.remove_selected()
    panel.add_model("gpt2", open_counted)
    assert run_tab(qtbot, tab) == "finished" and opened == [path, path]  # a model listed again is read again


def test_why_traces_as_the_span_is_typed(window, qtbot):
    small = train(TrainSettings(merges=8), texts=[TEXT])
    panel = window.script.panel("compare")
    panel.add_timeline("small", small)
    tab = panel.why_tab
    with qtbot.waitSignal(tab.ready, timeout=20_000):
        tab.span.setText("the cat")
        tab.span.textEdited.emit("the cat")
    assert tab.outcome == "finished"
    from tokviz.core.compare.trace import trace_pipeline

    assert tab.table.item(3, 0).text() == " │ ".join(trace_pipeline(small, "the cat").stages["ids"])
