"""Token embeddings for the similarity view: tables, similarity, and a tiny trained model.

One import for the panel and engine; the code lives in three small modules:

- `tokviz.core.embeddings.table`: `EmbeddingTable` (random, loaded from ``.npy``, saved), parameter
  counts and `REFERENCE_MODELS` (GPT-2, Llama 2) with `embedding_share`;
- `tokviz.core.embeddings.similarity`: `cosine_similarity`, `nearest_neighbours`,
  `reorder_for_similarity`, `compute_similarity` (a `SimilarityView`), `most_frequent_ids`;
- `tokviz.core.embeddings.training`: `EmbedTrainer`, a generator of frozen `EmbedStep` records that a
  worker can cancel between steps, and `train_embeddings` that drains it.

Example (all numpy, no Qt)::

    table = train_embeddings(sequences, n_vocab=tok.n_vocab, settings=EmbedTrainSettings(dim=32))
    ids = most_frequent_ids(sequences, 50)
    S = cosine_similarity(table, ids)
    order = reorder_for_similarity(S)
    heatmap = S[order][:, order]
"""

from __future__ import annotations

from .similarity import (
    SimilarityView,
    compute_similarity,
    cosine_similarity,
    most_frequent_ids,
    nearest_neighbours,
    reorder_for_similarity,
)
from .table import (
    MAX_EMBED_DIM,
    REFERENCE_MODELS,
    EmbeddingTable,
    ReferenceModel,
    check_table_shape,
    embedding_share,
    gpt2_parameter_count,
)
from .training import EmbedStep, EmbedTrainer, EmbedTrainSettings, token_pairs, train_embeddings

__all__ = [
    "MAX_EMBED_DIM", "REFERENCE_MODELS", "EmbedStep", "EmbedTrainSettings", "EmbedTrainer",
    "EmbeddingTable", "ReferenceModel", "SimilarityView", "check_table_shape", "compute_similarity", "cosine_similarity", "embedding_share",
    "gpt2_parameter_count", "most_frequent_ids", "nearest_neighbours", "reorder_for_similarity",
    "token_pairs", "train_embeddings",
]
