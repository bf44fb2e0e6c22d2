"""Tokenizer efficiency metrics: compare models on a text or a multilingual corpus.

`compare(text, [ModelSpec(label, open, step), ...])` measures each model (`Metrics`: tokens,
chars, bytes, words, chars/bytes per token, fertility, continued words, vocabulary used, Rényi
efficiency, unknown and byte-fallback rates); with ``by_document=True`` also each document
(`split_documents`), its dominant script, the token premiums against a reference document and
their Gini coefficient. `iter_compare` is the same work as a generator of progress events, for
a caller that may stop between documents. The text may be a `FileSource`: it is read, encoded
and measured piece by piece (`source`, `seams`, `MetricsSum`), with the figures of measuring it
whole. Pure Python + numpy + regex; no printing, no Qt.

The names are imported from their modules when first used (PEP 562): the parity-aware trainer's
Gini needs `documents` alone, not every metric.
"""

from __future__ import annotations

from tokviz.core.lazy_names import lazy_names

_WHERE = {  # name -> the module that defines it
    "DEFAULT_REFERENCE_TITLE": ".documents",
    "Document": ".documents",
    "DocumentSplitter": ".documents",
    "find_reference": ".documents",
    "gini": ".documents",
    "premiums": ".documents",
    "split_documents": ".documents",
    "METRIC_KEYS": ".metrics",
    "RENYI_ALPHA": ".metrics",
    "Metrics": ".metrics",
    "MetricsSum": ".metrics",
    "TextFacts": ".metrics",
    "compute_metrics": ".metrics",
    "renyi_efficiency": ".metrics",
    "text_facts": ".metrics",
    "CompareBatch": ".run",
    "CompareEvent": ".run",
    "Comparison": ".run",
    "ModelResult": ".run",
    "ModelSpec": ".run",
    "OpenedModels": ".run",
    "compare": ".run",
    "iter_compare": ".run",
    "prepare_documents": ".run",
    "ScriptCounter": ".scripts",
    "scripts_of": ".scripts",
    "EncodedPiece": ".seams",
    "encoded_pieces": ".seams",
    "FileSource": ".source",
    "StringSource": ".source",
    "TextSource": ".source",
    "as_source": ".source",
    "ModelFacts": ".tokens",
    "TokenPositions": ".tokens",
    "encode_positions": ".tokens",
    "model_facts": ".tokens",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
