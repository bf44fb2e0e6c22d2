"""Pre-token count files: TSV and Parquet round trips, the split they declare, shards adding up in
order, and bad files refused in one line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.errors import CorpusError
from tokviz.core.text.chunks import ChunkCounts, count_chunks, count_word_table
from tokviz.core.text.count_files import escape, read_counts, unescape, write_counts
from tokviz.core.text.split import parse_split

FORMATS = ["counts.tsv", "counts.parquet"]


@given(st.text())
def test_escaping_round_trips_any_text(text):
    assert unescape(escape(text)) == text and "\t" not in escape(text) and "\n" not in escape(text)


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=25, deadline=None)
@given(table=st.dictionaries(st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1),  # corpora hold no NUL
                            st.integers(1, 10**12), max_size=30))
def test_a_written_table_reads_back_in_order(tmp_path_factory, name, table):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    path = tmp_path_factory.mktemp("c") / name
    if not table:
        return
    write_counts(path, table, split="gpt2")
    back = read_counts([path])
    assert list(back.table.items()) == list(table.items()) and back.split == "gpt2"


@pytest.mark.parametrize("name", FORMATS)
def test_shards_add_up_in_order_as_counting_the_texts_does(tmp_path, name):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    split = parse_split("gpt4")
    a, b = "the cat\n\n sat on  the mat", "the dog\tsat\r\non 2024 mats"
    write_counts(tmp_path / f"a-{name}", count_chunks([a], split), split="gpt4")
    write_counts(tmp_path / f"b-{name}", count_chunks([b], split), split="gpt4")
    got = read_counts([tmp_path / f"a-{name}", tmp_path / f"b-{name}"])
    assert list(got.table.items()) == list(count_chunks([a, b], split).items())


def test_a_table_without_the_header_is_split_again_and_chunk_counts_are_not(tmp_path):
    path = tmp_path / "words.tsv"
    path.write_text("hello world\t3\nlow\t2\n", encoding="utf-8")  # as DuckDB or a script writes it
    counts = read_counts([path])
    assert counts.split is None and counts.table == {"hello world": 3, "low": 2}
    split = parse_split("whitespace")
    assert count_word_table(counts.table, split) == {"hello": 3, "world": 3, "low": 2}
    assert count_word_table(ChunkCounts(counts.table), split) == {"hello world": 3, "low": 2}


def test_mixed_splits_leave_the_split_open(tmp_path):
    write_counts(tmp_path / "a.tsv", {"a": 1}, split="gpt2")
    write_counts(tmp_path / "b.tsv", {"b": 1}, split="gpt4")
    assert read_counts([tmp_path / "a.tsv", tmp_path / "b.tsv"]).split is None


@pytest.mark.parametrize("content, words", [
    ("word\n", "line 1 is not 'text<TAB>count'"),
    ("word\tmany\n", "line 1 is not"),
    ("#tokviz-counts v9\tsplit=gpt2\na\t1\n", "v9 is not known"),
    ("", "no counts to train on"),
    ("a\t0\n", "no counts to train on"),
])
def test_bad_tsv_files_are_one_line(tmp_path, content, words):
    path = tmp_path / "bad.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CorpusError, match=words) as info:
        read_counts([path])
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("rows", [
    ["hello\t99999999999999999999999999"],  # beyond 64 bits
    ["hello\t9223372036854775807", "world\t9223372036854775807"],  # each fits; their sums do not
    ["a\t600000000000000000", "b\t600000000000000000"],  # 1.2e18 characters in all
])
def test_counts_a_training_cannot_add_up_in_64_bits_are_refused(tmp_path, rows):
    """Counts are weights the trainers add up in 64-bit arrays: a table whose characters times
    counts pass `MAX_WEIGHTED_CHARS` is refused in one line rather than wrapping around."""
    path = tmp_path / "big.tsv"
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(CorpusError, match="more than the .* characters training counts") as info:
        read_counts([path])
    assert "\n" not in str(info.value)


def test_large_counts_within_the_bound_are_read(tmp_path):
    """Counts of a corpus far beyond any real one (10**15 uses of a word, in two shards) read and
    add up exactly; the bound is only where 64-bit sums could wrap."""
    (tmp_path / "a.tsv").write_text("word\t1000000000000000\nother\t7\n", encoding="utf-8")
    (tmp_path / "b.tsv").write_text("word\t1000000000000000\n", encoding="utf-8")
    assert read_counts([tmp_path / "a.tsv", tmp_path / "b.tsv"]).table == {"word": 2 * 10**15, "other": 7}


def test_shards_that_pass_the_bound_together_are_refused(tmp_path):
    (tmp_path / "a.tsv").write_text("word\t200000000000000000\n", encoding="utf-8")
    (tmp_path / "b.tsv").write_text("word\t200000000000000000\n", encoding="utf-8")
    assert read_counts([tmp_path / "a.tsv"]).table == {"word": 2 * 10**17}
    with pytest.raises(CorpusError, match="characters training counts"):
        read_counts([tmp_path / "a.tsv", tmp_path / "b.tsv"])


def test_a_parquet_file_without_the_columns_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"word": ["a"], "n": [1]}), tmp_path / "x.parquet")
    with pytest.raises(CorpusError, match="'text' and 'count' columns"):
        read_counts([tmp_path / "x.parquet"])
    pq.write_table(pa.table({"text": ["a"], "count": [1.5]}), tmp_path / "y.parquet")
    with pytest.raises(CorpusError, match="whole numbers"):
        read_counts([tmp_path / "y.parquet"])
    (tmp_path / "z.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(CorpusError, match="not a count file"):
        read_counts([tmp_path / "z.parquet"])


def test_a_parquet_file_declaring_more_than_a_count_file_may_hold_is_refused(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from tokviz.core.text import count_files

    write_counts(tmp_path / "c.parquet", {"word": 3, "other": 2}, split="gpt2")
    assert read_counts([tmp_path / "c.parquet"]).table == {"word": 3, "other": 2}
    monkeypatch.setattr(count_files, "MAX_TEXT_BYTES", 10)  # what a huge file's metadata says, checked before reading
    with pytest.raises(CorpusError, match="more than the 10 a count file may hold"):
        read_counts([tmp_path / "c.parquet"])
