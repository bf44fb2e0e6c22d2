"""The algorithm abstraction: the protocols every tokenizer and trainer implements (`protocol`),
the one registry that maps algorithm names to them (`registry`), and the encode/decode grid of
vocabulary-based tokenizers shared by WordPiece and Unigram (`piece_tokenizer`, `piece_replay`).

Core: no Qt.
"""
