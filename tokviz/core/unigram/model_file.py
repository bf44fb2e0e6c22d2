"""A Unigram timeline as JSON: the ``tokviz-unigram`` format (the file handling is `tokviz.core.io`).

Format ``{"format": "tokviz-unigram", "version": 1, "settings": {...}, "pieces": [...],
"rounds": {"columns": [...], "pruned_columns": [...], "rows": [...]}, ...}``. Pieces are listed
once, in id order; each round stores the scores of its vocabulary (an id prefix) and its pruned
pieces by id. Loading checks every field and number and raises `ModelFormatError` saying what is
wrong.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from itertools import chain

import numpy as np

from tokviz.core import jit
from tokviz.core.algorithm.piece_tokenizer import check_header, need
from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.checks import MAX_COUNT, all_counts, all_numbers, ints_within, is_count
from tokviz.core.io.json_stream import RawJSON, compact_json, json_pieces

from .rounds import PieceTable, RoundColumns, UnigramRound, id_order, score_array_in_id_order
from .settings import FORMAT_NAME, UnigramSettings
from .timeline import JSON_KERNELS, UnigramTimeline
from .trainer import string_ranks

FORMAT_VERSION = 1
ROUND_COLUMNS = ["index", "log_likelihood", "em_log_likelihood", "viterbi_tokens", "pruned", "scores"]
PRUNED_COLUMNS = ["id", "loss", "freq", "score", "alternative"]


def to_json(timeline: UnigramTimeline) -> dict:
    """The JSON-ready dict: ``{"format": "tokviz-unigram", "version": 1, "pieces": [...],
    "rounds": {"columns": [...], "rows": [...]}, ...}``. Pieces are listed once, in id order;
    each round stores the scores of its vocabulary (an id prefix) and its pruned pieces by id."""
    pieces = timeline.pieces()
    rows = []
    for r, scores, columns in zip(timeline.rounds, timeline.scores_by_round(), _pruned_by_round(timeline, pieces)):
        pruned = list(map(list, zip(*columns)))  # column by column, then row by row
        rows.append([r.index, r.log_likelihood, list(r.em_log_likelihood), r.viterbi_tokens, pruned, scores])
    return _document(timeline, pieces, rows)


def json_text(timeline: UnigramTimeline) -> Iterator[bytes]:
    """The model file's bytes in pieces: ``json_stream.json_pieces(to_json(timeline))`` byte for
    byte. Where the rounds are arrays and `json_kernels` are loaded (the training's warm-up loads
    them), each round's pruned pieces and scores are written by them from the arrays: a tenth of a
    second less for a tinyshakespeare model, which holds 370,000 numbers. A save never imports
    numba nor waits for a first compilation."""
    kernels = jit.kernels(JSON_KERNELS) if "numba" in sys.modules else None
    id_of = timeline.id_of_index()
    if (kernels is None or not kernels.loaded() or id_of is None
            or not all(map(_consistent, timeline.rounds))):
        yield from json_pieces(to_json(timeline))
        return
    ids = id_of + timeline.n_special
    rows = [RawJSON(_row_text(kernels, r, id_of, ids)) for r in timeline.rounds]
    yield from json_pieces(_document(timeline, timeline.pieces(), rows))


def _consistent(r: UnigramRound) -> bool:
    """Whether round `r`'s pruned columns agree in length and its alternatives' offsets run from 0
    to their end without falling: what `json_kernels` indexes by, without bounds checks."""
    c = r.columns
    n, offsets = len(c.pruned), c.alt_offsets
    return (len(c.loss) == len(c.freq) == len(c.pruned_scores) == n and len(offsets) == n + 1
            and offsets[0] == 0 and offsets[-1] == len(c.alt_pieces) and bool(np.all(offsets[1:] >= offsets[:-1])))


def _ints(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)  # the one argument type the kernels are compiled for


def _row_text(kernels, r: UnigramRound, id_of: np.ndarray, ids: np.ndarray) -> bytes:
    """Round `r`'s row as JSON text (`to_json`'s), its long lists written by `kernels`; `id_of` as
    `UnigramTimeline.id_of_index` gives it, `ids` the same counting [UNK] and the specials."""
    c = r.columns
    zero = (c.loss == 0) & ~np.signbit(c.loss)  # written "0.0" by the kernel; the rest by the json module
    loss = np.frombuffer(compact_json(c.loss[~zero].tolist())[1:-1].encode("ascii"), dtype=np.uint8)
    pruned = kernels.pruned_rows(_ints(ids[c.pruned]), zero, loss, _ints(c.freq), _ints(c.pruned_scores),
                                 _ints(c.alt_offsets), _ints(ids[c.alt_pieces]))
    head = compact_json([r.index, r.log_likelihood, list(r.em_log_likelihood), r.viterbi_tokens])[:-1]
    return b"".join((head.encode("ascii"), b",", pruned.tobytes(), b",",
                     kernels.int_list(score_array_in_id_order(r, id_of)).tobytes(), b"]"))


def _document(timeline: UnigramTimeline, pieces: list[str], rows: list) -> dict:
    """The model file's dict around its pieces and its rounds' rows."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "algorithm": "unigram",
        "settings": timeline.settings.to_json(),
        "pieces": pieces,
        "corpus_length": timeline.corpus_length,
        "n_chunks": timeline.n_chunks,
        "seed_size": timeline.seed_size,
        "finished": timeline.finished,
        "rounds": {"columns": ROUND_COLUMNS, "pruned_columns": PRUNED_COLUMNS, "rows": rows},
    }


