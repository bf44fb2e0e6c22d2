"""Memory that must not grow with the input: `tokviz compare` streams its corpus piece by piece
(with the figures of measuring it whole), and switching tokenizers in the window lets the old
ones go (the window's background jobs freeze the collector's objects, `gc.freeze`, so a loaded
tokenizer caught in a reference cycle was never freed: 7.5 MB a switch)."""

from __future__ import annotations

import base64
import gc
import json
import tracemalloc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import shared_file
from tests.core.formats.sentencepiece.spm_helpers import write_model
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.compare import (
    DocumentSplitter,
    FileSource,
    MetricsSum,
    ModelSpec,
    StringSource,
    compare,
    compute_metrics,
    iter_compare,
    prepare_documents,
    split_documents,
)
from tokviz.core.compare import source as piece_source
from tokviz.core.errors import CorpusError
from tokviz.core.explain.loaded_timeline import as_timeline
from tokviz.core.text.corpus import read_text

UDHR_LIKE = (
    "Déclaration universelle\n    Préambule\n    Considérant que la dignité\n  \n"
    "Universal Declaration of Human Rights\n      Preamble\n      Whereas recognition of the\n"
    "inalienable rights of all members\n   \n"
    "Всеобщая декларация\n    Преамбула\n   \n"
    "世界人权宣言\n\n序言\n\n鉴于对人类家庭所有成员的固有尊严\n  \n"
    "Ελληνικά 1948\n    Άρθρο 1\n"
)


def _byte_model():
    """A byte-level model whose whitespace chunks run across line breaks ("\\n    "): most seams
    between pieces fall inside a chunk, so pieces get joined."""
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"\n ": 257, b"  ": 258}
    return as_timeline(RankBpeTokenizer(ranks, pattern=r"\S+|\s+"))


def _streamed(text: str, spec: ModelSpec, piece_chars: int):
    docs, _ = prepare_documents(text)
    events = iter_compare(StringSource(text, piece_chars=piece_chars), [spec], by_document=True, documents=docs)
    return [e.result for e in events if e.result is not None][0]


# -- compare streams, with the figures of one encoding ----------------------------------------


@pytest.mark.parametrize("piece_chars", [1, 7, 40, 10_000])
def test_pieces_give_the_figures_of_the_whole_text(piece_chars):
    spec = ModelSpec("bytes", _byte_model)
    whole = compare(UDHR_LIKE * 3, [spec], by_document=True).results[0]
    assert _streamed(UDHR_LIKE * 3, spec, piece_chars) == whole


@pytest.mark.parametrize("parts", [
    ("vocab", "tiktoken", "cl100k_base.tiktoken"),
    ("vocab", "hf", "gpt2", "tokenizer.json"),
    ("vocab", "hf", "bert-base-uncased", "tokenizer.json"),
    ("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model"),
])
def test_real_tokenizers_streamed_match_one_encoding(parts, corpus_text):
    from tokviz.engine.compare_task import open_any_model

    tl = open_any_model(str(shared_file(*parts)))
    text = corpus_text("udhr2_all.txt")[:40_000]
    text = text[: text.rfind("\n") + 1]
    spec = ModelSpec(parts[-2], lambda: tl)
    whole = compare(text, [spec], by_document=True).results[0]
    streamed = _streamed(text, spec, 997)
    assert streamed.metrics.tokens > 5_000 and len(streamed.documents) > 3
    assert streamed == whole


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "B", " ", "\n", "\r", "\r\n", "\u2028", "é", "x y"]), max_size=40),
       st.integers(1, 9))
def test_documents_split_in_pieces_are_the_documents_of_the_whole(parts, piece_chars):
    text = "".join(parts)
    splitter = DocumentSplitter()
    docs = [d for p in StringSource(text, piece_chars=piece_chars).pieces() for d in splitter.feed(p)]
    assert docs + [splitter.finish()] == split_documents(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=60), st.lists(st.integers(1, 20), max_size=5))
