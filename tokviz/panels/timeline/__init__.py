"""The merge timeline: transport, charts, candidates, the corpus at step k, merge trees, and the
WordPiece and Unigram views.

Panel layer: may import tokviz.engine and tokviz.core, never tokviz.app.
"""