def _pruned_by_round(timeline: UnigramTimeline, pieces: list[str]) -> Iterator[tuple[list, ...]]:
    """Every round's pruned pieces as columns: ids, losses, freqs, scores, alternatives (id lists);
    `pieces`: ``timeline.pieces()``."""
    n_special, rounds = timeline.n_special, timeline.rounds
    id_of = timeline.id_of_index()
    if id_of is not None:  # from the rounds' arrays
        id_of = id_of + n_special
        for c in (r.columns for r in rounds):
            yield (id_of[c.pruned].tolist(), c.loss.tolist(), c.freq.tolist(), c.pruned_scores.tolist(),
                   c.alternatives(id_of))
        return
    id_of = dict(zip(pieces, range(n_special, n_special + len(pieces)))).__getitem__
    for r in rounds:
        piece, loss, freq, score, alternative = zip(*r.pruned) if r.pruned else ((),) * 5
        yield list(map(id_of, piece)), loss, freq, score, [list(map(id_of, a)) for a in alternative]


def _is_int(x: object) -> bool:
    return is_count(x)  # counts, ids, lengths


def _is_num(x: object) -> bool:
    return (_is_int(x) or isinstance(x, float)) and math.isfinite(x)


def _scores_ok(xs: list) -> bool:
    """Piece scores: whole log-probabilities times `SCORE_SCALE` (negative), within 64 bits."""
    return ints_within(xs, -MAX_COUNT, MAX_COUNT)


def _pruned_from_json(rows: list, n_pieces: int, n_special: int, k: int) -> dict[str, np.ndarray]:
    """The `RoundColumns` fields of round `k`'s pruned pieces from their rows (ids count
    ``n_special`` placeholders first), checked column by column."""
    need(all(type(p) is list and len(p) == len(PRUNED_COLUMNS) for p in rows), f"round {k} has a malformed pruned piece")
    if not rows:
        return {}
    ids, losses, freqs, scores, alts = zip(*rows)
    last = n_special + n_pieces - 1
    need(ints_within(ids, n_special, last) and all_numbers(losses) and all_counts(freqs) and _scores_ok(scores)
         and all(type(a) is list for a in alts) and ints_within(list(chain.from_iterable(alts)), n_special, last),
         f"round {k} has a malformed pruned piece")
    offsets = np.zeros(len(alts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, alts), dtype=np.int64, count=len(alts)), out=offsets[1:])
    return {"pruned": np.array(ids, dtype=np.int64) - n_special, "loss": np.array(losses, dtype=np.float64),
            "freq": np.array(freqs, dtype=np.int64), "pruned_scores": np.array(scores, dtype=np.int64),
            "alt_offsets": offsets,
            "alt_pieces": np.fromiter(chain.from_iterable(alts), dtype=np.int64, count=int(offsets[-1])) - n_special}


def from_json(d: object) -> UnigramTimeline:
    """Rebuild a timeline from `to_json`'s dict, checking every field (`ModelFormatError`)."""
    d = check_header(d, FORMAT_NAME, FORMAT_VERSION)
    try:
        settings = UnigramSettings.from_json(d["settings"])
        pieces = d["pieces"]
        need(isinstance(pieces, list) and set(map(type, pieces)) <= {str} and all(pieces),
             "pieces must be non-empty strings")
        need(len(set(pieces)) == len(pieces), "pieces must be distinct")
        rd = d["rounds"]
        need(rd.get("columns") == ROUND_COLUMNS, "unknown round columns")
        n_special = 1 + len(settings.special_tokens)
        table = PieceTable(pieces, string_ranks(pieces))  # the rounds index the pieces by id
        rounds = []
        prev = len(pieces)
        for k, row in enumerate(rd["rows"]):
            need(isinstance(row, list) and len(row) == len(ROUND_COLUMNS), f"round {k} is malformed")
            index, ll, em, vt, pruned, scores = row
            need(_is_int(index) and _is_num(ll) and _is_int(vt) and isinstance(em, list) and all_numbers(em)
                 and isinstance(scores, list) and _scores_ok(scores) and isinstance(pruned, list),
                 f"round {k} is malformed")
            columns = RoundColumns(table, np.arange(len(scores), dtype=np.int64), np.array(scores, dtype=np.int64),
                                   **_pruned_from_json(pruned, len(pieces), n_special, k))
            need(not k or len(scores) + len(columns.pruned) == prev,
                 f"round {k}'s pieces and pruned pieces do not add up to the round before")
            prev = len(scores)
            rounds.append(UnigramRound(index, n_special + len(scores), float(ll), tuple(map(float, em)), vt,
                                       columns=columns))
        tl = UnigramTimeline(settings, rounds, d.get("corpus_length", 0), d.get("n_chunks", 0),
                             d.get("seed_size", 0), bool(d.get("finished", True)))
        need(_is_int(tl.corpus_length) and _is_int(tl.n_chunks) and _is_int(tl.seed_size), "bad corpus figures")
        need(not rounds or np.array_equal(id_order(rounds), np.arange(len(pieces))),
             "the pieces do not match the rounds' pruning order")
        return tl
    except TokvizError as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(f"corrupt model: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ModelFormatError(f"corrupt model: missing or malformed {exc}") from None
