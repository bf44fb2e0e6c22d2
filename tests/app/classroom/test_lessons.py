"""Guided lessons end to end: each of the 18 lessons starts, steps through every step with its
caption changing, and shows the expected panel and content; Back replays the right state; missing
pretrained files are named; Help > Lessons and the lesson panel's buttons drive the runner."""

from __future__ import annotations

import pytest

from tests.conftest import SHARED
from tokviz.core.lessons.files import PRETRAINED, builtin_lessons

LESSONS = builtin_lessons()
WAIT = 60_000
NEEDS_FILES = {lesson.name for lesson in LESSONS if lesson.tokenizers}


def _shown(window) -> None:
    assert window.script.wait_for_lesson_step(WAIT) == "shown", window.lessons.caption


def run_lesson(window, name: str) -> list[str]:
    """Start `name` and press Next to the end; returns the captions, checking each step's basics."""
    assert window.script.start_lesson(name)
    _shown(window)
    runner, panel = window.lessons, window.lesson_panel
    captions = [runner.caption]
    while True:
        i, n = runner.index, runner.lesson.n_steps
        assert panel.counter.text() == f"Part {i + 1} of {n}"
        assert panel.caption.text() == runner.caption == window.lessons.caption
        assert "…" not in runner.caption, runner.caption  # every {field} was filled in
        main = window.lessons.panel_ids[0]
        assert window.docks.dock(main).isVisible() and not window.docks.dock(main).visibleRegion().isEmpty()
        assert not window.docks.dock("lesson").visibleRegion().isEmpty()
        if i + 1 == n:
            assert not panel.next_button.isEnabled()
            return captions
        panel.next_button.click()
        _shown(window)
        assert runner.index == i + 1
        captions.append(runner.caption)


def _needs_files(name: str) -> None:
    if name in NEEDS_FILES and not (SHARED / "vocab" / "tiktoken").is_dir():
        from tokviz.core.lessons.files import pretrained_file

        missing = [PRETRAINED[t][0] for t in next(x for x in LESSONS if x.name == name).tokenizers
                   if pretrained_file(t) is None]
        if missing:
            pytest.skip(f"needs {', '.join(missing)} (../shared/vocab/tiktoken or tiktoken's cache)")


@pytest.mark.parametrize("name", [lesson.name for lesson in LESSONS])
def test_every_lesson_runs_end_to_end(window, dialogs, name):
    _needs_files(name)
    captions = run_lesson(window, name)
    assert len(set(captions)) == len(captions), "every step says something new"
    assert not dialogs.errors
    CHECKS[name](window)


def _reference(window):
    window.token_view_panel.wait_idle()
    return window.token_view_panel.result


def check_chars_words_subwords(window):
    assert window.lessons.figure.values == (22, 6, 9)
    assert len(_reference(window).reference.encoding.ids) == 9
    assert "9 tokens: the|␣cat|" in window.lessons.caption


def check_out_of_vocabulary(window):
    rows = {r.spec.key: r for r in _reference(window).rows}
    assert len(rows["words"].encoding.unknown) == 5 and rows["chars"].encoding.unknown
    assert rows["step"].round_trip.ok and not rows["words"].round_trip.ok
    assert window.token_view_panel.tabs.currentIndex() == 2  # diagnostics


def check_bpe_steps(window):
    assert window.script.timeline.settings.end_of_word == "_" and window.step_model.step == 3
    assert window.lessons.caption.startswith("Merge 3: the most frequent adjacent pair is ‘new’ + ‘e’ → ‘newe’ (count 6)")


def check_vocab_size(window):
    tl = window.script.timeline
    assert tl.vocab_size == 5000 and window.step_model.step == tl.n_merges
    fig = window.lessons.figure
    assert fig.kind == "curve" and fig.marker == len(fig.x) - 1 and fig.x[-1] == 5000
    assert window.lesson_panel.figure_stack.currentWidget() is window.lesson_panel.plot


def check_bytes_utf8(window):
    ref = _reference(window).reference
    assert ref.groups  # byte tokens grouped under their character
    assert window.lessons.fields["partial"] > 0 and window.token_view_panel.view.mode == "both"


def check_pre_tokenization(window):
    assert window.script.timeline.settings.split == "gpt2"
    assert "Now 0 merges cross a space" in window.lessons.caption


def check_special_tokens(window):
    result = _reference(window)
    batch = result.batch.batch
    assert batch.ids.shape[0] == 3
    assert batch.attention_mask[2, 0] == 0 and batch.attention_mask[0].all()  # padded on the left
    ref = result.reference.encoding
    assert len(ref.special) == 1 and window.token_view_panel.tabs.currentIndex() == 0
    rows = window.lessons.figure.rows  # the same batch, large, in the lesson panel
    assert rows[2][1].startswith("PAD") and rows[2][1].split()[-1] == "EOS" and rows[2][2].startswith("0")


def check_numbers(window):
    titles = [r.spec.title for r in _reference(window).rows]
    assert titles == [PRETRAINED[n][1] for n in ("gpt2", "cl100k_base", "o200k_base")]
    assert ("1234567", "123|45|67", "123|456|7", "123|456|7") in window.lessons.figure.rows


