"""Pretrained tokenizers: load real ones with exact id parity, explain them, export ours.

`load_tokenizer(path_or_name)` opens tiktoken ``.tiktoken`` files and names (``cl100k_base``),
GPT-2's ``encoder.json`` + ``vocab.bpe``, Hugging Face ``tokenizer.json`` (byte-level BPE,
BPE with byte fallback and ``▁``, WordPiece), minbpe ``.model`` files and tokviz model files.
Every tokenizer is encoded by tokviz's own code (tiktoken and tokenizers are never needed) and
shares `BpeTokenizer`'s grid: `encode`, `encode_ordinary`, `encode_ids`, `decode`,
`decode_bytes`, `decode_tokens_bytes`, `decode_with_offsets`, `explain`, ``n_vocab``,
`token_bytes`, ``name``, ``step=k`` for the first k merges.

Explaining: `merge_list` (the merge timeline), `merge_tree`, `find_unreachable`, `find_unused`,
`VocabIndex`. Exporting a timeline trained in tokviz lives in `tokviz.core.io.tokenizer_export`.
"""

from .common import LoadedMerge, PatternRequired
from .data_gym import load_data_gym
from .explain import (
    GlitchToken,
    MergeTree,
    find_unreachable,
    find_unused,
    merge_list,
    merge_of,
    merge_tree,
    token_counts,
)
from .hf.normalizers import UnsupportedComponent
from .hf.tokenizer import HfTokenizer
from .loaded_timeline import LazyMerges, LoadedSettings, LoadedTimeline, as_timeline, open_timeline
from .loader import (
    KnownTokenizer,
    is_tokviz_model,
    known_tokenizers,
    load_by_name,
    load_tiktoken,
    load_tokenizer,
    open_model,
)
from .minbpe import load_minbpe, parse_minbpe
from .rank_bpe import RankBpeTokenizer
from .tiktoken_files import KNOWN_ENCODINGS, KnownEncoding, find_encoding_file, read_tiktoken_file
from .vocab_view import FILTERS, SORT_KEYS, VocabEntry, VocabIndex, token_flags

__all__ = [name for name in dir() if not name.startswith("_")]
