"""WordPiece and Unigram in the app: training controls, engine (thread and process), timeline,
token view comparison rows, vocabulary table, saved models, cancel."""

from __future__ import annotations

import pytest

from tokviz.core import TrainSettings
from tokviz.core.model_files import load_model
from tokviz.core.unigram.timeline import UnigramSettings, train_unigram
from tokviz.core.wordpiece.timeline import WordPieceSettings, train_wordpiece
from tokviz.engine.tables.vocab_model import COL_COUNT, COL_RANK, VocabModel
from tokviz.engine.training import engine as training_mod
from tokviz.engine.training.engine import CorpusInput, TrainingEngine

HF = "hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5  # the Hugging Face course corpus
WORDS = ("un believ able unbelievable unable believable believe able table tables stable unstable "
         "undo redo doable readable reliable relief believer unbeliever ")
CORPUS = HF + WORDS * 6


def _pick(panel, algorithm: str) -> None:
    """Choose an algorithm as the user does (activated fires the split switch)."""
    box = panel.algorithm_box
    box.setCurrentIndex(box.findData(algorithm))
    box.activated.emit(box.currentIndex())


def _train(window, qtbot, settings=None) -> object:
    assert window.script.start_training(settings)
    assert window.script.wait_for_training(60_000) == "finished"
    return window.script.timeline


@pytest.fixture
def corpus_window(window):
    window.script.set_corpus_text(CORPUS, word_counts=False)
    return window


# -- training panel -------------------------------------------------------------------------


def test_panel_shows_only_the_options_of_the_chosen_algorithm(window):
    p = window.training_panel
    form = p.form_box.layout()  # the options form
    assert form.isRowVisible(p.units_box) and not form.isRowVisible(p.algo.control("max_word_chars"))
    _pick(p, "wordpiece")
    assert p.split_box.currentData() == "whitespace"  # a GPT split keeps spaces in every word
    assert not form.isRowVisible(p.units_box) and form.isRowVisible(p.algo.control("max_word_chars"))
    assert not form.isRowVisible(p.algo.control("seed_size"))
    tie_break = getattr(p, "tie_break_box", None)  # BPE's tie-break rule does not apply
    assert tie_break is None or not form.isRowVisible(tie_break)
    p.algo.control("max_word_chars").setValue(42)
    p.budget_spin.setValue(300)
    s = p.settings()
    assert isinstance(s, WordPieceSettings) and (s.max_word_chars, s.vocab_size, s.split) == (42, 300, "whitespace")
    _pick(p, "unigram")
    assert form.isRowVisible(p.algo.control("prune_fraction")) and not form.isRowVisible(p.algo.control("max_word_chars"))
    assert not p.budget_box.isEnabled() and p.budget_box.currentData() == "vocab_size"
    assert "seed" in form.labelForField(p.min_count_spin).text().lower()
    p.algo.control("prune_fraction").setValue(0.4)
    p.algo.control("em_iterations").setValue(3)
    p.algo.control("seed_size").setValue(5000)
    s = p.settings()
    assert isinstance(s, UnigramSettings) and (s.prune_fraction, s.em_iterations, s.seed_size) == (0.4, 3, 5000)
    p.specials_edit.setText("[UNK]")  # impossible: explained under the form, Train disabled
    assert not p.is_valid and "[UNK] is always id 0" in p.validation_message
    p.specials_edit.setText("")
    _pick(p, "bpe")
    assert form.isRowVisible(p.units_box) and p.budget_box.isEnabled()
    assert isinstance(p.settings(), TrainSettings)


def test_algorithm_settings_persist(make_window, settings_store):
    w = make_window()
    w.training_panel.set_settings(UnigramSettings(vocab_size=777, prune_fraction=0.3, em_iterations=4))
    w.close()
    saved = settings_store.train_settings()
    assert isinstance(saved, UnigramSettings) and saved.vocab_size == 777
    w2 = make_window()
    p = w2.training_panel
    assert p.algorithm_box.currentData() == "unigram"
    assert (p.budget_spin.value(), p.algo.control("prune_fraction").value(), p.algo.control("em_iterations").value()) == (777, 0.3, 4)


# -- engine ---------------------------------------------------------------------------------


