"""A BPE timeline as JSON: the ``tokviz-model`` format (the file handling is `tokviz.core.io`).

Format ``{"format": "tokviz-model", "version": 1, "settings": {...}, "base": {...},
"steps": {"columns": [...], "rows": [[...], ...]}}``. Steps are stored as rows under a column
header (compact for 100k merges). Token bytes are not stored: they are derived from the pairs.
Loading checks every field and number and raises `ModelFormatError` saying what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator

from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.checks import is_count
from tokviz.core.io.json_stream import RawJSON, json_pieces

from .settings import FORMAT_NAME, TrainSettings
from .timeline import Timeline
from .trainer import Candidate, MergeStep
from .units import BaseVocab

FORMAT_VERSION = 1
STEP_COLUMNS = ["left", "right", "count", "length", "candidates"]


def timeline_to_json(timeline: Timeline) -> dict:
    """The JSON-ready dict of a timeline."""
    rows = []
    seen: dict[int, list] = {}  # id(candidate) -> its row: the trainer shares unchanged runners-up
    for s in timeline.steps:
        cands = []
        for c in s.candidates:
            row = seen.get(id(c))
            if row is None:
                row = seen[id(c)] = [c.pair[0], c.pair[1], c.count, c.first_chunk, c.first_offset]
            cands.append(row)
        rows.append([s.pair[0], s.pair[1], s.count, s.length, cands])
    return _document(timeline, rows)


def timeline_json_text(timeline: Timeline) -> Iterator[bytes]:
    """The model file of `timeline` in pieces: ``json_pieces(timeline_to_json(timeline))`` byte for
    byte, each step's row written as text rather than as lists for the JSON encoder. Every field of
    a row is an integer, and a runner-up shared by several steps is written once: 28,000 merges
    take 0.05 s, where the lists and the encoder take 0.1."""
    rows = []
    seen: dict[int, bytes] = {}
    for s in timeline.steps:
        texts = []
        for c in s.candidates:
            text = seen.get(id(c))
            if text is None:
                p = c.pair
                text = seen[id(c)] = b"[%d,%d,%d,%d,%d]" % (p[0], p[1], c.count, c.first_chunk, c.first_offset)
            texts.append(text)
        p = s.pair
        rows.append(RawJSON(b"[%d,%d,%d,%d,[%b]]" % (p[0], p[1], s.count, s.length, b",".join(texts))))
    return json_pieces(_document(timeline, rows))


def _document(timeline: Timeline, rows: list) -> dict:
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "settings": timeline.settings.to_json(),
        "base": {
            "units": timeline.base.units,
            "symbols": list(timeline.base.symbols),
            "end_of_word": timeline.base.end_of_word,
        },
        "corpus_length": timeline.corpus_length,
        "n_chunks": timeline.n_chunks,
        "finished": timeline.finished,
        "steps": {"columns": STEP_COLUMNS, "rows": rows},
    }


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise ModelFormatError(f"corrupt model file: {what}")


def timeline_from_json(d: object) -> Timeline:
    """Rebuild a `Timeline` from its JSON dict, checking every field."""
    if not isinstance(d, dict) or d.get("format") != FORMAT_NAME:
        raise ModelFormatError("not a tokviz model file (no 'format: tokviz-model' header)")
    version = d.get("version")
    if not isinstance(version, int):
        raise ModelFormatError("corrupt model file: missing format version")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"model file format version {version} is newer than this tokviz reads "
            f"({FORMAT_VERSION}); update tokviz"
        )
    if version < 1:
        raise ModelFormatError(f"unknown model file format version {version}")
    try:
        _need(isinstance(d.get("settings"), dict), "missing or malformed settings")
        settings = TrainSettings.from_json(d["settings"])
        b = d["base"]
        base = BaseVocab(b["units"], tuple(b["symbols"]), b["end_of_word"])
        _need(all(isinstance(s, str) for s in base.symbols), "base symbols must be strings")
        _need(base.units == settings.units, "base units differ from the settings")
        _need(base.end_of_word == settings.end_of_word, "base end-of-word marker differs from the settings")
        _need(base.units == "bytes" or base.end_of_word is None or base.end_of_word in base.symbols,
              "the end-of-word marker is not a base symbol")
        steps_d = d["steps"]
        _need(steps_d.get("columns") == STEP_COLUMNS, "unknown step columns")
        token_bytes = base.token_bytes()
        steps = []
        for rank, row in enumerate(steps_d["rows"]):
            _need(isinstance(row, list) and len(row) == len(STEP_COLUMNS), f"step {rank} is malformed")
            left, right, count, length, cands = row
            n = len(token_bytes)
            _need(all(is_count(x) for x in (left, right)) and left < n and right < n,
                  f"step {rank} refers to an unknown id")
            _need(is_count(count) and is_count(length), f"step {rank} has a count out of range")
            token = token_bytes[left] + token_bytes[right]
            token_bytes.append(token)
            cand_objs = []
            _need(isinstance(cands, list), f"step {rank} has malformed candidates")
            for c in cands:
                _need(isinstance(c, list) and len(c) == 5 and all(is_count(x) for x in c),
                      f"step {rank} has a malformed candidate")
                _need(c[0] < n and c[1] < n, f"step {rank} has a candidate with an unknown id")
                cand_objs.append(Candidate((c[0], c[1]), c[2], c[3], c[4]))
            steps.append(MergeStep(rank, (left, right), n, token, count, length, tuple(cand_objs)))
        corpus_length = d.get("corpus_length", 0)
        n_chunks = d.get("n_chunks", 0)
        _need(is_count(corpus_length) and is_count(n_chunks), "bad corpus figures")
        return Timeline(settings, base, steps, corpus_length, n_chunks, bool(d.get("finished", True)))
    except ModelFormatError:
        raise
    except TokvizError as exc:  # SettingsError, SplitError (a bad split regex)
        raise ModelFormatError(f"corrupt model file: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFormatError(f"corrupt model file: missing or malformed {exc}") from None
