"""A BoundlessBPE timeline as JSON: the ``tokviz-boundless`` format (file handling: `tokviz.core.io`).

``{"format": "tokviz-boundless", "version": 1, "settings": {...}, "base": {...}, "steps":
{"columns": [...], "rows": [...]}}``: BPE's model file with each step's kind and rival count.
Token bytes are derived from the pairs. Loading checks every field and raises `ModelFormatError`
saying what is wrong.
"""

from __future__ import annotations

from tokviz.core.bpe.trainer_records import Candidate
from tokviz.core.bpe.units import BaseVocab
from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.checks import is_count

from .settings import FORMAT_NAME, BoundlessSettings
from .timeline import BoundlessTimeline
from .trainer import STEP_KINDS, BoundlessStep

FORMAT_VERSION = 1
STEP_COLUMNS = ["kind", "left", "right", "count", "length", "rival", "candidates"]


def to_json(timeline: BoundlessTimeline) -> dict:
    """The JSON-ready dict of a timeline."""
    rows = [[s.kind, s.pair[0], s.pair[1], s.count, s.length, s.rival,
             [[c.pair[0], c.pair[1], c.count, c.first_chunk, c.first_offset] for c in s.candidates]]
            for s in timeline.steps]
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "settings": timeline.settings.to_json(),
        "base": {"units": timeline.base.units, "symbols": list(timeline.base.symbols),
                 "end_of_word": timeline.base.end_of_word},
        "corpus_length": timeline.corpus_length,
        "n_chunks": timeline.n_chunks,
        "n_runs": timeline.n_runs,
        "finished": timeline.finished,
        "steps": {"columns": STEP_COLUMNS, "rows": rows},
    }


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise ModelFormatError(f"corrupt BoundlessBPE model file: {what}")


def from_json(d: object) -> BoundlessTimeline:
    """Rebuild a `BoundlessTimeline` from its JSON dict, checking every field."""
    if not isinstance(d, dict) or d.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"not a BoundlessBPE model file (no 'format: {FORMAT_NAME}' header)")
    version = d.get("version")
    _need(isinstance(version, int), "missing format version")
    if version > FORMAT_VERSION:
        raise ModelFormatError(f"BoundlessBPE model file version {version} is newer than this tokviz reads "
                               f"({FORMAT_VERSION}); update tokviz")
    _need(version >= 1, f"unknown format version {version}")
    try:
        _need(isinstance(d.get("settings"), dict), "missing or malformed settings")
        settings = BoundlessSettings.from_json(d["settings"])
        b = d["base"]
        base = BaseVocab(b["units"], tuple(b["symbols"]), b["end_of_word"])
        _need(all(isinstance(s, str) for s in base.symbols), "base symbols must be strings")
        _need(base.units == settings.units and base.end_of_word == settings.end_of_word,
              "base vocabulary differs from the settings")
        _need(base.units == "bytes" or base.end_of_word is None or base.end_of_word in base.symbols,
              "the end-of-word marker is not a base symbol")
        steps_d = d["steps"]
        _need(isinstance(steps_d, dict) and steps_d.get("columns") == STEP_COLUMNS, "unknown step columns")
        vocab = base.token_bytes()
        steps = []
        for rank, row in enumerate(steps_d["rows"]):
            _need(isinstance(row, list) and len(row) == len(STEP_COLUMNS), f"step {rank} is malformed")
            kind, left, right, count, length, rival, cands = row
            n = len(vocab)
            _need(kind in STEP_KINDS, f"step {rank} has an unknown kind")
            _need(is_count(left) and is_count(right) and left < n and right < n, f"step {rank} refers to an unknown id")
            _need(all(is_count(x) for x in (count, length, rival)), f"step {rank} has a count out of range")
            _need(isinstance(cands, list), f"step {rank} has malformed candidates")
            cand_objs = []
            for c in cands:
                _need(isinstance(c, list) and len(c) == 5 and all(is_count(x) for x in c[:3])
                      and all(isinstance(x, int) and not isinstance(x, bool) and x >= -1 for x in c[3:]),
                      f"step {rank} has a malformed candidate")
                _need(c[0] < n and c[1] < n, f"step {rank} has a candidate with an unknown id")
                cand_objs.append(Candidate((c[0], c[1]), c[2], c[3], c[4]))
            vocab.append(vocab[left] + vocab[right])
            steps.append(BoundlessStep(rank, (left, right), n, vocab[n], count, length, tuple(cand_objs), kind, rival))
        figures = {k: d.get(k, 0) for k in ("corpus_length", "n_chunks", "n_runs")}
        _need(all(is_count(x) for x in figures.values()), "bad corpus figures")
        return BoundlessTimeline(settings, base, steps, **figures, finished=bool(d.get("finished", True)))
    except ModelFormatError:
        raise
    except TokvizError as exc:
        raise ModelFormatError(f"corrupt BoundlessBPE model file: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFormatError(f"corrupt BoundlessBPE model file: missing or malformed {exc}") from None
