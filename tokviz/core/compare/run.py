"""Compare many tokenizers on one text, as a generator a caller can stop between documents.

``iter_compare(text, models)`` yields a `CompareEvent` after each document of each model (and
once per model when documents are off); the event of a model's last piece of work carries its
`ModelResult`. The CLI drains it; a GUI worker iterates it on a thread and stops between two
events when cancelled (encoding one piece is the longest step: about a second for 5 MB).
`compare()` drains it into a `Comparison`.

Each model is a `ModelSpec`: a label, a function that opens its timeline, and a step. A model
that fails to open or to encode (any `TokvizError` or `OSError`) gets a result with `error` set
and the others still run. Given two processes or more (the command line, the Compare panel's child
process), models are measured side by side, each in a forked child of its own (`side_by_side`;
3.4-3.7 s instead of 5.3 s for three tiktoken files on udhr2, two cores); otherwise (one process,
or where forking is not safe) one model is open at a time, so a big one is freed before the next
loads.

The text streams: it is read (`source`) and encoded (`seams`) piece by piece, with the tokens of
one encoding of the whole text, and each piece's figures are added up (`MetricsSum`), so memory
follows the piece and the vocabulary, not the text (a file is read once per model, and once more
for its documents). Per document: each token is counted in the document where it starts (tokens
never cross a title line's start in practice: the line break before it ends every split chunk).
So the documents' token counts add up to the whole text's, and ``continued_words`` always refers
to the whole-text encoding.
What this leaves out: resolving model names (the CLI's job), formatting.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from tokviz.core.errors import TokvizError
from tokviz.core.gc_pause import paused_gc
from tokviz.core.processes.parallel import available_memory, usable
from tokviz.core.text import digits as decimal_digits

from .documents import Document, DocumentSplitter, find_reference, gini, premiums
from .metrics import RENYI_ALPHA, Metrics, MetricsSum, compute_metrics
from .scripts import ScriptCounter
from .seams import EncodedPiece, encoded_pieces
from .side_by_side import Failed, failure_message, side_by_side
from .source import SIDE_PIECE_SIZE, TextSource, as_source
from .tallies import PieceTallies
from .text import FactsCache, Overlaps, TextFacts, text_facts
from .tokens import ModelFacts, model_facts
from .utf8_integrity import utf8_tables

CHILD_BYTES = 1 << 29  # memory a model measured in a child of its own may take (o200k on gutenberg30: 390 MB)


@dataclass(frozen=True)
class ModelSpec:
    """One model to compare: `open()` returns its timeline; `step` None = the finished model."""

    label: str
    open: Callable[[], object]
    step: int | None = None


class OpenedModels:
    """Timelines of `ModelSpec`s opened once and kept while their spec is listed, for a job asked for
    again and again on the same models (a trace per span typed): reading a tokenizer file takes
    0.1-0.8 s, tracing a short span with it a millisecond. `timeline(spec)` opens on the calling
    (worker) thread; `keep(specs)` forgets the others and never waits for an open in progress."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._timelines: dict[Callable[[], object], object] = {}  # spec.open -> its timeline

    def timeline(self, spec: ModelSpec):
        """`spec.open()`, called the first time only (what it raises is not kept)."""
        with self._lock:
            found = self._timelines.get(spec.open)
        if found is None:
            found = spec.open()  # outside the lock: `keep` on the GUI thread must never wait for a file
            with self._lock:
                self._timelines[spec.open] = found
        return found

    def keep(self, specs: Sequence[ModelSpec]) -> None:
        """Forget the timelines of specs not in `specs` (a model removed from the list)."""
        listed = {s.open for s in specs}
        with self._lock:
            for key in [k for k in self._timelines if k not in listed]:
                del self._timelines[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._timelines)


@dataclass(frozen=True)
class ModelResult:
    """What one model measured: whole-text metrics, and per document when asked; or an error."""

    model: str
    step: int | None = None
    metrics: Metrics | None = None
    documents: tuple[Metrics, ...] = ()  # one per document, in order
    premiums: tuple[float | None, ...] = ()  # tokens over the reference document's
    gini: float | None = None  # of the premiums
    error: str | None = None