def test_summed_metrics_equal_the_metrics_of_all_ids(ids, cuts):
    ids = np.array(ids, dtype=np.int64)
    kw = {"vocab_size": 50, "unk_ids": np.array([3], dtype=np.int64), "byte_ids": np.arange(10, 20)}
    total = MetricsSum(**kw)
    bounds = sorted({0, len(ids), *(min(c, len(ids)) for c in cuts)})
    for a, b in zip(bounds, bounds[1:]):
        total.add(ids[a:b], chars=b - a, n_bytes=2 * (b - a), words=1, continued=1)
    n = len(bounds) - 1
    assert total.metrics() == compute_metrics(ids, chars=len(ids), n_bytes=2 * len(ids), words=n, continued=n, **kw)


# -- reading a corpus in pieces ----------------------------------------------------------------


def test_a_file_read_in_pieces_is_the_text_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(piece_source, "PIECE_BYTES", 16)
    path = tmp_path / "c.txt"
    path.write_bytes(b"\xef\xbb\xbf" + ("ab\r\n" + "é" * 40 + "\n\n世界 x\u2028y\n" * 3 + "z" * 70).encode())
    pieces = list(FileSource(path).pieces())
    assert len(pieces) > 5 and all(p.endswith("\n") for p in pieces[:-1])
    assert "".join(pieces) == read_text(path) and FileSource(path).check() == len(read_text(path))
    assert prepare_documents(FileSource(path)) == prepare_documents(read_text(path))


@pytest.mark.parametrize("bad", [b"\x00", b"\xff", b"\xe4\xb8"])
def test_bad_bytes_deep_in_a_file_are_reported_as_when_read_whole(tmp_path, monkeypatch, bad):
    monkeypatch.setattr(piece_source, "PIECE_BYTES", 64)
    path = tmp_path / "c.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "line é\n".encode() * 100 + bad + b" tail\nmore\n")
    with pytest.raises(CorpusError) as whole:
        read_text(path)
    with pytest.raises(CorpusError) as pieces:
        FileSource(path).check()
    assert str(pieces.value) == str(whole.value)


# -- the CLI: peak memory does not follow the corpus -----------------------------------------


def _peak_bytes(run) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_compare_peak_memory_does_not_grow_with_the_corpus(cli, tmp_path, monkeypatch):
    """The corpus read whole (and its per-character tables) made the peak grow by tens of bytes a
    character; streamed, four times the text costs about the same memory."""
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"ba": 257}
    (tmp_path / "m.tiktoken").write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    body = "".join(f"    ab abc ba cab {i % 7} bab\n" for i in range(50))
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    for path, n in ((small, 40), (large, 160)):  # two documents, ~100 KB and ~400 KB
        path.write_text("Title A\n" + body * n + "  \nTitle B\n" + body * n, encoding="utf-8")
    monkeypatch.setattr(piece_source, "PIECE_BYTES", 8192)
    outs = {}

    def run(name):
        code, out, err = cli("compare", "m.tiktoken", "--pattern", r"\S+|\s+", "-f", name, "--json", "--by-document")
        assert code == 0, err
        outs[name] = json.loads(out)

    run("small.txt")  # loads what the first run loads
    peak_small = _peak_bytes(lambda: run("small.txt"))
    peak_large = _peak_bytes(lambda: run("large.txt"))
    growth = peak_large - peak_small
    assert growth < (large.stat().st_size - small.stat().st_size) // 4, (peak_small, peak_large)
    assert outs["large.txt"]["chars"] == len(large.read_text(encoding="utf-8"))
    monkeypatch.setattr(piece_source, "PIECE_BYTES", 1 << 24)  # one piece: the text measured whole
    streamed = outs["large.txt"]
    run("large.txt")
    assert outs["large.txt"] == streamed


def test_tokens_with_spans_are_measured_in_smaller_pieces(tmp_path, monkeypatch):
    """A tokenizer that is not byte-exact gives tokens with spans, Python objects: it is measured in
    pieces of at most `SPAN_PIECE_CHARS` (up to a line end), whatever the source's pieces, with the
    figures of the whole text; a byte-exact one keeps the source's pieces."""
    from tokviz.core.compare import seams
    from tokviz.core.compare.tokens import model_facts
    from tokviz.engine.compare_task import open_any_model

    wordpiece = open_any_model(_small_tokenizers(tmp_path)[2])  # lowercased, "##" pieces
    text = "abc cab\nBA ca\n" * 40
    spec = ModelSpec("wp", lambda: wordpiece)
    whole = compare(text, [spec], by_document=True).results[0]
    monkeypatch.setattr(seams, "SPAN_PIECE_CHARS", 30)
    pieces = list(seams.encoded_pieces(model_facts(wordpiece), StringSource(text)))  # the source: one piece
    assert len(pieces) > 10 and max(len(p.facts.text) for p in pieces) <= 30 + 8
    assert "".join(p.facts.text for p in pieces) == text
    assert compare(text, [spec], by_document=True).results[0] == whole
    assert len(list(seams.encoded_pieces(model_facts(_byte_model()), StringSource(text)))) == 1


