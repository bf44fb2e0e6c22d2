"""Documents of a multilingual corpus: splitting, dominant scripts, premiums, Gini, cancelling."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.compare import (
    ModelSpec,
    ScriptCounter,
    compare,
    find_reference,
    gini,
    iter_compare,
    premiums,
    split_documents,
)
from tokviz.core.errors import TokvizError
from tokviz.core.explain.loaded_timeline import as_timeline

# udhr2_all.txt's shape: an unindented title, indented body lines, blank lines indented too; a
# wrapped paragraph whose second line is not indented; a translation with no indentation at all
# whose paragraphs are separated by empty lines
UDHR_LIKE = (
    "Déclaration universelle des droits de l'homme\n"
    "    Préambule\n"
    "    Considérant que la reconnaissance de la dignité\n"
    "  \n"
    "Universal Declaration of Human Rights\n"
    "      Preamble\n"
    "      Whereas recognition of the inherent dignity and of the equal and\n"
    "inalienable rights of all members of the human family\n"
    "   \n"
    "Всеобщая декларация прав человека\n"
    "    Преамбула\n"
    "   \n"
    "世界人权宣言\n"
    "\n"
    "序言\n"
    "\n"
    "鉴于对人类家庭所有成员的固有尊严\n"
    "  \n"
    "Ελληνικά 1948\n"
    "    Άρθρο 1\n"
)
TITLES = ["Déclaration universelle des droits de l'homme", "Universal Declaration of Human Rights",
          "Всеобщая декларация прав человека", "世界人权宣言", "Ελληνικά 1948"]


def byte_model():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    return as_timeline(RankBpeTokenizer(ranks, pattern=r"\S+|\s+"))


def test_splits_at_unindented_titles_after_blank_lines():
    docs = split_documents(UDHR_LIKE)
    assert [d.title for d in docs] == TITLES
    assert [d.number for d in docs] == [1, 2, 3, 4, 5]
    assert "".join(UDHR_LIKE[d.start:d.end] for d in docs) == UDHR_LIKE
    assert UDHR_LIKE[docs[1].start:docs[1].end].endswith("human family\n   \n")  # wrapped line kept


def test_text_without_titles_is_one_document():
    assert [(d.title, d.start, d.end) for d in split_documents("    only body\n")] == [("only body", 0, 14)]
    assert [(d.number, d.start, d.end) for d in split_documents("")] == [(1, 0, 0)]


@settings(max_examples=80)
@given(st.text(st.sampled_from("ab \n\t"), max_size=60))
def test_documents_tile_the_text(text):
    docs = split_documents(text)
    assert docs[0].start == 0 and docs[-1].end == len(text)
    assert all(a.end == b.start for a, b in zip(docs, docs[1:]))
    assert all(text[d.start - 1] == "\n" and text[d.start:].split("\n", 1)[0].strip() for d in docs[1:])


def test_dominant_scripts():
    counter = ScriptCounter()
    got = [counter.dominant(UDHR_LIKE[d.start:d.end]) for d in split_documents(UDHR_LIKE)]
    assert got == ["Latin", "Latin", "Cyrillic", "Han", "Greek"]
    assert counter.dominant("") == counter.dominant("12, 34!") == "Common"


def test_gini_known_answers():
    """The standard definition: mean absolute difference over twice the mean."""
    assert gini([1, 1, 1]) == 0.0
    assert gini([0, 0, 1]) == pytest.approx(2 / 3)
    assert gini([1, 2, 3, 4]) == pytest.approx(0.25)  # sum |xi - xj| = 20, 2 * 16 * 2.5 = 80
    assert gini([5.0]) == 0.0
    assert gini([]) is None and gini([0, 0]) is None
    assert gini([2, 4, 6]) == pytest.approx(gini([1, 2, 3]))


def test_premiums_and_reference():
    docs = split_documents(UDHR_LIKE)
    assert find_reference(docs) == 1  # the English title
    assert find_reference(docs, "3") == find_reference(docs, 3) == find_reference(docs, "всеобщая") == 2
    assert premiums([4, 2, 0], 1) == [2.0, 1.0, 0.0]
    assert premiums([4, 0], 1) == [None, None]
    with pytest.raises(TokvizError, match="documents 1..5"):
        find_reference(docs, 9)
    with pytest.raises(TokvizError, match="no document is titled"):
        find_reference(docs, "Klingon")
    with pytest.raises(TokvizError, match="2 documents have titles starting with"):
        find_reference(split_documents("Ab\n x\n \nAc\n y\n"), "a")


def test_by_document_rows_add_up_to_the_whole_text():
    c = compare(UDHR_LIKE, [ModelSpec("bytes", byte_model)], by_document=True)
    r = c.results[0]
    assert [d.script for d in c.documents] == ["Latin", "Latin", "Cyrillic", "Han", "Greek"]
    assert len(r.documents) == len(r.premiums) == 5 and c.reference == 1
    for key in ("tokens", "chars", "bytes", "words"):
        assert sum(getattr(m, key) for m in r.documents) == getattr(r.metrics, key)
    ref = r.documents[1].tokens
    assert r.premiums == tuple(m.tokens / ref for m in r.documents)
    assert r.gini == pytest.approx(gini(r.premiums))
    alone = compare(UDHR_LIKE[c.documents[2].start:c.documents[2].end], [ModelSpec("b", byte_model)])
    assert alone.results[0].metrics == r.documents[2]


def test_iterating_can_stop_between_documents():
    opened = []

    def opener(name):
        def open_():
            opened.append(name)
            return byte_model()
        return open_

    events = iter_compare(UDHR_LIKE, [ModelSpec("a", opener("a")), ModelSpec("b", opener("b"))], by_document=True)
    first = [next(events), next(events)]
    events.close()
    assert [(e.model_index, e.done, e.total, e.result) for e in first] == [(0, 1, 5, None), (0, 2, 5, None)]
    assert opened == ["a"]


def test_every_model_reports_progress_and_one_result():
    events = list(iter_compare(UDHR_LIKE, [ModelSpec("a", byte_model), ModelSpec("b", byte_model)], by_document=True))
    assert [(e.model_index, e.done) for e in events] == [(m, d) for m in (0, 1) for d in range(1, 6)]
    assert [e.result.model for e in events if e.result is not None] == ["a", "b"]


def test_events_carry_each_document_once_as_it_is_measured():
    events = list(iter_compare(UDHR_LIKE, [ModelSpec("a", byte_model), ModelSpec("b", byte_model)], by_document=True))
    for k in (0, 1):
        mine = [e for e in events if e.model_index == k]
        assert all(len(e.rows) == e.done - before for e, before in zip(mine, [0] + [e.done for e in mine]))
        assert tuple(m for e in mine for m in e.rows) == mine[-1].result.documents
    assert all(e.rows == () for e in iter_compare(UDHR_LIKE, [ModelSpec("a", byte_model)]))  # no documents asked


def test_bad_reference_raises_before_any_model_runs():
    with pytest.raises(TokvizError):
        next(iter_compare(UDHR_LIKE, [ModelSpec("a", byte_model)], by_document=True, reference="Klingon"))


def test_the_shared_udhr_splits_into_its_translations(corpus_text):
    """One document per translation (the file's source counts about 380), those without a title
    line too: the Arabic translation is Arabic, not merged with the Latin-script one after it."""
    from tokviz.core.compare.run import prepare_documents

    text = corpus_text("udhr2_all.txt")
    docs = split_documents(text)
    assert len(docs) == 383
    english = docs[find_reference(docs)]
    assert english.title == "Universal Declaration of Human Rights"
    assert text[english.start:english.end].split("\n")[1].strip() == "Preamble"
    scripted, _ = prepare_documents(text)
    arabic = [d for d in scripted if d.title == "الإعلان العالمي لحقوق الإنسان"]
    assert [d.script for d in arabic] == ["Arabic"]
    assert "Pueya rerejoquiaari" not in text[arabic[0].start:arabic[0].end]


def test_a_translation_without_a_title_is_a_document_of_its_own():
    """After an indented blank line and an empty one, an indented line starts a document (one
    without a title line); an empty line after a line of text, or in a document with no indented
    line, does not."""
    text = "T\n  a1\n  \n\n  untitled body\n  more\n  \nU\n  KIO\n\n  still U\n"
    docs = split_documents(text)
    assert [d.title for d in docs] == ["T", "untitled body", "U"]
    assert "".join(text[d.start:d.end] for d in docs) == text
    plain = "W\nplain\n   \n\n  body\n"
    assert [(d.start, d.end) for d in split_documents(plain)] == [(0, len(plain))]