def check_languages(window):
    fig = window.lessons.figure
    assert fig.kind == "bars" and fig.labels[0] == "English" and len(fig.values) == 14
    assert window.token_view_panel.tabs.currentIndex() == 2


def check_glitch_tokens(window):
    runner = window.lessons
    assert "43453" in runner.fields["gpt2_ids_0"]
    gpt2 = _reference(window).rows[0]
    assert 43453 in gpt2.encoding.ids


def check_embeddings(window):
    emb = window.embedding_panel
    assert emb.table.source.startswith("trained") and emb.view is not None
    assert window.lessons.figure.rows and "Nearest to ‘␣the’" in window.lessons.caption + window.lessons.figure.title
    assert emb.token_box.currentData() == window.script.timeline.tokenizer().encode_ordinary(" the").ids[0]


def check_positional(window):
    p = window.positional_panel
    assert p.kind == "rope" and p.view == "similarity" and p._shown is not None and p._shown.request.kind == "rope"


def check_wordpiece(window):
    tl = window.script.timeline
    assert tl.has_scores and window.step_model.step == tl.n_merges
    enc = tl.tokenizer().encode("bugs mug hugs", step=window.step_model.step)
    assert [t.decode() for t in enc.tokens] == ["bu", "##gs", "[UNK]", "hugs"] and enc.unknown == [2]
    assert "‘mug’ → [UNK]" in window.lessons.caption
    fig = window.lessons.figure  # the candidates of the last merge, the winner starred
    assert fig.rows[0][0] == "★" and fig.title.startswith(f"Merge {tl.n_merges}: score")


def check_unigram(window):
    tl = window.script.timeline
    assert not tl.lists_merges and window.step_model.step == 4 and tl.last_step == 8
    fig = window.lessons.figure
    assert [r[0] for r in fig.rows] == ["0", "1", "2", "3", "4"]  # the rounds so far
    assert fig.rows[0][3] == "0" and int(fig.rows[1][3]) > 0  # the seed prunes nothing; round 1 does
    samples = window.lessons.fields["samples"].split(" · ")
    assert len(samples) == 4 and len(set(samples)) > 1  # sampling gives different segmentations
    assert all(s.replace(" ", "") == "▁sitting" for s in samples)


def check_superbpe(window):
    tl = window.script.timeline
    assert tl.algorithm == "superbpe" and window.step_model.step == tl.n_merges == 300
    assert tl.chart_marks() == [(240, "superwords from here")]
    assert window.lessons.figure.kind == "curve" and window.lessons.figure.marker == 300
    ref = _reference(window).reference  # the token view marks the superwords of the sentence
    assert any(ref.marked) and ref.marked == [i in tl.superword_ids() for i in ref.encoding.ids]
    assert "␣of␣the" in window.lessons.fields["pieces"].split("|")


def check_boundless(window):
    tl = window.script.timeline
    assert window.step_model.step == tl.n_merges == 300 and tl.kinds()[135] == "supermerge"
    assert "supermerge" not in tl.kinds()[:135]  # the lesson's merge 136 is the first supermerge
    mm = window.timeline_panel.merge_model
    assert mm.index(135, mm.kind_column).data() == "supermerge"
    assert window.lessons.fields["first_super"] == "‘␣of␣the’"
    assert len(window.lessons.figure.rows) == 8


def check_parity_aware(window):
    tl = window.script.timeline
    assert len(tl.documents) == 8 and tl.documents[0] == "English"
    f = window.lessons.fields
    assert float(f["gini_now"]) < float(f["bpe_gini"]) < float(f["gini_start"])  # fairer than plain BPE
    assert window.lessons.figure.kind == "bars" and window.lessons.figure.labels == tl.documents
    mm = window.timeline_panel.merge_model
    assert mm.headerData(mm.kind_column, __import__("PySide6.QtCore").QtCore.Qt.Orientation.Horizontal) == "Served"


def check_dropout(window):
    tv = window.token_view_panel
    assert tv.tabs.currentWidget() is tv.compare  # the last part leaves the samples for the comparison
    assert tv.samples.word() == " Rabbit" and tv.samples.dropout_spin.value() == 0.5  # set by the part before
    rows = window.lessons.figure.rows
    assert rows[0][0] == "␣Rabbit" and len(rows) > 3  # the usual cut is the most frequent draw
    assert int(window.lessons.fields["high_n_segmentations"]) > int(window.lessons.fields["n_segmentations"])


CHECKS = {"chars-words-subwords": check_chars_words_subwords, "out-of-vocabulary": check_out_of_vocabulary,
          "bpe-steps": check_bpe_steps, "vocab-size": check_vocab_size, "bytes-utf8": check_bytes_utf8,
          "pre-tokenization": check_pre_tokenization, "special-tokens": check_special_tokens,
          "numbers": check_numbers, "languages": check_languages, "glitch-tokens": check_glitch_tokens,
          "embeddings": check_embeddings, "positional": check_positional, "wordpiece": check_wordpiece,
          "unigram": check_unigram, "superbpe": check_superbpe, "boundless": check_boundless,
          "parity-aware": check_parity_aware, "dropout": check_dropout}


