"""SentencePiece ``.model`` files read and run by tokviz's own code (no sentencepiece, no protobuf).

Read `reader` first: the file is one protobuf ``ModelProto`` parsed by hand (`proto`) into a
`SentencePieceModel`. `SentencePieceTokenizer` (`tokenizer`: Unigram and BPE models, byte fallback,
user-defined and control symbols) runs it with the normalizer's precompiled charsmap (`charsmap`,
`normalizer`), the exact Unigram Viterbi every Unigram tokenizer shares (`tokviz.core.unigram.encoder`)
and SentencePiece's score-ordered BPE (`bpe`); `decode` and `piece_checks` do what their names say.

The names below are imported from their modules when first used: reading a file's header does not
load numpy or the lattice.
"""

from __future__ import annotations

from tokviz.core.lazy_names import lazy_names

_WHERE = {
    "CharsMap": ".charsmap",
    "F32_SP": "tokviz.core.unigram.encoder.lattice",
    "F64": "tokviz.core.unigram.encoder.lattice",
    "ModelProto": ".proto",
    "PieceLattice": "tokviz.core.unigram.encoder.lattice",
    "SentencePieceTokenizer": ".tokenizer",
    "SpNormalizer": ".normalizer",
    "parse_model_proto": ".proto",
    "read_sentencepiece": ".reader",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
