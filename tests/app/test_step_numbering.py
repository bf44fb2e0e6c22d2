"""One numbering everywhere: step k is the model after k merges (Unigram: after pruning round k,
round 0 being the seed). The transport, the presenter caption, the corpus caption and the rounds
table name the same k for the last step; a lesson counts its own parts, not steps."""

from __future__ import annotations

from tests.app.test_algorithms_gui import CORPUS
from tokviz.app.classroom.presenter import step_caption
from tokviz.core import TrainSettings
from tokviz.core.unigram.timeline import UnigramSettings


def _train(window, settings):
    window.script.set_corpus_text(CORPUS, word_counts=False)
    assert window.script.start_training(settings)
    assert window.script.wait_for_training(60_000) == "finished"
    return window.script.timeline


def _labels(window) -> tuple[str, int, str, str]:
    panel = window.timeline_panel
    transport = panel.transport
    return transport.total_label.text(), transport.spin.maximum(), step_caption(
        window.script.timeline, window.step_model.step), panel.corpus_label.text()


def test_unigram_labels_and_rounds_table_name_the_same_last_round(window, qtbot):
    tl = _train(window, UnigramSettings(vocab_size=70, seed_min_count=1))
    last = tl.n_rounds - 1  # round 0 is the seed
    assert last >= 2
    window.step_model.set_step(10_000)  # the end
    panel = window.timeline_panel
    panel.refresh()
    total, spin_max, caption, corpus = _labels(window)
    assert window.step_model.step == window.step_model.n_steps == last
    assert total == f"of {last:,}" and spin_max == last
    assert caption.startswith(f"Round {last:,} of {last:,}")
    assert corpus.startswith(f"Round {last:,}:")
    rounds = panel.unigram.rounds.rounds
    assert rounds.item(rounds.rowCount() - 1, 0).text() == str(last)
    assert rounds.currentRow() == rounds.rowCount() - 1  # the table selects the round the labels name
    assert window.training_status.text.startswith(f"Trained {last:,} Unigram rounds in ")  # the status counts alike
    assert f"Unigram · {last:,} rounds after the seed" in window.training_panel.summary.text()


def test_bpe_step_k_is_after_k_merges(window, qtbot):
    tl = _train(window, TrainSettings(merges=12, split="gpt2"))
    window.step_model.set_step(5)
    window.timeline_panel.refresh()
    total, spin_max, caption, corpus = _labels(window)
    assert total == f"of {tl.n_merges:,}" and spin_max == tl.n_merges == 12
    assert caption == "Step 5 of 12" and corpus.startswith("Step 5:")
    assert "merge 5 made “" in corpus  # merge k leads to step k


def test_a_lesson_counts_parts_not_steps(window):
    panel = window.script.panel("lesson")
    panel.show_lesson("A lesson", 10)
    panel.show_step(2, 10, "the third part")
    assert panel.counter.text() == "Part 3 of 10"


def test_a_unigram_run_followed_to_its_end_stops_on_its_last_round(window, qtbot):
    """While a run is followed, the step tracks the newest record; for Unigram the newest round
    record is round n - 1 (round 0 is the seed), so the step must not run one past the last step."""
    tl = _train(window, UnigramSettings(vocab_size=70, seed_min_count=1))
    last = tl.n_rounds - 1
    assert window.step_model.follows_latest
    assert window.step_model.step == window.step_model.n_steps == last
    assert step_caption(window.script.timeline, window.step_model.step).startswith(f"Round {last:,} of {last:,}")
