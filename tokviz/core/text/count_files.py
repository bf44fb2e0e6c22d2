"""Pre-token count files: the counted corpus that training needs, written where the corpus lives and
read where the training runs.

Two formats, told apart by the file name:

- **TSV** (any other name): one ``text<TAB>count`` line per pre-token, in order of first
  appearance, as sentencepiece's ``--input_format=tsv`` reads sentences. In the text, ``\\t``,
  ``\\n``, ``\\r`` and ``\\\\`` stand for a tab, a line break, a carriage return and a backslash
  (pre-tokens such as ``"\\n\\n"`` hold them); any other backslash is itself. A first line
  ``#tokviz-counts v1<TAB>split=SPEC`` says the texts are chunks of that split.
- **Parquet** (``.parquet``): columns ``text`` (string) and ``count`` (integer), with the split in
  the schema's metadata (``tokviz-counts``, ``split``); needs the ``pyarrow`` package.

A file without the tokviz header (a table DuckDB, Spark or a script counted) holds texts that the
training splits again with its own split; a file with it holds chunks, used as they are when the
training's split is the same (`read_counts` says which). Several files merge by addition, in the
order given: counting shards of a corpus and merging them is counting the corpus.

What this leaves out: counting (`tokviz.core.text.chunks`) and training.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from tokviz.core.errors import CorpusError
from tokviz.core.io.safe_files import MAX_TEXT_BYTES, write_text_atomic

from .corpus import read_text

FORMAT = "tokviz-counts"
VERSION = 1
_HEADER = regex.compile(r"#tokviz-counts v(\d+)\t(.*)")
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPE = regex.compile(r"\\([\\tnr])")
_UNESCAPED = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
# The trainers add counts up in 64-bit arrays (a pair's count, the corpus length in bytes): a table
# whose characters times counts stay below 2**60 stays below 2**62 bytes, whatever the pairs.
MAX_WEIGHTED_CHARS = 2**60


@dataclass(frozen=True)
class Counts:
    """What count files hold: ``{text: count}`` in order of first appearance, and the split the
    texts are chunks of (None: texts to be split by the training)."""

    table: dict[str, int]
    split: str | None


def escape(text: str) -> str:
    r"""A pre-token as a TSV field.

    >>> escape("a\tb\n\\")
    'a\\tb\\n\\\\'
    """
    return "".join(_ESCAPES.get(c, c) for c in text)


def unescape(field: str) -> str:
    r"""A TSV field as its pre-token (`escape` undone).

    >>> unescape('a\\tb\\n\\\\') == "a\tb\n\\"
    True
    """
    return _UNESCAPE.sub(lambda m: _UNESCAPED[m.group(1)], field)


def is_parquet(path: str | os.PathLike) -> bool:
    return str(path).lower().endswith(".parquet")


def _arrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError("Parquet count files need the pyarrow package (pip install pyarrow); "
                          "or write TSV: any other file name than .parquet") from None
    return pa, pq


def write_counts(path: str | os.PathLike, counts: Mapping[str, int], *, split: str) -> None:
    """Write `counts` (chunks of `split`, in order) to `path`: Parquet for ``.parquet``, else TSV."""
    if is_parquet(path):
        pa, pq = _arrow()
        table = pa.table({"text": pa.array(list(counts), pa.string()),
                          "count": pa.array(list(counts.values()), pa.int64())})
        table = table.replace_schema_metadata({FORMAT: str(VERSION), "split": split})
        tmp = Path(f"{path}.tmp")
        try:
            pq.write_table(table, tmp)
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise CorpusError(f"{path}: cannot write ({exc.strerror or exc})") from None
        return
    lines = [f"#{FORMAT} v{VERSION}\tsplit={split}\n"]
    lines += [f"{escape(t)}\t{n}\n" for t, n in counts.items()]
    write_text_atomic(path, "".join(lines))


def _add(total: dict[str, int], rows: Iterable[tuple[str, int]], name: str) -> None:
    get = total.get
    for text, n in rows:
        if n < 0:
            raise CorpusError(f"{name}: negative count {n} for {text!r}")
        if text and n:
            total[text] = get(text, 0) + n


def _read_tsv(path: str | os.PathLike) -> tuple[list[tuple[str, int]], str | None]:
    text = read_text(path, allow_empty=True)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    split = None
    start = 0
    if lines:
        m = _HEADER.fullmatch(lines[0].rstrip("\r"))
        if m:
            if int(m.group(1)) != VERSION:
                raise CorpusError(f"{path}: {FORMAT} v{m.group(1)} is not known (this tokviz reads v{VERSION})")
            fields = dict(f.split("=", 1) for f in m.group(2).split("\t") if "=" in f)
            split, start = fields.get("split"), 1
    rows = []
    for k, line in enumerate(lines[start:], start + 1):
        body, tab, count = line.rstrip("\r").rpartition("\t")
        if not tab or not count.isdigit() or not count.isascii():
            raise CorpusError(f"{path}: line {k} is not 'text<TAB>count': {line[:60]!r}")
        rows.append((unescape(body), int(count)))
    return rows, split


def _read_parquet(path: str | os.PathLike) -> tuple[list[tuple[str, int]], str | None]:
    pa, pq = _arrow()
    try:
        meta = pq.ParquetFile(path).metadata  # the sizes it declares, before any column is read
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if size > MAX_TEXT_BYTES:  # the bound a TSV count file has, for what the columns unpack to
            raise CorpusError(f"{path}: its columns unpack to {size:,} bytes, more than the "
                              f"{MAX_TEXT_BYTES:,} a count file may hold")
        table = pq.read_table(path, columns=["text", "count"])
    except (OSError, pa.ArrowException, KeyError) as exc:
        raise CorpusError(f"{path}: not a count file with 'text' and 'count' columns ({str(exc)[:120]})") from None
    if not pa.types.is_string(table.schema.field("text").type) and \
            not pa.types.is_large_string(table.schema.field("text").type):
        raise CorpusError(f"{path}: the 'text' column must hold strings")
    if not pa.types.is_integer(table.schema.field("count").type):
        raise CorpusError(f"{path}: the 'count' column must hold whole numbers")
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if FORMAT in meta and meta[FORMAT] != str(VERSION):
        raise CorpusError(f"{path}: {FORMAT} v{meta[FORMAT]} is not known (this tokviz reads v{VERSION})")
    texts, counts = table.column("text").to_pylist(), table.column("count").to_pylist()
    if any(t is None for t in texts) or any(n is None for n in counts):
        raise CorpusError(f"{path}: empty (null) cells in 'text' or 'count'")
    return list(zip(texts, counts, strict=True)), meta.get("split") if FORMAT in meta else None


def read_counts(paths: Sequence[str | os.PathLike]) -> Counts:
    """The counts of `paths` added up, in order. The split is the files' when they all declare the
    same one; files that declare none (or differ) leave it None: the training splits the texts."""
    total: dict[str, int] = {}
    splits = set()
    for path in paths:
        rows, split = (_read_parquet if is_parquet(path) else _read_tsv)(path)
        _add(total, rows, str(path))
        splits.add(split)
    if not total:
        raise CorpusError(f"{', '.join(map(str, paths))}: no counts to train on")
    weighted = sum(map(operator.mul, map(len, total), total.values()))
    if weighted > MAX_WEIGHTED_CHARS:
        raise CorpusError(f"{', '.join(map(str, paths))}: the counts add up to {weighted:.3g} characters, more than "
                          f"the {MAX_WEIGHTED_CHARS:.3g} characters training counts in 64 bits")
    return Counts(total, splits.pop() if len(splits) == 1 else None)
