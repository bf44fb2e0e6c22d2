"""Compare many tokenizers on one text, as a generator a caller can stop between documents.

``iter_compare(text, models)`` yields a `CompareEvent` after each document of each model (and
once per model when documents are off); the event of a model's last piece of work carries its
`ModelResult`. The CLI drains it; a GUI worker iterates it on a thread and stops between two
events when cancelled (encoding one whole text is the longest step: about a second for 5 MB).
`compare()` drains it into a `Comparison`.

Each model is a `ModelSpec`: a label, a function that opens its timeline, and a step. A model
that fails to open or to encode (any `TokvizError` or `OSError`) gets a result with `error` set
and the others still run; one model open at a time, so a big one is freed before the next loads.

Per document: the whole text is encoded once per model and each token is counted in the
document where it starts (tokens never cross a title line's start in practice: the line break
before it ends every split chunk). So the documents' token counts add up to the whole text's,
and ``continued_words`` always refers to the whole-text encoding.
What this leaves out: reading files and resolving model names (the CLI's job), formatting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import TokvizError

from .documents import Document, find_reference, gini, premiums, split_documents
from .metrics import Metrics, TextFacts, compute_metrics, text_facts, token_counts_per_word
from .scripts import ScriptCounter
from .tokens import ModelFacts, TokenPositions, encode_positions, model_facts


@dataclass(frozen=True)
class ModelSpec:
    """One model to compare: `open()` returns its timeline; `step` None = the finished model."""

    label: str
    open: Callable[[], object]
    step: int | None = None


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


@dataclass(frozen=True)
class Comparison:
    """Every model's result, in the order given, and the documents they were measured on."""

    results: tuple[ModelResult, ...]
    documents: tuple[Document, ...] = ()
    reference: int | None = None  # index of the reference document


def prepare_documents(text: str, reference: int | str | None = None) -> tuple[list[Document], int]:
    """The documents of `text` with their dominant scripts, and the reference's index."""
    counter = ScriptCounter()
    docs = [Document(d.number, d.title, d.start, d.end, counter.dominant(text[d.start:d.end]))
            for d in split_documents(text)]
    return docs, find_reference(docs, reference)


def _metrics(model: ModelFacts, facts: TextFacts, pos: TokenPositions, continued: np.ndarray,
             t0: int, t1: int, c0: int, c1: int) -> Metrics:
    """Metrics of tokens ``[t0, t1)`` and chars ``[c0, c1)``; `continued` marks each word."""
    w0, w1 = facts.word_range(c0, c1)
    return compute_metrics(
        pos.ids[t0:t1], chars=c1 - c0, n_bytes=facts.n_bytes(c0, c1), words=w1 - w0,
        continued=int(continued[w0:w1].sum()), vocab_size=model.vocab_size,
        unk_ids=model.unk_ids, byte_ids=model.byte_ids,
    )


def _measure(spec: ModelSpec, facts: TextFacts, documents: Sequence[Document],
             reference: int) -> Iterator[int | ModelResult]:
    """Yield the number of documents done so far, then the model's result."""
    model = model_facts(spec.open(), spec.step)
    pos = encode_positions(model, facts)
    ws, we = pos.word_bounds(facts)
    continued = token_counts_per_word(pos.starts, pos.ends, ws, we) >= 2  # (words,) bool
    n_chars = len(facts.text)
    whole = _metrics(model, facts, pos, continued, 0, len(pos.ids), 0, n_chars)
    if not documents:
        yield ModelResult(spec.label, spec.step, whole)
        return
    cuts = np.searchsorted(pos.starts, [pos.position(facts, d.start) for d in documents[1:]], "left")
    bounds = [0, *cuts.tolist(), len(pos.ids)]
    rows = []
    for i, d in enumerate(documents):
        rows.append(_metrics(model, facts, pos, continued, bounds[i], bounds[i + 1], d.start, d.end))
        if i + 1 < len(documents):
            yield i + 1
    prem = premiums([m.tokens for m in rows], reference)
    yield ModelResult(spec.label, spec.step, whole, tuple(rows), tuple(prem), gini(prem))


def iter_compare(
    text: str,
    models: Sequence[ModelSpec],
    *,
    by_document: bool = False,
    reference: int | str | None = None,
    documents: Sequence[Document] | None = None,
) -> Iterator[CompareEvent]:
    """Measure each model on `text` (module doc); with `by_document`, per document too.

    `documents` (from `prepare_documents`) saves splitting again; `reference` picks the
    premiums' reference document (`documents.find_reference`). Errors of one model go into
    its result; a bad `reference` raises `TokvizError` before any model runs.
    """
    facts = text_facts(text)
    docs: Sequence[Document] = ()
    ref = 0
    if by_document:
        if documents is None:
            docs, ref = prepare_documents(text, reference)
        else:
            docs, ref = documents, find_reference(documents, reference)
    total = max(1, len(docs))
    for k, spec in enumerate(models):
        result = None
        try:
            for item in _measure(spec, facts, docs, ref):
                if isinstance(item, ModelResult):
                    result = item
                else:
                    yield CompareEvent(k, len(models), item, total)
        except (TokvizError, OSError) as exc:
            result = ModelResult(spec.label, spec.step, error=str(exc) or type(exc).__name__)
        except MemoryError:
            result = ModelResult(spec.label, spec.step, error="out of memory")
        yield CompareEvent(k, len(models), total, total, result)


def compare(
    text: str,
    models: Sequence[ModelSpec],
    *,
    by_document: bool = False,
    reference: int | str | None = None,
) -> Comparison:
    """Drain `iter_compare` into a `Comparison`.

    >>> from tokviz.core.pretrained import RankBpeTokenizer, as_timeline
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
