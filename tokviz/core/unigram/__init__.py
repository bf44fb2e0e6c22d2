"""Unigram (SentencePiece style): training rounds (`trainer`, `lattice`), the timeline and model
files (`timeline`), and Viterbi/n-best/sampled encoding (`tokenizer`).

Core: may import `text`, `algorithm`, `encoding`, `errors`; no Qt.
"""
