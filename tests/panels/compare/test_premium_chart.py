"""The premiums chart as a reader sees it: curves named after the models, one dot per document,
sorted; hovering names a language and its premiums; the script view shows the core's medians; colours
stand out in both themes; fonts grow for the projector; redrawing while rows arrive."""

from __future__ import annotations

import math
import random

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.conftest import shared_file
from tests.qt_fixtures import drain_events
from tokviz.app.theme import dark_palette, light_palette
from tokviz.core.compare import Comparison, Document, ModelResult
from tokviz.core.compare.premium_stats import premium_order, script_premiums
from tokviz.panels.compare.chart import PremiumChart
from tokviz.panels.compare.plots import MODEL_COLORS, contrast

SCRIPTS = ("Latin", "Latin", "Latin", "Cyrillic", "Arabic", "Han", "Devanagari")
MODELS = ("/models/gpt2/tokenizer.json", "/vocab/cl100k_base.tiktoken", "/models/mistral/tokenizer.model")


def comparison(n_docs: int = 340, models=MODELS, *, seed: int = 1, missing: int = 0) -> Comparison:
    """`n_docs` documents in a few scripts; premiums spread like udhr2's (0.1 .. 15); the last
    model lacks its `missing` last premiums (a run still arriving)."""
    rng = random.Random(seed)
    docs = tuple(Document(i + 1, f"Language {i + 1}", i, i + 1, SCRIPTS[i % len(SCRIPTS)]) for i in range(n_docs))
    results = []
    for k, name in enumerate(models):
        prem = [1.0 if i == 0 else round(math.exp(rng.uniform(-2.3, 2.7)), 4) for i in range(n_docs)]
        if k == len(models) - 1 and missing:
            prem = prem[: n_docs - missing]
        results.append(ModelResult(name, premiums=tuple(prem)))
    return Comparison(tuple(results), docs, 0)


@pytest.fixture
def chart(qtbot):
    w = PremiumChart()
    qtbot.addWidget(w)
    w.resize(900, 560)
    w.show()
    qtbot.waitExposed(w)
    return w


def legend_labels(plot) -> list[str]:
    return [label.text for _, label in plot.legend.items]


def test_legends_name_the_models_not_their_files(chart):
    chart.set_comparison(comparison(20))
    assert legend_labels(chart.languages) == ["gpt2", "cl100k_base", "mistral"]
    chart.set_view("scripts")
    assert legend_labels(chart.scripts) == ["gpt2", "cl100k_base", "mistral"]


def test_one_dot_per_document_each_model_sorted(chart):
    c = comparison(340, missing=40)
    chart.set_comparison(c)
    plot = chart.languages
    assert len(plot.curves) == 3
    for curve, r, order in zip(plot.curves, c.results, plot.orders):
        xs, ys = curve.getData()
        assert len(xs) == len(r.premiums) and xs.tolist() == list(range(1, len(r.premiums) + 1))
        assert order == premium_order(r.premiums)
        assert plot.log  # 0.1 .. 15: a log axis
        assert ys.tolist() == pytest.approx([math.log10(p) for p in sorted(r.premiums)])
    assert [len(o) for o in plot.orders] == [340, 340, 300]
    assert plot.reference_line.value() == 0.0  # log10(1.0)


def test_one_model_and_a_narrow_range_draw_on_a_linear_axis(chart):
    docs = (Document(1, "en", 0, 1, "Latin"), Document(2, "fr", 1, 2, "Latin"), Document(3, "ru", 2, 3, "Cyrillic"))
    chart.set_comparison(Comparison((ModelResult("/m/gpt2/tokenizer.json", premiums=(1.0, 1.3, 2.1)),), docs, 0))
    plot = chart.languages
    assert not plot.log and legend_labels(plot) == ["gpt2"]
    assert plot.curves[0].getData()[1].tolist() == [1.0, 1.3, 2.1] and plot.reference_line.value() == 1.0


def test_hovering_a_dot_names_its_language_and_every_premium(chart, qtbot):
    c = comparison(60)
    chart.set_comparison(c)
    plot = chart.languages
    doc = plot.orders[1][30]  # the 31st cheapest language of cl100k
    with qtbot.waitSignal(chart.hovered, timeout=5000) as blocker:
        QTest.mouseMove(plot.viewport(), plot.point_position(1, doc))
    text = blocker.args[0]
    d = c.documents[doc]
    assert text.startswith(f"{d.number}. {d.title} ({d.script}):")
    for label, r in zip(("gpt2", "cl100k_base", "mistral"), c.results):
        assert f"{label} {r.premiums[doc]:.2f}" in text
    assert "(#31 of 60)" in text
    assert len(plot.rings.data) == 3  # that language ringed on every curve
    assert d.title in plot.name_label.textItem.toPlainText()


