"""A WordLevel tokenizer (trained at test time by Hugging Face's `WordLevelTrainer`) in the token
view: its ``[UNK]`` words are drawn as unknown, and the Diagnostics tab lists them and gives the
out-of-vocabulary rate on the corpus, equal to the share of unknown ids `tokenizers` gives."""

from __future__ import annotations

import pytest

from tokviz.core.display.tokens import UNKNOWN

tk = pytest.importorskip("tokenizers")

TRAIN = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "on a mat"]
CORPUS = "The cat sat on the sofa.\nThe zebra and the dog sat on the mat!\nA quokka, a cat, a zebra."
TEXT = "The zebra sat on the mat with a quokka"


@pytest.fixture
def word_level_file(tmp_path):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.train_from_iterator(TRAIN, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[CLS]", "[SEP]"],
                                                             show_progress=False))
    tok.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return tok, path


def test_unknown_words_are_marked_and_the_corpus_rate_is_shown(window, qtbot, dialogs, word_level_file):
    ref, path = word_level_file
    unk = ref.token_to_id("[UNK]")
    window.corpus_panel.set_text(CORPUS)
    dialogs.open_answer = str(path)
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    tv = window.token_view_panel
    tv.set_text(TEXT)
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    expected = ref.encode(TEXT)
    assert tv.result.rows[0].encoding.ids == expected.ids
    assert tv.view.token_count == len(expected.ids)
    drawn_unknown = [i for i in range(tv.view.token_count) if tv.view.token_kind(i) == UNKNOWN]
    assert drawn_unknown == [i for i, t in enumerate(expected.ids) if t == unk]
    unknown_words = {TEXT[a:b] for t, (a, b) in zip(expected.ids, expected.offsets) if t == unk}
    assert unknown_words == {"zebra", "with", "quokka"}  # the test is about something

    report = tv.diagnostics.toPlainText()
    ids = ref.encode(CORPUS, add_special_tokens=False).ids
    rate = ids.count(unk) / len(ids)
    assert 0 < rate < 1
    assert f"Out-of-vocabulary rate on the corpus: {100 * rate:.2f}%" in report
    assert f"({ids.count(unk):,} of {len(ids):,} tokens unknown" in report
    n_text = sum(1 for t in expected.ids if t == unk)
    n_words = len(ref.encode(TEXT, add_special_tokens=False).ids)
    assert f"In this text {n_text} of {n_words} tokens" in report
    for w in unknown_words:
        assert w in report.split("are unknown:")[1]


def test_a_new_corpus_gives_a_new_rate(window, qtbot, dialogs, word_level_file):
    ref, path = word_level_file
    window.corpus_panel.set_text(CORPUS)
    dialogs.open_answer = str(path)
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    tv = window.token_view_panel
    tv.set_text(TEXT)
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    assert "Out-of-vocabulary rate on the corpus: " in tv.diagnostics.toPlainText()
    window.corpus_panel.set_text("the cat sat on the mat")  # every word known
    assert tv.wait_idle(qtbot)
    assert "Out-of-vocabulary rate on the corpus: 0.00% (0 of 6 tokens unknown" in tv.diagnostics.toPlainText()
