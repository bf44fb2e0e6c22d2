"""Unigram (SentencePiece style). Read `reference` first: seed, EM, pruning and Viterbi in plain
Python. Then the array trainer (`trainer`, `lattice`, kept as arrays by `rounds`), the timeline and
model files (`timeline`), and Viterbi/n-best/sampled encoding (`tokenizer`).

Core: may import `text`, `algorithm`, `encoding`, `errors`; no Qt.
"""
