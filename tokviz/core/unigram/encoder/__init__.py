"""The Unigram encoder every Unigram tokenizer runs: trained ones (`tokviz.core.unigram.tokenizer`),
SentencePiece ``.model`` files and Hugging Face ``Unigram`` models (`tokviz.core.formats`).

`lattice.PieceLattice` holds the pieces and their scores and finds the best path (Viterbi) with
each library's own arithmetic: float32 with sentencepiece's resets (`F32_SP`), doubles as
tokenizers adds them (`F64`), or exact integers (`INT`, trained models' scores in 2**-20 nat). The
rest is how it is fast: `viterbi` (one segment in plain Python), `batch` and `piece_hashes` (many
segments at once in numpy), `scan` (a long text's segments), `segments` (where a text can be cut),
`kernels` (the compiled Viterbi, numba). Core: numpy; no Qt.

What this leaves out: the training lattices (`tokviz.core.unigram.lattice`), n-best and sampling
(on a word's edges, `tokviz.core.unigram.tokenizer`), what a file's pieces mean (the tokenizers).
"""

from .lattice import F32_SP, F64, INT, PieceLattice

__all__ = ["F32_SP", "F64", "INT", "PieceLattice"]
