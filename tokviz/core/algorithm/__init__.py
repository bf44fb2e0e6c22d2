"""The algorithm abstraction: the protocols every tokenizer and trainer implements (`protocol`),
the records a replay of step k shows for every algorithm (`records`), the declared settings
(`options`), the staged training run (`staged`), the merge-step list (`merge_steps`) and the
encode/decode grid of the vocabulary-based tokenizers WordPiece and Unigram share (`piece_tokenizer`).

Nothing here imports an algorithm: every algorithm may import this folder. The registry that maps
names to algorithms is a floor higher (`tokviz.core.registry`).

Core: no Qt.
"""