@pytest.mark.parametrize("process", [False, True])
@pytest.mark.parametrize("settings, train_fn", [
    (WordPieceSettings(vocab_size=120), train_wordpiece),
    (UnigramSettings(vocab_size=80, seed_min_count=1), train_unigram),
])
def test_engine_trains_every_algorithm_in_a_thread_or_a_process(qtbot, monkeypatch, settings, train_fn, process):
    if process:
        monkeypatch.setattr(training_mod, "PROCESS_MIN_CHARS", 10)
    engine = TrainingEngine()
    batches, progress = [], []
    engine.steps_ready.connect(batches.append)
    engine.progress_changed.connect(progress.append)
    with qtbot.waitSignal(engine.finished, timeout=60_000) as blocker:
        engine.start(settings, CorpusInput(CORPUS))
    tl = blocker.args[0]
    expected = train_fn(settings, texts=[CORPUS])
    assert type(tl) is type(expected) and tl.finished
    assert tl.token_bytes() == expected.token_bytes()
    assert sum(len(b) for b in batches) == tl.n_steps == expected.n_steps
    unit = "rounds" if settings.algorithm == "unigram" else "merges"
    assert progress[-1].unit == unit and progress[-1].done == tl.n_steps and progress[-1].fraction == 1.0
    assert engine.shutdown()


@pytest.mark.parametrize("settings", [WordPieceSettings(min_count=1), UnigramSettings(vocab_size=3000)])
def test_cancel_mid_run_is_immediate(qtbot, long_text, settings):
    engine = TrainingEngine()
    with qtbot.waitSignal(engine.steps_ready, timeout=60_000):
        engine.start(settings, CorpusInput(long_text[:200_000]))
    assert engine.is_running
    reported = []
    engine.cancelled.connect(lambda: reported.append(True))
    assert engine.cancel()
    assert reported == [True]  # before cancel() returned (latency figures: tests/bench/bench_cancel.py)
    assert engine.shutdown()


def test_window_cancel_reports_rounds(window, qtbot, long_text):
    window.script.set_corpus_text(long_text[:200_000])
    assert window.script.start_training(UnigramSettings(vocab_size=3000))
    qtbot.waitUntil(lambda: window.step_model.n_steps > 0, timeout=60_000)
    window.script.cancel_training()
    assert window.script.wait_for_training(10_000) == "cancelled"
    n = window.step_model.n_steps
    assert window.training_status.text == f"Training cancelled after {n:,} {'round' if n == 1 else 'rounds'}"


# -- WordPiece on the timeline --------------------------------------------------------------


def test_wordpiece_run_replays_with_scores(window, qtbot):
    window.script.set_corpus_text(HF)
    _pick(window.training_panel, "wordpiece")
    window.training_panel.budget_box.setCurrentIndex(window.training_panel.budget_box.findData("merges"))
    window.training_panel.budget_spin.setValue(5)
    tl = _train(window, qtbot)
    assert tl.algorithm == "wordpiece" and tl.n_merges == 5
    assert "WordPiece merges" in window.training_panel.summary.text()
    panel = window.timeline_panel
    window.step_model.set_step(1)
    panel.refresh()
    t = panel.candidates
    headers = [t.horizontalHeaderItem(c).text() for c in range(t.columnCount())]
    assert headers[2:6] == ["Score", "count(ab)", "count(a)", "count(b)"]
    rows = [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]
    assert rows[0][0] == "★ winner" and rows[0][1] == "##g + ##s"  # 5 / (20 · 5) = 0.05
    assert rows[0][2:6] == ["0.05", "5", "20", "5"]
    frequent = next(r for r in rows if r[1] == "##u + ##g")  # 20 / (36 · 20): more frequent, lower score
    assert frequent[3] == "20" and float(frequent[2]) < 0.05 and "though 20 > 5" in frequent[6]
    assert "beat one seen" in panel.cand_label.text()
    mm = panel.merge_model
    assert mm.columnCount() == 8 and mm.headerData(7, __import__("PySide6.QtCore").QtCore.Qt.Orientation.Horizontal) == "Score"
    assert mm.data(mm.index(0, 7)) == "0.05" and mm.data(mm.index(0, 3)) == "##gs"
    # scrub: the corpus view at step k and the greedy trace
    window.step_model.set_step(5)
    panel.refresh()
    assert panel.corpus_label.text().startswith("Step 5:")
    lines = panel.trace("hugs")
    enc = tl.tokenizer().encode("hugs", step=5)
    assert lines[-1] == " ".join(tl.token_forms()[i] for i in enc.ids)
    assert panel.provenance.trace_table.horizontalHeaderItem(1).text() == "Match"
    panel.show_token(tl.steps[0].id, jump=True)
    assert window.step_model.step == 1
    assert "##gs" in panel.provenance.tree_label.text()
    # vocabulary: [UNK] first, ## forms, merge ranks
    vm = window.vocab_model
    assert vm.data(vm.index(0, 1)) == "[UNK]"
    row = vm.row_of_id(tl.steps[0].id)
    assert vm.data(vm.index(row, 1)) == "##gs" and vm.data(vm.index(row, COL_RANK)) == "1"  # merge k = step k


