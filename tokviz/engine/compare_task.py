"""Comparing tokenizers off the GUI thread: the job the Compare panel gives a `TaskEngine`.

`run_comparison` measures each model on a text (`tokviz.core.compare.iter_compare`), reports
progress after every document of every model, hands what it finished to `partial` in batches
(`CompareBatch`: the documents first, then rows and models' results, at most every
`BATCH_SECONDS` but at a model's end), and stops between documents when asked. A model that cannot
be opened or measured gets an error in its result; the others still run.
`open_any_model` opens what ``tokviz encode`` opens: a tokviz model file, a tokenizer file or
folder, or a known name such as ``cl100k_base``. What this leaves out: the metrics (core), the
widgets (`tokviz.panels.compare`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tokviz.core import Cancelled
from tokviz.core.compare import (
    CompareBatch,
    CompareEvent,
    Comparison,
    FileSource,
    ModelSpec,
    StringSource,
    iter_compare,
    prepare_documents,
)

BATCH_SECONDS = 0.1  # rows reach the window in a few batches a second: each costs the GUI thread one insert
# Documents end only with the piece they are encoded in: pieces of a quarter of the usual size let
# the rows of a 5.7 MB corpus arrive in about two dozen steps per model instead of two (the figures
# do not depend on the piece size)
STREAM_PIECE_SIZE = 1 << 19  # characters of a string, bytes of a file


def open_any_model(source: str, pattern: str | None = None):
    """A tokviz model (BPE, WordPiece, Unigram) or any tokenizer tokviz reads, as a timeline
    (the one loader, `tokviz.core.loading.open_timeline`)."""
    from tokviz.core.loading import open_timeline

    return open_timeline(source, pattern=pattern)


class Batches:
    """`CompareEvent`s gathered into `CompareBatch`es handed to `send`: at most one every `seconds`
    (the first at once), and one at each model's end, so its result is never held back."""

    def __init__(self, send: Callable[[CompareBatch], None], seconds: float = BATCH_SECONDS) -> None:
        self.send, self.seconds = send, seconds
        self.rows: list[tuple[int, int, list]] = []  # (model index, first document index, metrics)
        self.results: list = []  # (model index, ModelResult)
        self.last = float("-inf")  # time.monotonic() of the last batch sent

    def add(self, e: CompareEvent) -> None:
        if e.rows:
            first = e.done - len(e.rows)
            if self.rows and self.rows[-1][0] == e.model_index and self.rows[-1][1] + len(self.rows[-1][2]) == first:
                self.rows[-1][2].extend(e.rows)
            else:
                self.rows.append((e.model_index, first, list(e.rows)))
        if e.result is not None:
            self.results.append((e.model_index, e.result))
        now = time.monotonic()
        if e.result is not None or now - self.last >= self.seconds:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if self.rows or self.results:
            self.send(CompareBatch(rows=tuple((k, first, tuple(m)) for k, first, m in self.rows),
                                   results=tuple(self.results)))
            self.rows, self.results = [], []
            self.last = time.monotonic() if now is None else now


def run_comparison(text: str | Path, specs: Sequence[ModelSpec], *, by_document: bool = False,
                   reference: int | str | None = None, should_stop: Callable[[], bool],
                   progress: Callable[[str, float], None], processes: int = 1,
                   partial: Callable[[CompareBatch], None] | None = None) -> Comparison:
    """Every model's result on `text` (a `Path` is read piece by piece, `FileSource`; per document
    with `by_document`; big pieces encoded by up to `processes` processes); `Cancelled` when
    `should_stop()` turns True between two documents. `partial` gets what is done so far in
    batches (module docstring)."""
    if isinstance(text, Path):  # read piece by piece, once per model: a big corpus is never held whole
        progress(f"Reading {text.name}…", 0.0)
        text = FileSource(text, piece_bytes=STREAM_PIECE_SIZE if partial is not None and by_document else None)
        if not by_document:
            text.check()  # a bad file fails here, not once per model
    elif partial is not None and by_document:
        text = StringSource(text, piece_chars=STREAM_PIECE_SIZE)
    docs, ref = prepare_documents(text, reference) if by_document else ([], None)
    batches = Batches(partial) if partial is not None else None
    if batches is not None and by_document:
        partial(CompareBatch(documents=tuple(docs), reference=ref))
    results = []
    for e in iter_compare(text, specs, by_document=by_document, documents=docs or None, reference=reference,
                          processes=processes):
        if should_stop():
            raise Cancelled()
        what = f"Measuring {specs[e.model_index].label}"
        if e.n_models > 1:
            what += f" ({e.model_index + 1} of {e.n_models} models)"
        if by_document:
            what += f": {e.done} of {e.total} documents"
        progress(what, (e.model_index + e.done / e.total) / e.n_models)
        if batches is not None:
            batches.add(e)
        if e.result is not None:
            results.append(e.result)
    return Comparison(tuple(results), tuple(docs), ref)