def test_checks_cover_every_lesson():
    assert set(CHECKS) == {lesson.name for lesson in LESSONS}


def test_bpe_caption_after_step_one_names_the_first_merge_and_back_replays(window):
    assert window.script.start_lesson("bpe-steps")
    _shown(window)
    window.script.lesson_next()
    _shown(window)
    assert window.lessons.caption.startswith("Merge 1: the most frequent adjacent pair is ‘e’ + ‘s’ → ‘es’ (count 12)")
    assert window.step_model.step == 1
    window.lessons.go(7)  # the new/newer/newest variant: a second training run
    _shown(window)
    assert "new ×3" in window.lessons.caption and "‘n’ + ‘e’ → ‘ne’ (count 9)" in window.lessons.caption
    window.script.lesson_prev()  # back to the low/lower/lowest corpus, at 9 merges
    _shown(window)
    assert window.step_model.step == 9 and window.script.timeline.steps[0].count == 12
    assert "low" in window.corpus_panel.text() and window.lessons.caption.startswith("After 9 merges")


def test_missing_pretrained_file_is_named_in_the_caption(window, monkeypatch):
    import tokviz.app.classroom.lesson_runner as runner_mod

    monkeypatch.setattr(runner_mod, "pretrained_file", lambda name: None)
    assert window.script.start_lesson("glitch-tokens")
    _shown(window)
    caption = window.lessons.caption
    assert "needs r50k_base.tiktoken" in caption and "TOKVIZ_VOCAB_DIR" in caption
    assert window.lessons.figure.rows[0][2] == "needs r50k_base.tiktoken"
    assert window.lessons.fields["gpt2_ids_0"] == "(needs r50k_base.tiktoken)"


def test_unknown_lesson_and_stop(window, dialogs):
    assert not window.script.start_lesson("no-such-lesson")
    assert dialogs.errors and "unknown lesson 'no-such-lesson'" in dialogs.errors[-1][1]
    assert window.script.wait_for_lesson_step(100) == "idle"
    assert window.script.start_lesson("12")
    _shown(window)
    assert window.lessons.panel_ids == ["positional", "lesson"]
    assert window.lessons.figure.rows[2][0] == "RoPE"
    window.lesson_panel.stop_button.click()
    assert window.lessons.panel_ids is None and window.lessons.lesson is None
    assert "Help ▸ Lessons" in window.lesson_panel.caption.text()


def test_help_menu_lists_the_lessons_and_starts_one(window):
    menu = window.menus["lessons"]
    actions = [a for a in menu.actions() if a.objectName().startswith("action_lesson_")]
    assert [a.text().replace("&", "") for a in actions][:3] == [
        "1. Characters, words or subwords?", "2. Out of vocabulary", "3. BPE step by step"]
    assert len(actions) == 18 and actions[13].text().replace("&", "") == "14. Unigram: prune, don't merge"
    assert actions[17].text().replace("&", "") == "18. BPE-dropout: many ways to cut a word"
    actions[11].trigger()
    _shown(window)
    assert window.lessons.lesson.name == "positional" and window.positional_panel.kind == "sinusoidal"


def test_a_failed_training_stops_the_step_with_a_message(window, dialogs, monkeypatch):
    monkeypatch.setattr(window.training, "start", lambda settings=None: False)
    assert window.script.start_lesson("1")
    assert window.script.wait_for_lesson_step(WAIT) == "failed"
    assert "could not be shown: training could not start" in window.lesson_panel.caption.text()


def test_presenter_mode_shows_the_lesson_and_clicker_keys_step_it(window, qtbot):
    from PySide6.QtCore import Qt

    assert window.script.start_lesson("chars-words-subwords")
    _shown(window)
    assert window.lessons.panel_ids == ["token_view", "lesson"]  # a figure: the lesson panel is shown too
    window.script.enter_presenter()
    try:
        assert window.script.presenter_active and window.lesson_panel.caption.isHidden()  # the caption bar has it
        qtbot.keyClick(window.token_view_panel.view, Qt.Key.Key_Right)
        _shown(window)
        assert window.lessons.index == 1 and window.lessons.caption.startswith("Characters: 22 tokens")
    finally:
        window.script.leave_presenter()
    assert not window.lesson_panel.caption.isHidden()


def test_next_pressed_while_training_starts_over_cleanly(window, qtbot):
    assert window.script.start_lesson("vocab-size")  # trains 4,923 merges on a 144 KB book
    qtbot.waitUntil(lambda: window.training_engine.is_running, timeout=WAIT)
    window.lessons.go(2)  # pressed again before the first run ended: the newest request wins
    _shown(window)
    assert window.lessons.index == 2 and window.script.timeline.vocab_size == 5000
    assert window.lessons.caption.startswith(f"Vocabulary 1000: {window.lessons.fields['tokens']} tokens")
