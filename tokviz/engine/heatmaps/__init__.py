"""Heatmaps and embeddings in the background: the heatmap engine, recycled matrix memory, the
embedding training process (`embedding_child` imports no Qt) and its tokenized corpus.

Engine layer: QtCore and tokviz.core only.
"""
