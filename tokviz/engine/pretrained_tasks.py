"""Background jobs for pretrained tokenizers: loading one as a timeline, listing the tokenizers
on this machine (File > Known Tokenizers), indexing a vocabulary, querying the index (the glitch finder streams: `glitch_finder`). Plain functions for `TaskEngine` (called with
``should_stop`` and ``progress``); the engines that run them live with their owners (main
window, vocabulary panel).

What this leaves out: Qt objects and dialogs (asking for a split pattern is the window's job).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tokviz.core.explain.vocab_view import VocabIndex
from tokviz.core.formats.hf_cache import KnownListing, known_listing


def load_any_timeline(source: str, *, pattern: str | None = None, should_stop=lambda: False,
                      progress=lambda *a: None):
    """A tokviz model file as its own timeline; any other tokenizer (file, folder or known name)
    as a `LoadedTimeline`. Raises `PatternRequired` for a `.tiktoken` of an unknown encoding."""
    from tokviz.core.loading import open_timeline  # the readers: loaded when a tokenizer is opened

    from .token_view.tokenizer_loader import warm_up

    progress(f"Loading {Path(source).name}…", 0.0)
    timeline = open_timeline(source, pattern=pattern)
    if not timeline.has_counts:  # a loaded tokenizer (no training counts): its one-time tables built here, off the
        warm_up(timeline.tokenizer())  # GUI thread, not by the first encode the window asks for
        timeline.describe()  # and its summary's fingerprint (0.3 s for DeepSeek V3), kept for the summary panel
    return timeline


def list_known_tokenizers(*, should_stop=lambda: False, progress=lambda *a: None) -> KnownListing:
    """The tiktoken names and both caches' files: read from the disk, so never on the GUI thread
    (a slow or hostile cache must not stop the window from opening)."""
    return known_listing(should_stop=should_stop)


class TimelineVocab:
    """What `VocabIndex` reads (``vocab()``, ``special_tokens``), taken from any timeline
    (BPE, WordPiece, Unigram) on the GUI thread, so a growing timeline is not read later."""

    def __init__(self, timeline) -> None:
        self._tokens = list(timeline.token_bytes())
        self.special_tokens = dict(getattr(timeline, "special_ids", {}) or {})

    def vocab(self) -> list[bytes]:
        return self._tokens

    def is_special(self, token_id: int) -> bool:
        """Special tokens are the timeline's `special_ids` (what `VocabIndex` asks every source)."""
        return token_id in self.special_tokens.values()


def vocab_source(timeline):
    """The object to index: a loaded tokenizer itself (it knows its added tokens), else the
    timeline's token bytes."""
    return TimelineVocab(timeline) if timeline.has_counts else timeline.tokenizer()


@dataclass(frozen=True)
class IndexedVocab:
    key: tuple  # (timeline identity, vocabulary size): same key, same index
    index: VocabIndex


def index_vocab(key: tuple, tokenizer, *, should_stop=lambda: False, progress=lambda *a: None) -> IndexedVocab:
    """Build the search index of a tokenizer's vocabulary (~0.6 s for 200k tokens)."""
    progress("Indexing the vocabulary…", 0.0)
    return IndexedVocab(key, VocabIndex(tokenizer))


@dataclass(frozen=True)
class VocabQuery:
    search: str = ""
    regex: bool = False
    filters: tuple[str, ...] = ()
    sort: str = "id"
    descending: bool = False

    @property
    def is_plain(self) -> bool:
        """True when nothing narrows or reorders the table."""
        return not self.search and not self.filters and self.sort == "id" and not self.descending


def run_query(indexed: IndexedVocab, query: VocabQuery, *, should_stop=lambda: False,
              progress=lambda *a: None) -> tuple[VocabQuery, np.ndarray]:
    """Ids matching `query`, in its order. A bad regex raises `TokvizError`."""
    ids = indexed.index.query(query.search, use_regex=query.regex, filters=query.filters, sort=query.sort,
                              descending=query.descending)
    return query, ids
