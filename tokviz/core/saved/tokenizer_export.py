"""Exporting a tokenizer trained in tokviz: Hugging Face ``tokenizer.json`` and tiktoken files.

``tokenizer.json``: a BPE model (byte-level for byte units, characters with ``[UNK]`` for
character units) with tokviz's merge list; the split becomes a ``Split`` pre-tokenizer that keeps
the pattern's matches and drops the rest, exactly as tokviz does. tokenizers merges pairs in rank
order, leftmost first: tokviz's rule, so the ids are the same.

``.tiktoken``: one ``base64(token) id`` line per token (ids are ranks), plus the split pattern and
special tokens, which the format does not hold: `export_tiktoken` writes them to
``NAME.tiktoken.json`` next to it (for ranks written to ``NAME.tiktoken`` or to plain ``NAME``)
and returns them for ``tiktoken.Encoding(...)``. tiktoken joins
any two neighbours whose bytes form a token; the export checks that this gives each merge of the
timeline (so the ids are the same) and refuses otherwise. Neither format has an end-of-word
marker, so timelines trained with one are refused, as are character units for tiktoken. Only
BPE timelines export; `export_problem` says why another one cannot (for menus and the CLI).

Nothing is lost: `check_export_targets` refuses an export that would write onto one of its inputs,
or replace a file nobody named (a sidecar's name taken by anything but an older sidecar).
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

import regex

from tokviz.core.algorithm.records import UNK_TOKEN
from tokviz.core.bpe.timeline import Timeline
from tokviz.core.errors import TokvizError
from tokviz.core.formats.tiktoken import SIDECAR_FORMAT, is_tiktoken_sidecar, tiktoken_sidecar
from tokviz.core.formats.tokenizer_json.pretokenizers import BYTE_CHAR
from tokviz.core.io.safe_files import same_file, write_atomic
from tokviz.core.registry import spec_of
from tokviz.core.text.split import SPACE_CHARS, SPLIT_PRESETS, python_regex_pattern
from tokviz.core.text.token_text import python_pattern

_WHOLE_TEXT = r"[\s\S]+"


@dataclass(frozen=True)
class TiktokenExport:
    """What ``tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks,
    special_tokens=special_tokens)`` needs."""

    path: Path | None
    name: str
    pattern: str
    ranks: dict[bytes, int]
    special_tokens: dict[str, int]


def _check_exportable(timeline, fmt: str = "hf") -> None:
    """Raise `TokvizError` unless `timeline` has an exact form in `fmt` ("hf" or "tiktoken")."""
    spec = spec_of(timeline)
    if spec is None:  # a loaded tokenizer
        source = getattr(timeline.settings, "source", "a file")
        raise TokvizError(f"this tokenizer was loaded from {source}, not trained in tokviz: use that file as it is")
    if spec.not_exported is not None:
        raise TokvizError(spec.not_exported)
    if timeline.base.end_of_word is not None:
        raise TokvizError(
            f"this model appends the end-of-word marker {timeline.base.end_of_word!r} to every "
            f"chunk, which tokenizer.json and .tiktoken cannot express; train without --end-of-word "
            f"to export"
        )
    if fmt == "tiktoken" and timeline.base.units != "bytes":
        raise TokvizError("tiktoken files hold byte-level tokens: export a model trained on bytes "
                          "(--units bytes), or export tokenizer.json")


def export_problem(timeline, fmt: str = "hf") -> str | None:
    """Why `timeline` cannot be exported as `fmt` ("hf" or "tiktoken"), or None. Problems only the
    merges show (a token made twice, a merge tiktoken forms differently) appear when exporting."""
    try:
        _check_exportable(timeline, fmt)
    except TokvizError as exc:
        return str(exc)
    return None


def rust_pattern(split: str, *, oniguruma: bool) -> str:
    """The split as a pattern for Rust's regex (tiktoken) or Oniguruma (tokenizers).

    Oniguruma reads ``$`` as end of line and ``{1,3}+`` as a repeated group (not possessive):
    both are rewritten (``\\z``; ``{1,3}``, the same matches at the end of an alternative).
    """
    if split == "none":
        return _WHOLE_TEXT
    if split == "whitespace":
        return "[^" + "".join(f"\\u{ord(c):04x}" for c in SPACE_CHARS) + "]+"
    pattern = SPLIT_PRESETS.get(split) or split[len("regex:"):]
    if split.startswith("regex:"):
        pattern = python_regex_pattern(pattern).replace(r"\Z", "$")  # tokviz reads \s++$ as end of text
    if oniguruma:
        pattern = python_pattern(pattern).replace(r"\Z", r"\z")
        pattern = regex.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)
    return pattern


def _token_strings(timeline: Timeline, n: int) -> list[str]:
    if timeline.base.units == "bytes":
        return ["".join(BYTE_CHAR[b] for b in t) for t in timeline.token_bytes()[: 256 + n]]
    return [t.decode("utf-8") for t in timeline.token_bytes()[: timeline.base_size + n]]


def tokenizer_json(timeline: Timeline, *, step: int | None = None) -> dict:
    """The tokenizer.json dict of `timeline` (its first `step` merges; all by default)."""
    _check_exportable(timeline)
    merges = timeline.merges(step)
    n = len(merges)
    strings = _token_strings(timeline, n)
    vocab: dict[str, int] = {}
    for i, s in enumerate(strings):
        if s in vocab:
            raise TokvizError(
                f"token {s!r} is made twice (ids {vocab[s]} and {i}); tokenizer.json needs distinct "
                f"tokens: export an earlier step (before id {i})"
            )
        vocab[s] = i
    added = []
    byte_level = timeline.base.units == "bytes"
    next_id = len(strings)
    unk = None
    if not byte_level:
        unk = UNK_TOKEN
        vocab[UNK_TOKEN] = next_id
        added.append(_added(next_id, UNK_TOKEN))
        next_id += 1
    for k, s in enumerate(timeline.settings.special_tokens):
        vocab[s] = next_id + k
        added.append(_added(next_id + k, s))
    merge_list: list = []
    for a, b in merges:
        left, right = strings[a], strings[b]
        merge_list.append(f"{left} {right}" if " " not in left + right else [left, right])
    if any(isinstance(m, list) for m in merge_list):
        merge_list = [m.split(" ") if isinstance(m, str) else m for m in merge_list]
    split = {
        "type": "Split",
        "pattern": {"Regex": rust_pattern(timeline.settings.split, oniguruma=True)},
        "behavior": "Removed",
        "invert": True,
    }
    pre = [split]
    if byte_level:
        pre.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
        if byte_level else {"type": "Fuse"},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": unk,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merge_list,
        },
    }


def _added(i: int, s: str) -> dict:
    return {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def export_tokenizer_json(timeline: Timeline, path: str | os.PathLike, *, step: int | None = None) -> dict:
    """Write `timeline` as a Hugging Face tokenizer.json (atomically); returns the dict."""
    d = tokenizer_json(timeline, step=step)
    write_atomic(Path(path), json.dumps(d, ensure_ascii=False, indent=1).encode("utf-8"))
    return d


def tiktoken_ranks(timeline: Timeline, *, step: int | None = None, name: str = "tokviz") -> TiktokenExport:
    """The ranks, pattern and special tokens of `timeline` for tiktoken (see module doc)."""
    _check_exportable(timeline, "tiktoken")
    merges = timeline.merges(step)
    tokens = timeline.token_bytes()[: 256 + len(merges)]
    ranks: dict[bytes, int] = {}
    for i, t in enumerate(tokens):
        if t in ranks:
            raise TokvizError(
                f"token {t!r} is made twice (ids {ranks[t]} and {i}); a .tiktoken file needs distinct "
                f"tokens: export an earlier step (before id {i})"
            )
        ranks[t] = i
    from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer

    pattern = rust_pattern(timeline.settings.split, oniguruma=False)
    check = RankBpeTokenizer(ranks, pattern=pattern)
    for r, pair in enumerate(merges):
        got = check.merge_of(256 + r)
        if got != tuple(pair):
            raise TokvizError(
                f"merge {r} joins {pair} but tiktoken's byte-rank rule would form that token from "
                f"{got}; this merge list has no exact .tiktoken form: export step {r} or earlier, "
                f"or tokenizer.json"
            )
    first_special = 256 + len(merges)
    specials = {s: first_special + k for k, s in enumerate(timeline.settings.special_tokens)}
    return TiktokenExport(None, name, pattern, ranks, specials)


def export_tiktoken(
    timeline: Timeline, path: str | os.PathLike, *, step: int | None = None, name: str | None = None
) -> TiktokenExport:
    """Write ``path`` (the .tiktoken ranks) and its sidecar ``NAME.tiktoken.json`` (pattern and
    special tokens; `tiktoken_sidecar`)."""
    path = Path(path)
    check_export_targets(path, "tiktoken")
    exp = tiktoken_ranks(timeline, step=step, name=name or path.name.removesuffix(".tiktoken"))
    lines = b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in sorted(exp.ranks.items(), key=lambda x: x[1]))
    side = {"format": SIDECAR_FORMAT, "version": 1, "name": exp.name, "pattern": exp.pattern,
            "special_tokens": exp.special_tokens}
    write_atomic(path, lines)
    try:
        write_atomic(tiktoken_sidecar(path), json.dumps(side, ensure_ascii=False, indent=1).encode("utf-8"))
    except TokvizError:
        path.unlink(missing_ok=True)  # both files or neither: ranks without their pattern mislead
        raise
    return TiktokenExport(path, exp.name, exp.pattern, exp.ranks, exp.special_tokens)


EXPORT_FORMATS = ("hf", "tiktoken")  # tokenizer.json, .tiktoken + sidecar


def export_files(path: str | os.PathLike, fmt: str) -> tuple[Path, ...]:
    """The files an export to `path` writes: the one named, then tiktoken's sidecar.

    >>> [p.name for p in export_files("m", "tiktoken")], [p.name for p in export_files("m.json", "hf")]
    (['m', 'm.tiktoken.json'], ['m.json'])
    """
    path = Path(path)
    return (path, tiktoken_sidecar(path)) if fmt == "tiktoken" else (path,)


def check_export_targets(path: str | os.PathLike, fmt: str, *,
                         inputs: tuple[str | os.PathLike, ...] = ()) -> tuple[Path, ...]:
    """The files an export to `path` would write (`export_files`); `TokvizError` if one of them
    is one of `inputs` (the model being exported), or if a file the caller did not name (the
    sidecar) exists and is not a sidecar an earlier export wrote."""
    files = export_files(path, fmt)
    for f in files:
        for i in inputs:
            if Path(i).is_file() and same_file(f, i):
                raise TokvizError(f"{f} is the model being exported; tokviz does not write over its input: "
                                  f"choose another output name")
    for f in files[1:]:
        if f.is_file() and not is_tiktoken_sidecar(f):
            raise TokvizError(f"{f} exists and is not a tiktoken sidecar; the export would replace a file you "
                              f"did not name: move it or choose another output name")
    return files


@dataclass(frozen=True)
class ExportedFiles:
    """What `export_timeline` wrote: `files` (the tokenizer, then tiktoken's sidecar) and sizes."""

    files: tuple[Path, ...]
    fmt: str
    n_tokens: int
    n_merges: int


def export_timeline(timeline: Timeline, path: str | os.PathLike, fmt: str = "hf", *,
                    step: int | None = None, inputs: tuple[str | os.PathLike, ...] = ()) -> ExportedFiles:
    """Write `timeline` (its first `step` merges; all when None) as `fmt` ("hf" or "tiktoken"),
    never onto one of `inputs` (`check_export_targets`)."""
    path = Path(path)
    if fmt in EXPORT_FORMATS:
        check_export_targets(path, fmt, inputs=inputs)
    if fmt == "hf":
        d = export_tokenizer_json(timeline, path, step=step)
        return ExportedFiles((path,), fmt, len(d["model"]["vocab"]), len(d["model"]["merges"]))
    if fmt != "tiktoken":
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
    exp = export_tiktoken(timeline, path, step=step)
    return ExportedFiles(export_files(path, fmt), fmt,
                         len(exp.ranks) + len(exp.special_tokens), len(exp.ranks) - timeline.base_size)
