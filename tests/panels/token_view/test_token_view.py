"""Token view panel: typing, hovering, scrubbing, byte tokens, lossy round trip, comparison, exports."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QGuiApplication, QHelpEvent
from PySide6.QtWidgets import QToolTip

from tokviz.core import TrainSettings, train
from tokviz.core.baselines import WordTokenizer
from tokviz.core.display.alignment import differing_cuts
from tokviz.core.display.tokens import BYTES, INSERTED, TEXT, UNKNOWN
from tokviz.engine.step_model import StepModel
from tokviz.engine.token_view import token_view_engine
from tokviz.panels.token_view.panel import TokenViewPanel

CORPUS = "the cat sat on the mat. hello world, hello there! 2024 " * 40
WAIT = 10_000


@pytest.fixture(scope="module")
def timeline():
    return train(TrainSettings(vocab_size=320), texts=[CORPUS])


@pytest.fixture
def make_panel(qtbot):
    panels = []

    def make(timeline=None, corpus=CORPUS, text="hello world"):
        sm = StepModel()
        panel = TokenViewPanel(sm, corpus_text=lambda: corpus)
        qtbot.addWidget(panel)
        panel.resize(900, 700)
        panel.show()
        with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
            panel.set_text(text)
            if timeline is not None:
                sm.set_timeline(timeline)
        panel.wait_idle()
        panels.append(panel)
        return panel, sm

    yield make
    for p in panels:
        p.shutdown()


def test_typing_is_debounced_and_shows_the_final_text(make_panel, qtbot, timeline):
    panel, _ = make_panel(timeline, text="")
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        qtbot.keyClicks(panel.editor, "hello there")
    panel.wait_idle()
    enc = timeline.tokenizer().encode("hello there")
    ref = panel.result.reference
    assert panel.result.request.text == "hello there"
    assert ref.encoding.ids == enc.ids
    assert panel.view.token_count == len(enc.ids)
    assert f"{len(enc.ids)} tokens · 11 characters · 11 bytes" in panel.status.text()
    assert panel.engine.thread_count <= 1


def test_scrubbing_the_step_retokenizes(make_panel, qtbot, timeline):
    panel, sm = make_panel(timeline, text="hello world")
    final = len(panel.result.reference.encoding.ids)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        sm.set_step(0)
    panel.wait_idle()
    assert panel.result.reference.encoding.ids == list(b"hello world")  # no merges: bytes
    assert "step 0/" in panel.status.text()
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        sm.set_step(sm.n_steps)
    panel.wait_idle()
    assert len(panel.result.reference.encoding.ids) == final < 11


@pytest.mark.qt_log_ignore("This plugin does not support raise", "This plugin does not support propagateSizeHints")  # the tooltip window, offscreen
def test_hover_tooltip_shows_id_bytes_merge_and_count(make_panel, qtbot, timeline):
    panel, _ = make_panel(timeline, text="hello world")
    tok = timeline.tokenizer()
    enc = tok.encode("hello world")
    i = next(k for k, t in enumerate(enc.ids) if tok.merge_of(t) is not None)
    tid = enc.ids[i]
    tip = panel.tooltip_for(i)
    rank = tid - 256
    assert f"id {tid}" in tip and enc.tokens[i].hex(" ").upper() in tip
    assert f"merge {rank + 1} (step {rank + 1})" in tip  # merge k = step k and str(timeline.steps[rank].pair[0]) in tip
    assert f"pair count when merged: {timeline.steps[rank].count:,}" in tip
    rect = panel.view.token_rect(i)
    hovered = []
    panel.view.token_hovered.connect(hovered.append)
    qtbot.mouseMove(panel.view.viewport(), rect.center())
    qtbot.waitUntil(lambda: i in hovered, timeout=10_000)
    event = QHelpEvent(QEvent.Type.ToolTip, rect.center(), panel.view.viewport().mapToGlobal(rect.center()))
    QGuiApplication.sendEvent(panel.view.viewport(), event)
    assert QToolTip.isVisible() and f"id {tid}" in QToolTip.text()
    QToolTip.hideText()
    assert panel.view.index_at(QPoint(-5, -5)) == -1


def test_emoji_and_cjk_are_byte_tokens_grouped_by_character(make_panel, timeline):
    text = "hello 東京 👩‍💻 café"
    panel, _ = make_panel(timeline, text=text)
    ref = panel.result.reference
    labels = ref.labels.labels
    assert all("\ufffd" not in s for s in labels)
    first = labels.index("<E6>")
    assert labels[first:first + 6] == ["<E6>", "<9D>", "<B1>", "<E4>", "<BA>", "<AC>"]  # 東京
    caps = ref.captions
    assert caps[:2] == ["東", "京"] and "⟨ZWJ⟩" in caps and "é" in caps
    assert sum(1 for k in ref.labels.kinds if k == BYTES) >= 6 + 11
    # the view draws each group under one line: first and last token share a line
    for first, last in ref.groups:
        assert panel.view.token_rect(first).top() == panel.view.token_rect(last).top()


def test_surrogates_in_the_text_follow_tiktokens_rule(make_panel, qtbot, monkeypatch, timeline):
    text = "ok \ud83d\udc4d and \ud83d.\nnext line"  # a pair and a lone surrogate, as a paste can hand them over
    panel, _ = make_panel(timeline, text="")
    monkeypatch.setattr(panel, "text", lambda: text)  # Qt's editor would drop the lone one before this
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        panel.refresh()
    panel.wait_idle()
    ref = panel.result.reference
    fixed = timeline.tokenizer().encode("ok 👍 and \ufffd.\nnext line")
    assert ref.encoding.ids == fixed.ids  # joined and replaced, as every encode path does
    assert ref.encoding.spans[3] == (3, 5)  # 👍's byte tokens span both code points of the text shown
    assert panel.result.diagnostics is not None and panel.result.batch is not None
    assert panel.view.token_count == len(fixed.ids)


def test_lossy_round_trip_classic_example(make_panel, qtbot):
    tl = train(TrainSettings(units="chars", merges=3), texts=["the cat sat on the mat"])
    text = "the bird flew over the garden"
    panel, _ = make_panel(tl, corpus="the cat sat on the mat", text=text)
    ref = panel.result.reference
    rt = ref.round_trip
    assert not rt.ok
    lost = {text[a:b] for a, b in rt.lossy}
    assert {"w", "v"} <= lost and lost == set("birdflwvgr") - set("the cat sat on the mat")
    assert sum(1 for k in ref.labels.kinds if k == UNKNOWN) == len(rt.lossy)
    assert "round trip lossy" in panel.status.text()
    html = panel.diagnostics.toHtml()
    assert "Round trip ✗" in html and "Lost:" in html
    chars = next(r for r in panel.result.rows if r.spec.key == "chars")
    assert {text[a:b] for a, b in chars.round_trip.lossy} == lost
    assert "lossy" in panel.compare.header_text(2)


def test_comparison_rows_counts_and_differences(make_panel, qtbot, timeline):
    text = "hello world, the cat sat there"
    panel, sm = make_panel(timeline, text=text)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        sm.set_step(3)
    panel.wait_idle()
    keys = [r.spec.key for r in panel.result.rows]
    assert keys == ["step", "final", "chars", "words"]
    tok = timeline.tokenizer()
    counts = [r.stats.tokens for r in panel.result.rows]
    assert counts[:2] == [len(tok.encode(text, step=3)), len(tok.encode(text))]
    assert counts[2] == len(text) and counts[3] == len(text.split())
    final = panel.result.rows[1]
    assert any(final.differs) and final.differs == differing_cuts(text, final.encoding.spans,
                                                                  panel.result.rows[0].encoding.spans)
    header = panel.compare.header_text(1)
    assert f"{counts[1]:,} tokens" in header
    assert f"{sum(final.differs)} of {len(final.differs)} shown tokens cut differently" in header
    assert panel.compare.views[1].token_count == counts[1]
    panel.add_tokenizer(WordTokenizer.from_texts(["hello world"]))
    panel.wait_idle()
    assert [r.spec.key for r in panel.result.rows][-1] == "loaded:0"


def test_exports_html_json_png_and_copy_ids(make_panel, tmp_path, timeline):
    text = "hello 東 world"
    panel, _ = make_panel(timeline, text=text)
    ids = panel.result.reference.encoding.ids
    panel.save_json(tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert data["ids"] == ids and data["text"] == text
    assert data["spans"] == [list(s) for s in panel.result.reference.encoding.spans]
    assert data["tokens"][1:4] == ["␣", "<E6>", "<9D>"] or "<E6>" in data["tokens"]
    assert [c["tokenizer"] for c in data["comparison"]][2:] == ["Character-level", "Word-level"]
    panel.save_html(tmp_path / "t.html")
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count('<span class="t') == len(ids)
    assert "&lt;E6&gt;" in page and "<script" not in page
    assert panel.save_png(tmp_path / "t.png") and (tmp_path / "t.png").stat().st_size > 1000
    assert panel.copy_ids() == "[" + ", ".join(map(str, ids)) + "]"
    assert QGuiApplication.clipboard().text() == panel.copy_ids()


def test_modes_palettes_and_batch(make_panel, qtbot, timeline):
    panel, _ = make_panel(timeline, text="hello\nhello world there\n")
    panel.set_mode("ids")
    assert panel.view.mode == "ids"
    panel.set_palette_key("high-contrast")
    assert panel.palette_key == "high-contrast" and panel.view.token_palette.border is not None
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        panel.bos_box.setChecked(True)
    panel.wait_idle()
    b = panel.result.batch
    tok = timeline.tokenizer()
    assert b.lines == ["hello", "hello world there"]
    assert b.batch.ids.shape == (2, 1 + max(len(tok.encode(s).ids) for s in b.lines))
    assert b.batch.ids[0, 0] == b.bos_id == tok.n_vocab
    assert b.batch.attention_mask[0].tolist().count(1) == 1 + len(tok.encode("hello").ids)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        panel.set_show_whitespace(True)
    panel.wait_idle()
    assert "↵" in panel.result.reference.labels.labels


def test_long_text_paints_a_first_screen_before_the_whole(make_panel, qtbot, timeline):
    panel, _ = make_panel(timeline, text="x")
    text = ("hello world, the cat sat on the mat.\n" * 3000)
    with qtbot.waitSignal(panel.engine.partial_ready, timeout=WAIT) as partial:
        panel.set_text(text)
    assert len(partial.args[0].request.text) == len(text)
    assert partial.args[0].reference.stats.chars < len(text)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        pass
    panel.wait_idle()
    assert panel.result.reference.stats.chars == len(text)
    assert panel.view.token_count == len(panel.result.reference.encoding.ids)


def test_post_processor_tokens_are_shown_as_inserted(make_panel, qtbot):
    from tests.conftest import shared_file
    from tokviz.core.loading import load_tokenizer

    bert = load_tokenizer(shared_file("vocab", "hf", "bert-base-uncased", "tokenizer.json"))
    panel, _ = make_panel(None, corpus="", text="Hello world")
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        panel.add_tokenizer(bert)
    panel.wait_idle()
    ref = panel.result.reference
    assert ref.encoding.ids == [101, 7592, 2088, 102]
    assert ref.labels.kinds[0] == ref.labels.kinds[3] == INSERTED  # [CLS], [SEP]: a badge in outline
    assert ref.labels.kinds[1] == TEXT
    assert "inserted at character 0: covers no text" in panel.tooltip_for(0)
    assert "inserted at character 11: covers no text" in panel.tooltip_for(3)
    assert "characters 0–5" in panel.tooltip_for(1)
    assert panel.export_json_data()["inserted"] == [0, 3]


def test_failure_is_reported(make_panel, qtbot):
    panel, _ = make_panel(None, corpus="", text="abc")

    class Broken:
        name = "broken"

        def encode(self, text):
            raise ValueError("no")

    with qtbot.waitSignal(panel.engine.failed, timeout=WAIT):
        panel.add_tokenizer(Broken())
    assert panel.status.text().startswith("Cannot tokenize")


def test_window_docks_panel_and_click_selects_vocabulary(window, qtbot, timeline):
    panel = window.script.panel("token_view")
    assert window.docks.dock("token_view").objectName() == "dock_token_view"
    window.script.select_panel("token_view")
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        panel.set_text("hello world")
        window.step_model.set_timeline(timeline)
    panel.wait_idle()
    enc = panel.result.reference.encoding
    i = next(k for k, t in enumerate(enc.ids) if t >= 256)
    with qtbot.waitSignal(panel.token_selected, timeout=WAIT) as sig:
        qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=panel.view.token_rect(i).center())
    assert sig.args == [enc.ids[i]]
    assert window.vocab_panel.selected_ids() == [enc.ids[i]]


def test_add_tokenizer_file_loads_in_the_background(make_panel, qtbot, tmp_path, timeline):
    from tokviz.core.model_files import save_timeline

    panel, _ = make_panel(timeline, text="hello world")
    path = tmp_path / "m.json"
    save_timeline(timeline, path)
    with qtbot.waitSignal(panel.loader.loaded, timeout=WAIT):
        assert panel.add_tokenizer_file(path)
    panel.wait_idle()
    loaded = panel.result.rows[-1]
    assert loaded.spec.key == "loaded:0"
    assert loaded.encoding.ids == panel.result.rows[1].encoding.ids  # same model as the final step
    assert not any(loaded.differs)
    with qtbot.waitSignal(panel.loader.failed, timeout=WAIT):
        panel.add_tokenizer_file(tmp_path / "missing.tiktoken")
    assert panel.status.text().startswith("Cannot load missing.tiktoken")


def test_newest_request_wins(make_panel, qtbot, timeline):
    panel, _ = make_panel(timeline, text="a")
    shown = []
    panel.engine.finished.connect(lambda r: shown.append(r.request.text))
    panel.set_text("hello " * 20_000)  # a long one, then at once a short one
    qtbot.waitUntil(lambda: panel.engine.is_running, timeout=WAIT)
    panel.set_text("the end")
    qtbot.waitUntil(lambda: "the end" in shown, timeout=WAIT)
    panel.wait_idle()
    assert shown == ["the end"] and panel.result.request.text == "the end"
    assert panel.engine.wait_idle(WAIT)


def test_token_colours_follow_the_theme(window, qtbot):
    panel = window.script.panel("token_view")
    window.script.set_theme("light")
    assert not panel.view.token_palette.dark
    window.script.set_theme("dark")
    qtbot.waitUntil(lambda: panel.view.token_palette.dark, timeout=WAIT)
    window.script.set_theme("light")
    qtbot.waitUntil(lambda: not panel.view.token_palette.dark, timeout=WAIT)


def test_baselines_of_a_big_corpus_are_counted_a_slice_at_a_time(make_panel, qtbot, timeline, monkeypatch):
    """The character and word baselines of a corpus (up to 5 MB) are counted slice by slice on the
    worker: one Counter over the whole prefix held the interpreter lock for 0.2-1.7 s and froze the
    window while a 30 MB corpus opened and trained."""
    import tokviz.core.baselines as baselines

    sizes = []
    real = baselines.whitespace_slices

    def recording(text, size=baselines.SLICE_CHARS):
        for piece in real(text, size):
            sizes.append(len(piece))
            yield piece

    monkeypatch.setattr(baselines, "whitespace_slices", recording)
    corpus = "the cat sat on the mat, the dog ate the hat.\n" * 20_000  # 900 KB
    panel, _ = make_panel(timeline, corpus=corpus, text="the cat")
    assert sum(sizes) == len(corpus) and len(sizes) > 10
    assert max(sizes) <= baselines.SLICE_CHARS + len("mat,")
    words = next(r for r in panel.result.rows if r.spec.key == "words")
    assert words.stats.tokens == 2 and words.encoding.unknown == []  # both words in its vocabulary


def test_scrubbing_a_long_text_runs_one_encoder_at_a_time(make_panel, qtbot, timeline, monkeypatch):
    """Steps changing faster than a long text encodes: a new encoding starts only once the one it
    replaces has stopped (threads piling up would fight the window for the interpreter)."""
    panel, sm = make_panel(timeline, text="hello world, the lowest newest " * 2_500)
    engine = panel.engine
    alive_at_launch = []  # threads alive as each encoder is made (it is launched at once)
    make_worker = token_view_engine.TokenViewWorker

    def counting_worker(*args, **kwargs):
        alive_at_launch.append(engine.thread_count)
        return make_worker(*args, **kwargs)

    monkeypatch.setattr(token_view_engine, "TokenViewWorker", counting_worker)
    for k in range(sm.n_steps - 1, 3, -max(1, sm.n_steps // 8)):
        launches = len(alive_at_launch)
        sm.set_step(k)
        qtbot.waitUntil(lambda: len(alive_at_launch) > launches, timeout=WAIT)
    sm.set_step(3)
    qtbot.waitUntil(lambda: not engine.is_pending, timeout=WAIT)
    assert len(alive_at_launch) >= 2 and max(alive_at_launch) == 0, alive_at_launch
    assert panel.result.request.rows[0].step == 3 or "step 3/" in panel.status.text()
