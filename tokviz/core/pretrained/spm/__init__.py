"""SentencePiece ``.model`` files read and run by tokviz's own code (no sentencepiece, no protobuf).

`SentencePieceTokenizer` (Unigram and BPE models, byte fallback, user-defined and control
symbols, the normalizer's precompiled charsmap), built from `proto` (the wire format), `charsmap`
(the double-array trie), `normalizer`, `lattice` (the exact Unigram Viterbi, also used for
Hugging Face Unigram models) and `bpe` (score-ordered merging).

Core: no Qt.
"""

from .charsmap import CharsMap
from .lattice import F32_SP, F64, PieceLattice
from .normalizer import SpNormalizer
from .proto import ModelProto, parse_model_proto
from .tokenizer import SentencePieceTokenizer

__all__ = ["CharsMap", "F32_SP", "F64", "ModelProto", "PieceLattice", "SentencePieceTokenizer", "SpNormalizer",
           "parse_model_proto"]