@dataclass(frozen=True)
class CompareEvent:
    """Progress: model `model_index` has done `done` of `total` units (documents, or 1)."""

    model_index: int
    n_models: int
    done: int
    total: int
    result: ModelResult | None = None  # set on the model's last event
    rows: tuple[Metrics, ...] = ()  # the documents ``done - len(rows)`` to ``done - 1``, measured since the last event


@dataclass(frozen=True)
class CompareBatch:
    """What a comparison finished since its last batch, for a view that fills in while it runs: the
    documents (on the first batch of a run by document), rows of documents measured per model, and
    the results of the models that ended."""

    documents: tuple[Document, ...] | None = None
    reference: int | None = None  # index of the reference document, with `documents`
    rows: tuple[tuple[int, int, tuple[Metrics, ...]], ...] = ()  # (model index, first document index, metrics)
    results: tuple[tuple[int, ModelResult], ...] = ()  # (model index, its result)


@dataclass(frozen=True)
class Comparison:
    """Every model's result, in the order given, and the documents they were measured on."""

    results: tuple[ModelResult, ...]
    documents: tuple[Document, ...] = ()
    reference: int | None = None  # index of the reference document


def prepare_documents(text: str | TextSource, reference: int | str | None = None) -> tuple[list[Document], int]:
    """The documents of `text` (a string or a `TextSource`, read once, piece by piece) with their
    dominant scripts, and the reference's index."""
    splitter, counter = DocumentSplitter(), ScriptCounter()
    docs: list[Document] = []
    chars: dict[int, int] = {}  # code point -> occurrences in the current document

    def close(d: Document) -> None:
        nonlocal chars
        docs.append(replace(d, script=counter.dominant_of(chars)))
        chars = {}

    offset = 0
    for piece in as_source(text).pieces():
        a = 0
        for d in splitter.feed(piece):
            counter.tally(piece[a:d.end - offset], chars)
            close(d)
            a = d.end - offset
        counter.tally(piece[a:], chars)
        offset += len(piece)
    close(splitter.finish())
    return docs, find_reference(docs, reference)


class _DocumentRows:
    """Per-document metrics of a text measured piece by piece: a document inside one piece is
    measured there, one that goes on into the next piece is summed (`MetricsSum`)."""

    def __init__(self, model: ModelFacts, documents: Sequence[Document], alphas: Sequence[float] = (RENYI_ALPHA,)) -> None:
        self.model, self.documents, self.alphas = model, documents, alphas
        self.rows: list[Metrics] = []
        self.open: MetricsSum | None = None  # the current document's sum so far, when it began earlier

    def add(self, piece: EncodedPiece, continued: np.ndarray, tallies: PieceTallies) -> None:
        """Measure the parts of the documents in `piece`; `continued` marks each of its words,
        `tallies` holds its counts by position.
        A token counts in the document where it starts, as in one encoding of the whole text."""
        facts, pos, model = piece.facts, piece.positions, self.model
        start, end = piece.offset, piece.offset + len(facts.text)
        while len(self.rows) < len(self.documents) and self.documents[len(self.rows)].start < end:
            d = self.documents[len(self.rows)]
            c0, c1 = max(d.start, start) - start, min(d.end, end) - start
            t0 = int(np.searchsorted(pos.starts, pos.position(facts, c0), "left"))
            t1 = len(pos.ids) if d.end >= end else int(np.searchsorted(pos.starts, pos.position(facts, c1), "left"))
            w0, w1 = facts.word_range(c0, c1)
            part = {"chars": c1 - c0, "n_bytes": facts.n_bytes(c0, c1), "words": w1 - w0,
                    "continued": int(continued[w0:w1].sum()), "tally": tallies.tally(c0, c1, t0, t1)}
            if d.end <= end and self.open is None:  # all of it in this piece
                self.rows.append(compute_metrics(pos.ids[t0:t1], vocab_size=model.vocab_size, unk_ids=model.unk_ids,
                                                 byte_ids=model.byte_ids, alphas=self.alphas, **part))
                continue
            if self.open is None:
                self.open = MetricsSum(vocab_size=model.vocab_size, unk_ids=model.unk_ids, byte_ids=model.byte_ids,
                                       alphas=self.alphas)
            self.open.add(pos.ids[t0:t1], **part)
            if d.end > end:
                return  # it goes on in the next piece
            self.rows.append(self.open.metrics())
            self.open = None


