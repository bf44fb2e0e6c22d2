"""`glitch_report`: one pass of the glitch-token finder over a tokenizer and a corpus.

Combines `find_unreachable` (tokens whose own text does not encode to them) and `find_unused`
(tokens that never occur when encoding the corpus) into rows ready for a table, with one
progress callback for both stages. What it leaves out: the algorithms (`explain`) and widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .explain import find_unreachable, ordinary_ids, token_counts

REASONS = {
    "split": "unreachable: the split pattern cuts its text",
    "merge": "unreachable: BPE ends in other tokens",
    "partial_utf8": "unreachable: its bytes are not text on their own",
    "normalized": "unreachable: the normalizer changes its text",
    "viterbi": "unreachable: the Unigram model's best path through its text is another segmentation",
    "unused": "unused: never occurs in the corpus",
}


@dataclass(frozen=True)
class GlitchRow:
    """One finding: `reason` is a key of `REASONS`; `ids` what the token's text encodes to."""

    id: int
    token: bytes
    reason: str
    ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class GlitchReport:
    rows: list[GlitchRow]
    n_unreachable: int
    n_unused: int
    n_tokens: int  # ordinary tokens checked
    corpus_chars: int


def glitch_report(
    tok,
    corpus: str | Sequence[str],
    *,
    should_stop: Callable[[], bool] = lambda: False,
    progress: Callable[[str, float], None] = lambda what, f: None,
    piece_chars: int = 100_000,
) -> GlitchReport:
    """Unreachable tokens, then tokens unused in `corpus` (a text, or a list of texts)."""
    ordinary = ordinary_ids(tok)
    found = find_unreachable(tok, ids=ordinary, should_stop=should_stop,
                             progress=lambda d, t: progress("Checking tokens…", 0.8 * d / max(1, t)))
    rows = [GlitchRow(g.id, g.token, g.reason, g.ids) for g in found]
    texts = [corpus] if isinstance(corpus, str) else list(corpus)
    pieces = [t[i:i + piece_chars] for t in texts for i in range(0, len(t), piece_chars)]
    n_chars = sum(map(len, texts))
    unused: list[int] = []
    if n_chars:
        done = [0]

        def each():
            for p in pieces:
                done[0] += 1
                progress("Encoding the corpus…", 0.8 + 0.2 * done[0] / len(pieces))
                yield p

        counts = token_counts(tok, each(), should_stop=should_stop)
        unused = [i for i in ordinary if counts[i] == 0]
        vocab = tok.vocab()
        rows.extend(GlitchRow(i, vocab[i] or b"", "unused") for i in unused)
    progress("Done", 1.0)
    return GlitchReport(rows, len(found), len(unused), len(ordinary), n_chars)
