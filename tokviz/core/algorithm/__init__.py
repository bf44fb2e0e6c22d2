"""The algorithm abstraction: the protocols every tokenizer and trainer implements (`protocol`),
the one registry that maps algorithm names to them (`registry`), the records a replay of step k
shows for every algorithm (`records`), and the encode/decode grid of the vocabulary-based
tokenizers WordPiece and Unigram share (`piece_tokenizer`), and the garbage-collector pause their
trainers run under (`gc_pause`).

`protocol` and `records` import nothing of tokviz, so every algorithm may import them; `registry`
imports the algorithms.

Core: no Qt.
"""
