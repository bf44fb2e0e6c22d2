"""Pretrained tokenizers: load real ones with exact id parity, explain them, export ours.

`load_tokenizer(path_or_name)` opens tiktoken ``.tiktoken`` files and names (``cl100k_base``),
GPT-2's ``encoder.json`` + ``vocab.bpe``, Hugging Face ``tokenizer.json`` (byte-level BPE,
BPE with byte fallback and ``▁``, WordPiece, Unigram, WordLevel), SentencePiece and minbpe
``.model`` files, ``hf:ORG/NAME`` from the Hugging Face cache and tokviz model files.
Every tokenizer is encoded by tokviz's own code (tiktoken and tokenizers are never needed) and
shares `BpeTokenizer`'s grid: `encode`, `encode_ordinary`, `encode_ids`, `decode`,
`decode_bytes`, `decode_tokens_bytes`, `decode_with_offsets`, `explain`, ``n_vocab``,
`token_bytes`, ``name``, ``step=k`` for the first k merges.

Explaining: `merge_list` (the merge timeline), `merge_tree`, `find_unreachable`, `find_unused`,
`VocabIndex`. Exporting a timeline trained in tokviz lives in `tokviz.core.saved.tokenizer_export`.

The names below are imported from their modules when first used (PEP 562): importing one
submodule, or the package for one name, does not load every reader (the window starts faster).
"""

from __future__ import annotations

from tokviz.core.lazy_names import lazy_names

_WHERE = {  # name -> the module that defines it
    "LoadedMerge": ".common",
    "PatternRequired": ".common",
    "load_data_gym": ".data_gym",
    "GlitchToken": ".explain",
    "MergeTree": ".explain",
    "find_unreachable": ".explain",
    "find_unused": ".explain",
    "merge_list": ".explain",
    "merge_of": ".explain",
    "merge_tree": ".explain",
    "token_counts": ".explain",
    "UnsupportedComponent": ".hf.normalizers",
    "HfTokenizer": ".hf.tokenizer",
    "LazyMerges": ".loaded_timeline",
    "LoadedSettings": ".loaded_timeline",
    "LoadedTimeline": ".loaded_timeline",
    "as_timeline": ".loaded_timeline",
    "is_tokviz_model": ".loader",
    "open_model": ".loader",
    "open_timeline": ".loaded_timeline",
    "KnownTokenizer": ".tiktoken_files",
    "known_tokenizers": ".tiktoken_files",
    "load_by_name": ".loader",
    "load_tiktoken": ".loader",
    "load_tokenizer": ".loader",
    "load_minbpe": ".minbpe",
    "parse_minbpe": ".minbpe",
    "RankBpeTokenizer": ".rank_bpe",
    "KNOWN_ENCODINGS": ".tiktoken_files",
    "KnownEncoding": ".tiktoken_files",
    "find_encoding_file": ".tiktoken_files",
    "read_tiktoken_file": ".tiktoken_files",
    "FILTERS": ".vocab_view",
    "SORT_KEYS": ".vocab_view",
    "VocabEntry": ".vocab_view",
    "VocabIndex": ".vocab_view",
    "token_flags": ".vocab_view",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