# -- Unigram on the timeline ----------------------------------------------------------------


def test_unigram_rounds_pruned_and_segmentations(corpus_window, qtbot):
    window = corpus_window
    settings = UnigramSettings(vocab_size=70, seed_min_count=1)
    tl = _train(window, qtbot, settings)
    assert tl.algorithm == "unigram" and tl.n_rounds >= 3
    assert window.training_status.text.startswith(f"Trained {tl.n_rounds - 1} Unigram rounds in ")  # after round 0
    assert f"{tl.seed_size:,} seed pieces → {tl.rounds[-1].n_pieces:,}" in window.training_panel.summary.text()
    panel = window.timeline_panel
    assert panel.unigram.left_stack.currentWidget() is panel.unigram.rounds
    assert panel.tabs.isTabVisible(panel.tabs.indexOf(panel.unigram.segmentations))
    assert not panel.tabs.isTabVisible(panel.tabs.indexOf(panel.provenance))
    rounds = panel.unigram.rounds.rounds
    assert rounds.rowCount() == tl.n_rounds
    assert [int(rounds.item(r, 1).text().replace(",", "")) for r in range(tl.n_rounds)] == \
        [r.vocab_size for r in tl.rounds]
    # selecting round 1 scrubs the step and lists what it pruned
    rounds.setCurrentCell(1, 0)
    assert window.step_model.step == 1
    panel.refresh()
    pruned = panel.unigram.rounds.pruned
    assert pruned.rowCount() == len(tl.rounds[1].pruned) > 0
    first = tl.rounds[1].pruned[0]
    assert pruned.item(0, 0).text() == first.piece
    assert pruned.item(0, 3).text() == (" ".join(first.alternative) or pruned.item(0, 3).text())
    assert panel.corpus_label.text().startswith("Round 1:")
    x, y = panel.unigram.chart.curves[0].getData()
    assert list(y) == [r.vocab_size for r in tl.rounds]
    # segmentations of a word: best first, probabilities of distinct segmentations
    window.step_model.set_step(tl.n_rounds)  # clamps to the last round
    panel.refresh()
    lines = panel.trace("unbelievable")
    seg = panel.unigram.segmentations
    probs = [s.prob for s in seg.nbest]
    assert len(lines) == len(probs) >= 2 and probs == sorted(probs, reverse=True)
    assert 0 < sum(probs) <= 1 + 1e-9 and len(set(lines)) == len(lines)
    assert lines[0] == " ".join(tl.tokenizer().nbest("unbelievable", 1)[0].pieces)
    assert all("".join(line.split()) == "▁unbelievable" for line in lines)
    assert float(seg.table.item(0, 0).text()) == pytest.approx(probs[0], abs=1e-3)
    assert seg.table.item(0, 2).text() == lines[0]
    sampled = seg.sample()
    assert len(sampled) == 8 and all("".join(s.split()) == "▁unbelievable" for s in sampled)
    assert "Sampled with alpha" in seg.samples.text()
    # vocabulary: log-prob column, pruned pieces carry their round
    vm = window.vocab_model
    from PySide6.QtCore import Qt
    assert vm.headerData(COL_COUNT, Qt.Orientation.Horizontal) == "Log-prob"
    row = vm.row_of_id(tl.n_special + tl.pieces().index(first.piece))
    assert vm.data(vm.index(row, COL_RANK)) == "1"
    kept = vm.row_of_id(tl.n_special)
    assert vm.data(vm.index(kept, COL_RANK)) == "" and float(vm.data(vm.index(kept, COL_COUNT))) < 0


