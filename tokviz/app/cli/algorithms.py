"""``tokviz train --algorithm bpe|wordpiece|unigram`` and ``tokviz merges`` for every algorithm.

`add_algorithm_options` adds the algorithm choice and the options only one algorithm has;
`train_settings` turns parsed arguments into `TrainSettings`, `WordPieceSettings` or
`UnigramSettings`, refusing (with a one-line `UsageError`) options the chosen algorithm does not
have; `write_steps` prints the merges of a BPE or WordPiece model, or the rounds of a Unigram one.

What this leaves out: the rest of the command line (``tokviz.app.cli.main``).
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from tokviz.core import TrainSettings
from tokviz.core.algorithm.registry import ALGORITHMS
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings

# option dest -> (flag, algorithms that have it)
ONLY = {
    "units": ("--units", ("bpe",)),
    "end_of_word": ("--end-of-word", ("bpe",)),
    "tie_break": ("--tie-break", ("bpe",)),
    "merges": ("--merges", ("bpe", "wordpiece")),
    "max_word_chars": ("--max-word-chars", ("wordpiece",)),
    "seed_size": ("--seed-size", ("unigram",)),
    "prune_fraction": ("--prune-fraction", ("unigram",)),
    "em_iterations": ("--em-iterations", ("unigram",)),
}


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1 (e.g. 0.25), got {value}")
    return value


def add_algorithm_options(t: argparse.ArgumentParser, positive) -> None:
    """The ``train`` options of WordPiece and Unigram (every default None: "not given")."""
    t.add_argument("--algorithm", choices=ALGORITHMS, default="bpe",
                   help="bpe (default), wordpiece (BERT) or unigram (SentencePiece)")
    t.add_argument("--max-word-chars", type=positive, metavar="N", help="wordpiece: longer words become [UNK]")
    t.add_argument("--seed-size", type=positive, metavar="N", help="unigram: seed vocabulary size")
    t.add_argument("--prune-fraction", type=_fraction, metavar="F", help="unigram: pieces pruned per round")
    t.add_argument("--em-iterations", type=positive, metavar="N", help="unigram: EM iterations per round")


def train_settings(args: argparse.Namespace, usage_error: type[Exception]):
    """The settings object of ``args.algorithm``; `usage_error` for options it does not have."""
    algo = args.algorithm
    for dest, (flag, algos) in ONLY.items():
        if getattr(args, dest, None) is not None and algo not in algos:
            have = " and ".join(algos)
            raise usage_error(f"tokviz train: {flag} applies to {have} only, not --algorithm {algo}")
    return SETTINGS_FROM_ARGS[algo](args, tuple(args.special)).validate()


def _bpe_settings(args: argparse.Namespace, specials: tuple[str, ...]) -> TrainSettings:
    return TrainSettings(
        units=args.units or "bytes", split=args.split or "gpt4", end_of_word=args.end_of_word,
        vocab_size=args.vocab_size, merges=args.merges,
        min_count=2 if args.min_count is None else args.min_count,
        special_tokens=specials, word_counts=args.word_counts,
        tie_break=getattr(args, "tie_break", None) or "first",
    )


def _wordpiece_settings(args: argparse.Namespace, specials: tuple[str, ...]) -> WordPieceSettings:
    d = WordPieceSettings()
    return WordPieceSettings(
        vocab_size=args.vocab_size, merges=args.merges, split=args.split or "whitespace",
        min_count=d.min_count if args.min_count is None else args.min_count, special_tokens=specials,
        max_word_chars=d.max_word_chars if args.max_word_chars is None else args.max_word_chars,
    )


def _unigram_settings(args: argparse.Namespace, specials: tuple[str, ...]) -> UnigramSettings:
    d = UnigramSettings()
    return UnigramSettings(
        vocab_size=d.vocab_size if args.vocab_size is None else args.vocab_size, split=args.split or "whitespace",
        seed_size=args.seed_size or None,
        seed_min_count=d.seed_min_count if args.min_count is None else args.min_count,
        prune_fraction=d.prune_fraction if args.prune_fraction is None else args.prune_fraction,
        em_iterations=d.em_iterations if args.em_iterations is None else args.em_iterations,
        special_tokens=specials,
    )


# --algorithm NAME -> its settings from the parsed options (the names are the registry's)
SETTINGS_FROM_ARGS = {"bpe": _bpe_settings, "wordpiece": _wordpiece_settings, "unigram": _unigram_settings}


def write_steps(timeline, out: TextIO, *, as_json: bool, format_token) -> None:
    """``tokviz merges``: one line per merge (BPE, WordPiece: with its score) or per Unigram round."""
    if not timeline.lists_merges:  # Unigram: rounds that prune pieces
        for r in timeline.rounds:
            if as_json:
                out.write(json.dumps({
                    "round": r.index, "vocab_size": r.vocab_size, "log_likelihood": r.log_likelihood,
                    "viterbi_tokens": r.viterbi_tokens,
                    "pruned": [{"piece": p.piece, "loss": p.loss, "freq": p.freq, "alternative": list(p.alternative)}
                               for p in r.pruned],
                }, ensure_ascii=False) + "\n")
            else:
                shown = " ".join(format_token(p.piece.encode()) for p in r.pruned[:8])
                more = f" (+{len(r.pruned) - 8} more)" if len(r.pruned) > 8 else ""
                out.write(f"{r.index}\t{r.vocab_size}\t{r.log_likelihood:.1f}\t{len(r.pruned)}\t{shown}{more}\n")
        return
    vocab = timeline.token_bytes()
    wordpiece = timeline.has_scores
    for s in timeline.steps:
        a, b = s.pair
        if as_json:
            d = {"rank": s.rank, "pair": [a, b], "id": s.id, "pair_hex": [vocab[a].hex(), vocab[b].hex()],
                 "token_hex": s.token.hex(), "count": s.count}
            if wordpiece:
                d.update(score=s.score, left_count=s.left_count, right_count=s.right_count)
            out.write(json.dumps(d) + "\n")
        else:
            extra = f"\t{s.score:.6g}" if wordpiece else ""
            out.write(f"{s.rank}\t{s.id}\t{format_token(vocab[a])}\t{format_token(vocab[b])}\t{s.count}{extra}\n")