def _measure(spec: ModelSpec, source: TextSource, documents: Sequence[Document],
             reference: int, alphas: Sequence[float] = (RENYI_ALPHA,),
             facts_of: Callable[[str], TextFacts] = text_facts) -> Iterator[int | ModelResult]:
    """Yield ``(documents done so far, the last one's metrics)`` as each document is measured, then the
    model's result. Each item is computed with the cyclic collector paused (`paused_gc`): opening
    a model and encoding a text make millions of small objects and no cycle, and the collector's
    passes over the growing caches took a seventh of a model's time on udhr2."""
    return paused_gc(_measured(spec, source, documents, reference, alphas, facts_of))


def _measured(spec: ModelSpec, source: TextSource, documents: Sequence[Document], reference: int,
              alphas: Sequence[float], facts_of: Callable[[str], TextFacts]) -> Iterator[int | ModelResult]:
    model = model_facts(spec.open(), spec.step)
    whole = MetricsSum(vocab_size=model.vocab_size, unk_ids=model.unk_ids, byte_ids=model.byte_ids, alphas=alphas)
    rows = _DocumentRows(model, documents, alphas)
    utf8 = utf8_tables(model.vocab)
    for piece in encoded_pieces(model, source, facts_of=facts_of):
        facts, pos = piece.facts, piece.positions
        ws, we = pos.word_bounds(facts)
        overlaps = Overlaps(pos.starts, pos.ends)
        word_tokens = overlaps(ws, we)  # (words,) tokens overlapping each
        continued = word_tokens >= 2
        tallies = PieceTallies(facts, pos, word_tokens, utf8, overlaps)
        whole.add(pos.ids, chars=len(facts.text), n_bytes=facts.n_bytes(), words=facts.n_words,
                  continued=int(continued.sum()), tally=tallies.tally())
        before = len(rows.rows)
        rows.add(piece, continued, tallies)
        yield from ((n, rows.rows[n - 1]) for n in range(before + 1, min(len(rows.rows), len(documents) - 1) + 1))
    if not documents:
        yield ModelResult(spec.label, spec.step, whole.metrics())
        return
    if not rows.rows:  # an empty text: its one empty document
        rows.rows.append(whole.metrics())
    prem = premiums([m.tokens for m in rows.rows], reference)
    yield ModelResult(spec.label, spec.step, whole.metrics(), tuple(rows.rows), tuple(prem), gini(prem))


def iter_compare(
    text: str | TextSource,
    models: Sequence[ModelSpec],
    *,
    by_document: bool = False,
    reference: int | str | None = None,
    documents: Sequence[Document] | None = None,
    processes: int = 1,
    renyi_alphas: Sequence[float] = (RENYI_ALPHA,),
) -> Iterator[CompareEvent]:
    """Measure each model on `text` (module doc); with `by_document`, per document too.

    `text` is a string or a `TextSource` (a file read piece by piece, once per model);
    `documents` (from `prepare_documents`) saves splitting again; `reference` picks the
    premiums' reference document (`documents.find_reference`); `processes`: how many processes
    may measure models side by side (`tokviz.core.processes.parallel`); `renyi_alphas`: the Rényi orders (the first is
    ``renyi_efficiency``'s, `metrics.metric_keys`). Errors of one model go into
    its result; a bad `reference` raises `TokvizError` before any model runs.
    """
    source = as_source(text)
    docs: Sequence[Document] = ()
    ref = 0
    if by_document:
        if documents is None:
            docs, ref = prepare_documents(source, reference)
        else:
            docs, ref = documents, find_reference(documents, reference)
    total = max(1, len(docs))
    for k, (spec, items) in enumerate(zip(models, _model_items(models, source, docs, ref, processes, renyi_alphas))):
        result, sent = None, 0
        try:
            for item in items:
                if isinstance(item, ModelResult):
                    result = item
                elif isinstance(item, Failed):
                    result = ModelResult(spec.label, spec.step, error=item.message)
                else:
                    sent, row = item
                    yield CompareEvent(k, len(models), sent, total, rows=(row,))
        except (TokvizError, OSError, MemoryError) as exc:
            result = ModelResult(spec.label, spec.step, error=failure_message(exc))
        yield CompareEvent(k, len(models), total, total, result, rows=result.documents[sent:])


