"""Running the glitch finder over a whole vocabulary, in chunks, and saying what the corpus allows.

`GlitchScan` encodes the corpus once (`prepare`: token counts, the merge graph, the coverage),
then scores the tokens a chunk at a time (`chunks`), so a GUI worker can hand each chunk to the
table as it comes. `glitch_report` drains a scan into one `GlitchReport`, rows ranked by score.

`Coverage` says when the corpus is too small to call a token unused: by the Zipf estimate in
`evidence`, a corpus of N tokens is expected to hold the last merge of a V-token vocabulary about
``0.1 * N / V`` times, so below ``10 * V`` tokens "never seen" says little about any late token.

What this leaves out: the evidence (`evidence`), the weighing (`score`), threads and widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import Cancelled

from .evidence import ZIPF, MergeGraph, absorption, expected_counts, rarity, seen_counts
from .score import ABSORBED, REASONS, GlitchRow, is_run, score_parts

__all__ = ["MAX_CORPUS_CHARS", "REASONS", "Coverage", "GlitchReport", "GlitchScan", "find_glitches", "glitch_report"]

CHUNK = 2048  # tokens scored per chunk
MAX_CORPUS_CHARS = 2_000_000  # corpus characters a ranking reads, in the window and the CLI alike
PIECE_CHARS = 20_000  # corpus characters per encode call: a worker holds the GIL only briefly per call


@dataclass(frozen=True)
class Coverage:
    """How much of the vocabulary the corpus exercises."""

    corpus_chars: int
    corpus_tokens: int
    n_tokens: int  # ordinary tokens checked
    n_seen: int  # of them, how many occur in the corpus as tokens

    @property
    def needed_tokens(self) -> int:
        """Corpus tokens for the last merge to be expected once (see the module doc)."""
        return int(np.ceil(self.n_tokens / ZIPF))

    @property
    def too_small(self) -> bool:
        return self.corpus_tokens < self.needed_tokens

    def note(self) -> str:
        """One sentence for the user: what the corpus covers, and whether that is enough."""
        if not self.corpus_tokens:
            return ("No corpus text: the ranking rests on the round trip alone; open a corpus to tell "
                    "unused tokens from used ones.")
        share = self.n_seen / max(1, self.n_tokens)
        head = (f"The corpus holds {self.corpus_tokens:,} tokens; {self.n_seen:,} of the {self.n_tokens:,} "
                f"tokens ({share:.0%}) occur in it.")
        if not self.too_small:
            return head
        chars = self.needed_tokens * self.corpus_chars / max(1, self.corpus_tokens)
        return (f"{head} Too small to call a token unused: a corpus of about {self.needed_tokens:,} tokens "
                f"(~{_size(chars)} of such text) is needed before “never seen” means much for late merges.")


def _size(chars: float) -> str:
    return f"{chars / 1e6:.1f} M characters" if chars >= 1e6 else f"{chars / 1e3:.0f} k characters"


@dataclass(frozen=True)
class GlitchReport:
    rows: list[GlitchRow]  # every ordinary token, highest score first
    n_unreachable: int  # unreachable or undecodable
    n_unused: int
    n_tokens: int
    corpus_chars: int
    coverage: Coverage


class GlitchScan:
    """``prepare()`` then ``chunks()``; `should_stop` is checked between pieces and chunks
    (raising `Cancelled`), `progress(what, fraction)` reports the stage."""

    def __init__(self, tok, corpus: str | Sequence[str], *, should_stop: Callable[[], bool] = lambda: False,
                 progress: Callable[[str, float], None] = lambda what, f: None, piece_chars: int = PIECE_CHARS) -> None:
        self.tok = tok
        self.texts = [corpus] if isinstance(corpus, str) else list(corpus)
        self.should_stop, self.progress, self.piece_chars = should_stop, progress, piece_chars
        self.coverage: Coverage | None = None

    def _check(self) -> None:
        if self.should_stop():
            raise Cancelled()

    def prepare(self) -> Coverage:
        from tokviz.core.explain.tokens import ordinary_ids

        tok = self.tok
        n_vocab = tok.n_vocab
        self.ordinary = ordinary_ids(tok)
        pieces = [t[i:i + self.piece_chars] for t in self.texts for i in range(0, len(t), self.piece_chars)]
        counts = np.zeros(n_vocab, np.int64)
        for k, p in enumerate(pieces):
            self._check()
            self.progress("Encoding the corpus…", 0.25 * k / max(1, len(pieces)))
            ids = np.asarray(tok.encode_ids(p), np.int64)
            if ids.size:
                counts += np.bincount(ids, minlength=n_vocab)[:n_vocab]
        self._check()
        self.progress("Reading the merges…", 0.25)
        self.graph = MergeGraph.of(tok, n_vocab)
        self.counts = counts
        n_corpus = int(counts.sum())
        self.expected = expected_counts(self.graph, n_corpus)
        self.seen = seen_counts(self.graph, counts)
        self.pieces = self.graph.all_pieces() if self.graph.n_merges else [(i,) for i in range(n_vocab)]
        self.users = self._users(n_vocab)
        self.rarity = (rarity(self.expected, self.seen) / np.maximum(1, self.users)).tolist()  # summed per token
        self.absorbed = (ABSORBED * absorption(self.graph)).tolist()
        self.vocab = tok.vocab()
        self._unigram_reasons = self._unigram_unreachable()
        ordinary = np.asarray(self.ordinary, np.int64)
        self.coverage = Coverage(sum(map(len, self.texts)), n_corpus, len(ordinary),
                                 int(np.count_nonzero(counts[ordinary])) if ordinary.size else 0)
        return self.coverage

    def _users(self, n_vocab: int) -> np.ndarray:
        """How many tokens hold each id in their merge trees (itself included): a piece's rarity
        is shared among them, so a run like ``====`` that sits in every longer run of ``=`` does
        not count in full for each of them."""
        if not self.graph.n_merges:
            return np.ones(n_vocab, np.int64)
        every: list[int] = []
        for i in self.ordinary:  # one bincount at the end, not 50k small numpy calls
            every.extend(self.pieces[i])
        return np.bincount(np.asarray(every, np.int64), minlength=n_vocab)[:n_vocab]

    def _unigram_unreachable(self) -> dict[int, tuple[str, tuple[int, ...]]] | None:
        from tokviz.core.explain.unigram import is_unigram

        if not is_unigram(self.tok):
            return None
        from tokviz.core.explain.tokens import find_unreachable

        return {g.id: (g.reason, g.ids) for g in find_unreachable(self.tok, should_stop=self.should_stop)}

    def _reasons(self, ids: list[int]) -> dict[int, tuple[str, tuple[int, ...]]]:
        if self._unigram_reasons is not None:
            return {i: self._unigram_reasons[i] for i in ids if i in self._unigram_reasons}
        from tokviz.core.explain.tokens import find_unreachable

        return {g.id: (g.reason, g.ids) for g in find_unreachable(self.tok, ids=ids, should_stop=self.should_stop)}

    def chunks(self, size: int = CHUNK) -> Iterator[list[GlitchRow]]:
        """The rows of every ordinary token, `size` tokens at a time, in id order."""
        if self.coverage is None:
            self.prepare()
        total = len(self.ordinary)
        for start in range(0, total, size):
            self._check()
            self.progress("Scoring tokens…", 0.3 + 0.7 * start / max(1, total))
            ids = self.ordinary[start:start + size]
            reasons = self._reasons(ids)
            yield [self._row(i, *reasons.get(i, ("", ()))) for i in ids]
        self.progress("Done", 1.0)

    def _row(self, i: int, reason: str, ids: tuple[int, ...]) -> GlitchRow:
        g = self.graph
        pieces = self.pieces[i]
        rar = sum(self.rarity[j] for j in pieces)
        count = int(self.counts[i])
        if not reason and count == 0:
            reason = "unused"
        token = self.vocab[i] or b""
        absorbed = self.absorbed[i]
        score, reach, rar, fam = score_parts(reason, rar, count, is_run(token), absorbed=absorbed)
        rare = tuple(self.vocab[j] or b"" for j in pieces[1:] if self.seen[j] == 0)
        rank = int(g.rank[i]) + 1 if g.rank[i] >= 0 else None
        return GlitchRow(i, token, reason, round(score, 6), reach, round(rar, 6), round(fam, 6),
                         count, rank, float(self.expected[i]), len(pieces), rare, tuple(ids), round(absorbed, 6))


def find_glitches(tok, corpus: str | Sequence[str], **kwargs) -> Iterator[Coverage | list[GlitchRow]]:
    """The coverage first, then the rows a chunk at a time (see `GlitchScan`)."""
    size = kwargs.pop("chunk", CHUNK)
    scan = GlitchScan(tok, corpus, **kwargs)
    yield scan.prepare()
    yield from scan.chunks(size)


def rank_rows(rows: list[GlitchRow]) -> list[GlitchRow]:
    """Highest score first; ties by id. Sorted in numpy: a worker sorting 50k tuples in `sorted`
    would hold the GIL (and stall the GUI thread) for the whole sort."""
    scores = np.fromiter((r.score for r in rows), np.float64, len(rows))
    ids = np.fromiter((r.id for r in rows), np.int64, len(rows))
    return [rows[i] for i in np.lexsort((ids, -scores)).tolist()]


def glitch_report(tok, corpus: str | Sequence[str], **kwargs) -> GlitchReport:
    """Every ordinary token of `tok` scored against `corpus` (a text, or a list of texts), ranked."""
    rows: list[GlitchRow] = []
    coverage = None
    for item in find_glitches(tok, corpus, **kwargs):
        if isinstance(item, Coverage):
            coverage = item
        else:
            rows.extend(item)
    assert coverage is not None
    return report_of(rows, coverage)


def report_of(rows: list[GlitchRow], coverage: Coverage) -> GlitchReport:
    ranked = rank_rows(rows)
    return GlitchReport(ranked, sum(r.fails_round_trip for r in ranked), sum(r.count == 0 for r in ranked),
                        coverage.n_tokens, coverage.corpus_chars, coverage)
