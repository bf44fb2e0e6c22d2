"""``tokviz merges``: a model's merges (BPE, WordPiece, a loaded tokenizer) or rounds (Unigram).

The text form is for reading: a header line, then one tab-separated line per merge or round, with
tokens shown as the window shows them (`tokviz.core.display.tokens.visible_token`: ``␣`` for a
space, ``<E2>`` for part of a character), so a space token is seen, not guessed. ``--json`` is the
machine-readable form: one object per line, token bytes in hex.

What this leaves out: reading the model (`tokviz.app.cli.main`); imports no trainer.
"""

from __future__ import annotations

import json
from typing import TextIO

from tokviz.core.display.tokens import visible_token

MERGE_COLUMNS = ("rank", "id", "left", "right", "count")
ROUND_COLUMNS = ("round", "vocab_size", "log_likelihood", "pruned", "first pruned")
SHOWN_PRUNED = 8  # pieces named on a round's line


def write_merges(timeline, out: TextIO, *, as_json: bool) -> None:
    """One line per merge (WordPiece: with its score; a loaded tokenizer: no counts) or per Unigram
    round, after a header line unless `as_json`."""
    if not timeline.lists_merges:  # Unigram: rounds that prune pieces
        _write_rounds(timeline, out, as_json=as_json)
        return
    vocab = timeline.token_bytes()
    scores = timeline.has_scores  # WordPiece
    counts = timeline.has_counts  # a loaded tokenizer's merges come in rank order, counts unknown
    kinds = timeline.step_kinds  # BoundlessBPE: a step is a merge or a supermerge
    if not as_json:
        out.write("\t".join(MERGE_COLUMNS + (("score",) if scores else ()) + (("kind",) if kinds else ())) + "\n")
    for s in timeline.steps:
        a, b = s.pair if s.pair is not None else (None, None)  # a loaded token no single merge forms
        if as_json:
            d = {"rank": s.rank, "pair": None if a is None else [a, b], "id": s.id,
                 "pair_hex": None if a is None else [vocab[a].hex(), vocab[b].hex()],
                 "token_hex": s.token.hex(), "count": s.count if counts else None}
            if scores:
                d.update(score=s.score, left_count=s.left_count, right_count=s.right_count)
            if kinds:
                d.update(kind=s.kind)
            out.write(json.dumps(d) + "\n")
            continue
        left, right = ("-", "-") if a is None else (visible_token(vocab[a]), visible_token(vocab[b]))
        count = s.count if counts else "count unknown"
        extra = (f"\t{s.score:.6g}" if scores else "") + (f"\t{s.kind}" if kinds else "")
        out.write(f"{s.rank}\t{s.id}\t{left}\t{right}\t{count}{extra}\n")


def _write_rounds(timeline, out: TextIO, *, as_json: bool) -> None:
    if not as_json:
        out.write("\t".join(ROUND_COLUMNS) + "\n")
    for r in timeline.rounds:
        if as_json:
            out.write(json.dumps({
                "round": r.index, "vocab_size": r.vocab_size, "log_likelihood": r.log_likelihood,
                "viterbi_tokens": r.viterbi_tokens,
                "pruned": [{"piece": p.piece, "loss": p.loss, "freq": p.freq, "alternative": list(p.alternative)}
                           for p in r.pruned],
            }, ensure_ascii=False) + "\n")
            continue
        shown = " ".join(visible_token(p.piece.encode()) for p in r.pruned[:SHOWN_PRUNED])
        more = f" (+{len(r.pruned) - SHOWN_PRUNED} more)" if len(r.pruned) > SHOWN_PRUNED else ""
        out.write(f"{r.index}\t{r.vocab_size}\t{r.log_likelihood:.1f}\t{len(r.pruned)}\t{shown}{more}\n")