def _model_items(models: Sequence[ModelSpec], source: TextSource, docs: Sequence[Document], ref: int,
                 processes: int, alphas: Sequence[float]) -> Iterator[Iterator[object]]:
    """Each model's `_measure` items, the text read in pieces of `SIDE_PIECE_SIZE` and each model
    readied for the text's first whole piece (`_open_ready`), encoding with one process (two halves
    of a piece saved no time and took a third more CPU: the metrics after the encoding run on one
    core). Two models or more given two processes or more: measured side by side in forked children
    where forking is safe (`side_by_side`), one more child than processes (three models on two
    cores: all three at once take three quarters of the time of two at once, then one alone) while
    the free memory holds `CHILD_BYTES` for each; else one after the other here."""
    small = source.smaller(SIDE_PIECE_SIZE)  # memory follows the pieces
    specs = [replace(spec, open=partial(_open_ready, spec.open, source)) for spec in models]
    if len(models) > 1 and usable(processes) > 1:
        free = available_memory()
        children = usable(processes) + 1 if free is None else max(2, min(usable(processes) + 1, free // CHILD_BYTES))
        first = _opened_here(specs[0])
        decimal_digits.warm_up()  # the numbers' table, made once for every child
        if first is not None:
            specs[0] = replace(specs[0], open=lambda: first)
        yield from side_by_side([partial(_measure, spec, small, docs, ref, alphas) for spec in specs], children)
        return
    facts_of = FactsCache() if len(models) > 1 else text_facts  # what depends only on the text: once
    for spec in specs:
        yield _measure(spec, small, docs, ref, alphas, facts_of)


def _open_ready(open_timeline: Callable[[], object], source: TextSource):
    """A timeline opened and readied for the text's first piece, of the size a whole run reads
    (`prepare_for`: a child's pieces are smaller, and the compiled merge loop repays itself on the
    whole text, not on one small piece)."""
    timeline = open_timeline()
    timeline.tokenizer().prepare_for(next(iter(source.pieces()), ""))
    return timeline


def _opened_here(spec: ModelSpec):
    """`spec`'s timeline opened here, before the children fork: they inherit the modules it
    imported and the compiled code it loaded (each would load them again: 0.4 s of CPU for a
    tiktoken file on udhr2), its own child the opened model. None when it fails to open (its
    child opens it again and reports why)."""
    try:
        return spec.open()
    except (TokvizError, OSError, MemoryError):
        return None


def compare(
    text: str,
    models: Sequence[ModelSpec],
    *,
    by_document: bool = False,
    reference: int | str | None = None,
) -> Comparison:
    """Drain `iter_compare` into a `Comparison`.

    >>> from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
    >>> from tokviz.core.explain.loaded_timeline import as_timeline
    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    >>> tl = as_timeline(RankBpeTokenizer(ranks, pattern=r"\\S+|\\s+"))
    >>> r = compare("ab abc", [ModelSpec("toy", lambda: tl)]).results[0]
    >>> r.metrics.tokens, r.metrics.fertility, r.metrics.continued_words
    (4, 2.0, 0.5)
    """
    docs: tuple[Document, ...] = ()
    ref: int | None = None
    if by_document:
        found, ref = prepare_documents(text, reference)
        docs = tuple(found)
    results = [e.result for e in iter_compare(text, models, by_document=by_document, documents=docs or None,
                                              reference=reference) if e.result is not None]
    return Comparison(tuple(results), docs, ref)
