"""What the embedding tests share: a small corpus tokenized by a small BPE model, and an
`EmbeddingPanel` showing it (used by test_embedding_panel.py and test_embedding_live.py)."""

from __future__ import annotations

from tokviz.core import TrainSettings, train
from tokviz.engine.heatmaps.embedding_engine import TokenizedCorpus, tokenize_corpus
from tokviz.panels.heatmaps.embedding_panel import EmbeddingPanel

TEXT = "the cat sat on the mat.\n\nthe rat sat on the hat.\n\na dog ran to the log.\n\n" * 20
TIMEOUT = 20_000


def small_timeline():
    return train(TrainSettings(vocab_size=290), texts=[TEXT])


def small_corpus(timeline=None) -> TokenizedCorpus:
    """`TEXT` tokenized with all merges of `timeline` (default `small_timeline()`)."""
    timeline = timeline if timeline is not None else small_timeline()
    return tokenize_corpus(timeline, timeline.n_merges, TEXT, "the cat sat on the mat")


def shown_panel(qtbot, corpus: TokenizedCorpus):
    """Fixture body: a shown panel with `corpus` and its first heatmap; shut down afterwards."""
    p = EmbeddingPanel()
    qtbot.addWidget(p)
    p.resize(1000, 700)
    p.show()
    with qtbot.waitSignal(p.heatmap_shown, timeout=TIMEOUT):
        p.set_corpus(corpus)
    yield p
    p.shutdown()
    assert p.training_engine.thread_count == 0
