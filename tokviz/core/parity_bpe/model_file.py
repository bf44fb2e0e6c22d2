"""A parity-aware timeline as JSON: the ``tokviz-parity-bpe`` format.

The BPE part is written and checked by `tokviz.core.bpe.model_file` (the same steps, base and
figures); this adds the documents (titles, first token counts, the reference) and, per step, the
document it served (-1: a global merge) and ``[document, tokens saved]`` pairs. An unknown
version or a bad field is a `ModelFormatError` saying what is wrong.
"""

from __future__ import annotations

from tokviz.core.bpe import model_file as bpe_file
from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.checks import is_count

from .reference import GLOBAL
from .settings import FORMAT_NAME, ParitySettings
from .timeline import ParityTimeline
from .trainer import ParityStep

FORMAT_VERSION = 1
_BPE_FIELDS = ("units", "split", "vocab_size", "merges", "min_count", "special_tokens")


def to_json(timeline: ParityTimeline) -> dict:
    """The JSON-ready dict of a parity-aware timeline."""
    d = bpe_file.timeline_to_json(timeline)
    d["format"], d["version"] = FORMAT_NAME, FORMAT_VERSION
    d["parity"] = {
        "documents": list(timeline.documents),
        "initial": list(timeline.initial),
        "reference": timeline.reference,
        "served": [s.served for s in timeline.steps],
        "saved": [[list(p) for p in s.saved] for s in timeline.steps],
    }
    return d


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise ModelFormatError(f"corrupt parity-aware model file: {what}")


def from_json(d: object) -> ParityTimeline:
    """Rebuild a `ParityTimeline` from its JSON dict, checking every field."""
    if not isinstance(d, dict) or d.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"not a parity-aware model file (no 'format: {FORMAT_NAME}' header)")
    version = d.get("version")
    _need(isinstance(version, int) and version >= 1, "missing or unknown format version")
    if version > FORMAT_VERSION:
        raise ModelFormatError(f"parity-aware model file version {version} is newer than this tokviz reads "
                               f"({FORMAT_VERSION}); update tokviz")
    try:
        _need(isinstance(d.get("settings"), dict), "missing or malformed settings")
        settings = ParitySettings.from_json(d["settings"])
        bpe_settings = {k: v for k, v in d["settings"].items() if k in _BPE_FIELDS}
        plain = bpe_file.timeline_from_json({**d, "format": bpe_file.FORMAT_NAME, "version": 1,
                                             "settings": bpe_settings})
        p = d["parity"]
        _need(isinstance(p, dict), "missing parity figures")
        titles, initial, reference = p["documents"], p["initial"], p["reference"]
        served, saved = p["served"], p["saved"]
        n_docs = len(titles)
        _need(isinstance(titles, list) and all(isinstance(t, str) for t in titles), "bad document titles")
        _need(isinstance(initial, list) and len(initial) == n_docs and all(is_count(x) for x in initial),
              "bad first token counts")
        _need(is_count(reference) and (reference < n_docs or n_docs == 0), "bad reference document")
        n = len(plain.steps)
        _need(isinstance(served, list) and isinstance(saved, list) and len(served) == n and len(saved) == n,
              "the parity figures do not match the steps")
        steps = []
        for s, who, spent in zip(plain.steps, served, saved):
            _need(type(who) is int and GLOBAL <= who < n_docs, f"step {s.rank} served an unknown document")
            _need(isinstance(spent, list) and all(
                isinstance(x, list) and len(x) == 2 and all(is_count(v) for v in x) and x[0] < n_docs
                for x in spent), f"step {s.rank} has malformed savings")
            steps.append(ParityStep(s.rank, s.pair, s.id, s.token, s.count, s.length, s.candidates, who,
                                    tuple((a, b) for a, b in spent)))
        return ParityTimeline(settings, plain.base, steps, plain.corpus_length, plain.n_chunks, plain.finished,
                              documents=tuple(titles), initial=tuple(initial), reference=reference)
    except ModelFormatError:
        raise
    except TokvizError as exc:
        raise ModelFormatError(f"corrupt parity-aware model file: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFormatError(f"corrupt parity-aware model file: missing or malformed {exc}") from None
