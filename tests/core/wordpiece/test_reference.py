"""The readable WordPiece reference (tokviz/core/wordpiece/reference.py) against tokviz's real
trainer and tokenizer: the same merges, and the same pieces for every word at every step.

(The trainer's candidate lists, counts and lengths are checked against the same reference in
test_wordpiece_training.py.)"""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import count_chunks, parse_split
from tokviz.core.wordpiece import reference
from tokviz.core.wordpiece.timeline import WordPieceSettings, WordPieceTrainer, train_wordpiece

HYPOTHESIS = settings(max_examples=100, deadline=None, database=None)
COURSE = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def real_merges(counts: dict[str, int], merges: int | None, min_count: int = 1) -> list[tuple[str, str, str]]:
    trainer = WordPieceTrainer(list(counts), list(counts.values()), min_count=min_count)
    steps = list(trainer.steps(max_merges=merges))
    return [(trainer.forms[s.pair[0]], trainer.forms[s.pair[1]], s.text) for s in steps]


def reference_merges(counts: dict[str, int], merges: int | None, min_count: int = 1) -> list[tuple[str, str, str]]:
    return [(*s.pair, s.token) for s in reference.train(counts, max_merges=merges, min_count=min_count)]


def test_course_corpus_known_answer():
    """The Hugging Face course's corpus: ``##g ##s`` (5 / (20 * 5)) beats the frequent ``##u ##g``;
    then ``hu`` (15 / (15 * 36)) and ``hu ##gs`` (5 / (15 * 5))."""
    steps = reference.train(COURSE, max_merges=3)
    assert [s.token for s in steps] == ["##gs", "hu", "hugs"]
    assert [str(s.score) for s in steps] == ["1/20", "1/36", "1/15"]
    assert reference_merges(COURSE, None) == real_merges(COURSE, None)


@pytest.mark.parametrize(("name", "chars", "split"), [
    ("tinyshakespeare.txt", 3000, "whitespace"),
    ("udhr2_all.txt", 2000, "gpt2"),
])
def test_same_merges_as_the_trainer_on_real_text(corpus_text, name, chars, split):
    counts = count_chunks([corpus_text(name, chars)], parse_split(split))
    assert reference_merges(counts, 120) == real_merges(counts, 120)


@HYPOTHESIS
@given(words=st.lists(st.text(alphabet="abc", min_size=1, max_size=6), min_size=1, max_size=10),
       min_count=st.integers(1, 3))
def test_same_merges_as_the_trainer_random(words, min_count):
    counts: dict[str, int] = {}
    for n, w in enumerate(words):
        counts[w] = counts.get(w, 0) + 1 + n % 3
    assert reference_merges(counts, None, min_count) == real_merges(counts, None, min_count)


@HYPOTHESIS
@given(corpus=st.lists(st.text(alphabet="abcd", min_size=1, max_size=6), min_size=1, max_size=8),
       words=st.lists(st.text(alphabet="abcde", min_size=1, max_size=9), min_size=1, max_size=6),
       step=st.integers(0, 30), max_word_chars=st.integers(6, 9))
def test_same_pieces_as_the_tokenizer_at_every_step(corpus, words, step, max_word_chars):
    """Greedy longest match with the vocabulary of step k, unknown characters (``e``) and words
    longer than the limit: the reference's pieces are the tokenizer's, id for id."""
    tl = train_wordpiece(WordPieceSettings(max_word_chars=max_word_chars), texts=[" ".join(corpus)])
    tok = tl.tokenizer()
    forms = tok.vocab(step=step)[tok.n_special:]
    vocab = {f.decode(): i for i, f in reversed(list(enumerate(forms, tok.n_special)))}  # lowest id wins
    for word in words:
        expected = reference.encode_word(word, vocab, max_word_chars=max_word_chars)
        ids = tok.encode(word, step=step).ids
        assert [tok.unk_id if p == reference.UNK else vocab[p] for p in expected] == ids, word


def test_docstring_examples():
    result = doctest.testmod(reference)
    assert result.attempted > 0 and result.failed == 0