def test_the_script_view_shows_the_cores_medians(chart, qtbot):
    c = comparison(120)
    chart.set_view("scripts")
    chart.set_comparison(c)
    plot = chart.scripts
    expected = script_premiums(c.results, c.documents)
    assert [r.script for r in plot.rows] == [r.script for r in expected]
    for k in range(3):
        xs = plot.medians[k].getData()[0].tolist()
        assert xs == pytest.approx([math.log10(r.spreads[k].median) for r in expected])
    row = len(expected) - 1
    plot.resize(plot.width(), plot.minimumHeight())
    with qtbot.waitSignal(chart.hovered, timeout=5000) as blocker:
        QTest.mouseMove(plot.viewport(), plot.row_position(row))
    text = blocker.args[0]
    s = expected[row]
    assert text.startswith(f"{s.script}, {len(s.documents)} documents:")
    assert f"gpt2 median {s.spreads[0].median:.2f}" in text


@pytest.mark.parametrize("palette", [light_palette, dark_palette])
def test_every_model_colour_stands_out_in_either_theme(chart, palette):
    c = comparison(30, models=[f"/m/model{k}/tokenizer.json" for k in range(len(MODEL_COLORS))])
    chart.set_comparison(c)
    chart.setPalette(palette())
    drain_events()
    base = chart.palette().color(chart.palette().ColorRole.Base)
    plot = chart.languages
    assert plot.backgroundBrush().color() == base
    for k in range(len(MODEL_COLORS)):
        assert contrast(plot.curve_color(k), base) >= 3.0
    assert plot.getPlotItem().getAxis("left").textPen().color() == chart.palette().color(chart.palette().ColorRole.Text)
    chart.set_view("scripts")
    for k in range(len(MODEL_COLORS)):
        assert contrast(chart.scripts.mark_color(k), base) >= 3.0


def test_a_bigger_font_draws_bigger_dots_and_ticks(chart):
    chart.set_comparison(comparison(30))
    plot = chart.languages
    small = plot.curves[0].opts["symbolSize"]
    font = chart.font()
    font.setPointSizeF(font.pointSizeF() * 2.5)  # what presenter mode does to the application font
    chart.setFont(font)
    drain_events()
    assert plot.curves[0].opts["symbolSize"] > 2 * small
    assert plot.getPlotItem().getAxis("left").style["tickFont"].pointSizeF() == pytest.approx(font.pointSizeF())
    assert plot.legend.opts["labelTextSize"] == f"{font.pointSizeF():g}pt"


def test_redrawing_while_rows_arrive_updates_the_curves_in_place(chart):
    full = comparison(100)
    curves = None
    for done in (5, 20, 60, 100):
        part = Comparison(tuple(ModelResult(r.model, premiums=r.premiums[:done]) for r in full.results),
                          full.documents, 0)
        chart.set_comparison(part)
        curves = curves or list(chart.languages.curves)
        assert chart.languages.curves == curves  # the same items: no rebuilding
        assert [len(c.getData()[0]) for c in curves] == [done] * 3
        assert len(chart.languages.legend.items) == 3


@pytest.mark.slow
def test_the_udhr_with_a_tokenizer_json_in_its_folder(chart):
    from tokviz.core.compare import ModelSpec, compare
    from tokviz.engine.compare_task import open_any_model

    udhr = shared_file("corpora", "udhr2_all.txt").read_text(encoding="utf-8")
    path = str(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))
    c = compare(udhr, [ModelSpec(path, lambda: open_any_model(path))], by_document=True)
    chart.set_comparison(c)
    plot = chart.languages
    assert legend_labels(plot) == ["gpt2"] and len(c.documents) == 383
    assert len(plot.curves[0].getData()[0]) == 383 and plot.log
    assert chart.caption.text() == "premium = tokens / tokens of “Universal Declaration of Human Rights” · log scale"
    chart.set_view("scripts")
    assert sum(len(r.documents) for r in chart.scripts.rows) == 383


def test_the_panel_names_a_tokenizer_json_by_its_folder(window, qtbot, tmp_path):
    from tests.panels.compare.test_compare_panel import TEXT, run_and_wait
    from tokviz.core import TrainSettings, train
    from tokviz.core.saved.tokenizer_export import export_tokenizer_json

    (tmp_path / "gpt2").mkdir()
    export_tokenizer_json(train(TrainSettings(merges=30), texts=[TEXT * 3]), tmp_path / "gpt2" / "tokenizer.json")
    window.script.set_corpus_text(TEXT)
    panel = window.script.select_panel("compare")
    panel.add_path(tmp_path / "gpt2" / "tokenizer.json")
    panel.by_document.setChecked(True)
    assert run_and_wait(qtbot, panel) == "finished"
    assert legend_labels(panel.chart.languages) == ["gpt2"]
    assert panel.metrics_model.headerData(1, Qt.Orientation.Horizontal) == "gpt2"
    assert "Gini of premiums: gpt2 " in panel.status.text()


def test_presenter_mode_gives_the_chart_the_screen(window):
    panel = window.script.select_panel("compare")
    panel.by_document.setChecked(True)
    setup = (panel.models_list, panel.known_button, panel.text_box, panel.run_button, panel.reference_box)
    window.script.enter_presenter(["compare"])
    try:
        drain_events()
        assert all(w.isHidden() for w in setup) and not panel.tabs.isHidden() and not panel.status.isHidden()
    finally:
        window.script.leave_presenter()
    drain_events()
    assert not any(w.isHidden() for w in setup) and panel.by_document.isChecked()