# -- switching tokenizers in the window -------------------------------------------------------


def _small_tokenizers(folder) -> list[str]:
    """Four small tokenizers of four loaders: tiktoken, tokenizer.json (BPE with a normalizer,
    WordPiece) and a SentencePiece BPE model."""
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b" a": 257}
    (folder / "t.tiktoken").write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    chars = {c: i for i, c in enumerate("abc ")}
    bpe = {"version": "1.0", "added_tokens": [{"id": 6, "content": "<s>", "special": True, "single_word": False,
                                              "lstrip": False, "rstrip": False, "normalized": False}],
           "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
           "model": {"type": "BPE", "vocab": chars | {"ab": 4, "abc": 5}, "merges": ["a b", "ab c"]}}
    (folder / "bpe").mkdir()
    (folder / "bpe" / "tokenizer.json").write_text(json.dumps(bpe), encoding="utf-8")
    wp = {"version": "1.0", "normalizer": {"type": "BertNormalizer", "lowercase": True},
          "pre_tokenizer": {"type": "BertPreTokenizer"},
          "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                    "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "a": 1, "b": 2, "c": 3, "##b": 4, "##c": 5}}}
    (folder / "wp").mkdir()
    (folder / "wp" / "tokenizer.json").write_text(json.dumps(wp), encoding="utf-8")
    pieces = [("<unk>", 0, "unknown"), ("▁a", -1, "normal"), ("▁", -2, "normal"), ("a", -3, "normal"),
              ("b", -4, "normal"), ("c", -5, "normal"), ("ab", -6, "normal"), ("▁ab", -7, "unused")]
    write_model(folder / "sp.model", pieces, trainer={"model_type": 2, "unk_id": 0},
                normalizer={"name": "identity", "add_dummy_prefix": True, "escape_whitespaces": True})
    return [str(folder / "t.tiktoken"), str(folder / "bpe" / "tokenizer.json"), str(folder / "wp" / "tokenizer.json"),
            str(folder / "sp.model")]


def test_switching_tokenizers_lets_the_old_ones_go(window, qtbot, tmp_path):
    sources = _small_tokenizers(tmp_path)
    window.script.set_corpus_text("abc ab cab a b c abcab\n" * 400)
    loaded = []  # (source, weak timeline, weak tokenizer)
    for i in range(3 * len(sources)):
        if i == len(sources):  # after a first round (and what earlier tests left behind, freed meanwhile):
            gc.unfreeze()  # count only what the next rounds leave frozen
            gc.collect()
        source = sources[i % len(sources)]
        pattern = r"\S+|\s+" if source.endswith(".tiktoken") else None
        assert window.script.open_tokenizer(source, pattern=pattern)
        assert window.script.wait_for_tokenizer(60_000) == "opened", source
        timeline = window.step_model.timeline
        loaded.append((source, weakref.ref(timeline), weakref.ref(timeline.tokenizer())))
        window.token_view_panel.refresh(delay_ms=0)  # each one encodes the text
        assert window.token_view_panel.wait_idle(qtbot, 30_000)
        assert window.token_view_panel.result is not None
        del timeline
    gc.collect()  # frees what a cycle holds, unless the cycle was frozen
    alive = [source for source, tl, tok in loaded[:-2] if tl() is not None or tok() is not None]
    # the last one is shown, the one before may wait in a cache for the next switch, and a view that
    # has not tokenized again yet (the embeddings: not while hidden) may hold one more
    assert len(alive) <= 1, alive
    gc.unfreeze()  # the cycles frozen meanwhile: a handful, not some for every word encoded
    stuck = gc.collect()
    assert stuck < 1000
