"""Tokenizer efficiency metrics: compare models on a text or a multilingual corpus.

`compare(text, [ModelSpec(label, open, step), ...])` measures each model (`Metrics`: tokens,
chars, bytes, words, chars/bytes per token, fertility, continued words, vocabulary used, Rényi
efficiency, unknown and byte-fallback rates); with ``by_document=True`` also each document
(`split_documents`), its dominant script, the token premiums against a reference document and
their Gini coefficient. `iter_compare` is the same work as a generator of progress events, for
a caller that may stop between documents. The text may be a `FileSource`: it is read, encoded
and measured piece by piece (`source`, `seams`, `MetricsSum`), with the figures of measuring it
whole. Pure Python + numpy + regex; no printing, no Qt.
"""

from .documents import (
    DEFAULT_REFERENCE_TITLE,
    Document,
    DocumentSplitter,
    find_reference,
    gini,
    premiums,
    split_documents,
)
from .metrics import (
    METRIC_KEYS,
    RENYI_ALPHA,
    Metrics,
    MetricsSum,
    TextFacts,
    compute_metrics,
    renyi_efficiency,
    text_facts,
)
from .run import (
    CompareBatch,
    CompareEvent,
    Comparison,
    ModelResult,
    ModelSpec,
    OpenedModels,
    compare,
    iter_compare,
    prepare_documents,
)
from .scripts import ScriptCounter, scripts_of
from .seams import EncodedPiece, encoded_pieces
from .source import FileSource, StringSource, TextSource, as_source
from .tokens import ModelFacts, TokenPositions, encode_positions, model_facts

__all__ = [name for name in dir() if not name.startswith("_")]