def test_vocab_model_tester_on_pieces(qtmodeltester):
    for tl in (train_wordpiece(WordPieceSettings(merges=5), texts=[HF]),
               train_unigram(UnigramSettings(vocab_size=30, seed_min_count=1), texts=[HF])):
        vm = VocabModel()
        vm.set_timeline(tl)
        assert vm.rowCount() == tl.vocab_size if tl.algorithm == "wordpiece" else len(tl.token_forms())
        qtmodeltester.check(vm, force_py=True)


# -- token view: three algorithms side by side ----------------------------------------------


def test_token_view_compares_bpe_wordpiece_unigram(corpus_window, qtbot):
    window = corpus_window
    view = window.token_view_panel
    assert not view.models_button.isEnabled()  # nothing trained yet
    _train(window, qtbot, TrainSettings(units="chars", split="gpt2", merges=40))
    _train(window, qtbot, WordPieceSettings(vocab_size=120))
    _train(window, qtbot, UnigramSettings(vocab_size=90, seed_min_count=1))
    names = [m.name for m in window.trained_models.models]
    assert [n.split()[0] for n in names] == ["BPE", "WordPiece", "Unigram"]
    view.models_button.update_menu()
    actions = view.models_button.menu().actions()
    assert [a.text() for a in actions] == names[::-1]
    for a in actions[1:]:  # the BPE and WordPiece runs (the Unigram one is the current model)
        a.trigger()
    view.set_text("unbelievably tabled")
    assert view.wait_idle(qtbot, 20_000)
    rows = view.result.rows
    titles = [r.spec.title for r in rows]
    assert titles[0].startswith("Unigram · round") and titles[1].startswith("Unigram · final")
    assert names[0] in titles and names[1] in titles
    by_title = {r.spec.title: r for r in rows}
    wp, bpe, uni = by_title[names[1]], by_title[names[0]], rows[1]
    assert any(lab.startswith("##") for lab in wp.labels.labels)
    assert uni.labels.labels[0].startswith("▁")
    assert "log-probability" in view.tooltip_for(0)  # a Unigram piece shows its probability
    for r in (wp, bpe, uni):  # spans cover the text in order
        assert r.encoding.spans[0][0] == 0 and r.encoding.spans[-1][1] == len("unbelievably tabled")


# -- model files ----------------------------------------------------------------------------


@pytest.mark.parametrize("settings", [
    TrainSettings(units="chars", split="whitespace", merges=20),
    WordPieceSettings(merges=20),
    UnigramSettings(vocab_size=60, seed_min_count=1),
])
def test_save_and_open_model_round_trip(corpus_window, qtbot, tmp_path, settings):
    window = corpus_window
    tl = _train(window, qtbot, settings)
    path = tmp_path / "model.json"
    assert window.script.save_model(path)
    assert load_model(path).token_bytes() == tl.token_bytes()
    window.step_model.set_timeline(None)
    assert window.script.open_path(path)
    assert window.script.wait_for_file(30_000) == "opened"
    back = window.script.timeline
    assert back.algorithm == tl.algorithm and back.token_bytes() == tl.token_bytes()
    assert window.training_panel.algorithm_box.currentData() == tl.algorithm
    assert window.trained_models.models[-1].name == "model.json"
    assert not window.dialogs.errors


def test_choosing_unigram_starts_loading_its_kernels(window, monkeypatch):
    """The first Unigram training of a window session does not wait for numba: choosing an
    algorithm asks for its warm-up at once (the thread of its own and the once-per-process rule are
    tested in tests/engine/training/test_warm_up.py). Recorded synchronously, where the window
    calls it: a window an earlier test left may still warm up from a timer, and a real thread
    would race with whatever else this process runs."""
    from tokviz.app import training_ops

    asked: list[str] = []
    monkeypatch.setattr(training_ops, "warm_up_in_background", asked.append)
    _pick(window.training_panel, "wordpiece")
    _pick(window.training_panel, "unigram")
    assert asked == ["wordpiece", "unigram"]
