"""``tokviz encode MODEL TEXT --dropout P --seed S``: a BPE-dropout sample of the encoding
(`tokviz.core.bpe.dropout`), the same for the same text, P and seed. Any BPE that joins pairs: a
trained tokviz model, minbpe, tiktoken and GPT-2's files, a tokenizer.json BPE, a SentencePiece BPE
``.model`` (sampled by sentencepiece's rule: `tokviz.core.formats.sentencepiece.dropout`)."""

from __future__ import annotations

import argparse
import math

DROPOUT_HELP = ("BPE-dropout: skip each merge with probability P (0..1) for a sampled segmentation; "
                "special-token text is ordinary text (BPE models only)")
SEED_HELP = "the seed of --dropout's draws (default 0: the same sample on every run)"


def add_dropout_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument("--dropout", type=float, metavar="P", help=DROPOUT_HELP)
    e.add_argument("--seed", type=int, metavar="S", help=SEED_HELP)


def sampled_encoding(tok, text: str, args: argparse.Namespace, usage_error: type[Exception]):
    """The `Encoding` ``--dropout`` asks for, or `usage_error` (one line) when it cannot be made."""
    p = args.dropout
    if p is None:
        raise usage_error("tokviz encode: --seed goes with --dropout P")
    if not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise usage_error(f"tokviz encode: --dropout {p:g} is outside 0..1 (the probability of skipping a merge)")
    if not tok.drops_merges:
        raise usage_error(f"tokviz encode: --dropout needs a BPE model that joins pairs; {tok.name} does not")
    if args.offsets is not None:
        raise usage_error("tokviz encode: --offsets are the reference library's deterministic offsets; "
                          "leave them out with --dropout")
    return tok.encode_dropout(text, dropout=p, seed=0 if args.seed is None else args.seed, step=args.step)
