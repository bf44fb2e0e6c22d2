"""The tokenization core: pure Python + numpy + regex, no Qt.

Training (`Training`, `train`, a generator of `MergeStep`), encoding with offsets
(`BpeTokenizer`, `Encoding`), baselines, batches and model files. Panels and the CLI sit on top.
"""

from .baselines import CharTokenizer, WordTokenizer
from .batch import Batch, make_batch
from .chunks import Cancelled, count_chunks, count_word_table
from .corpus import decode_utf8, looks_like_word_counts, parse_word_counts, read_text
from .encoding import Encoding
from .errors import (
    CorpusError,
    EncodeError,
    ModelFormatError,
    SettingsError,
    SplitError,
    TokvizError,
)
from .model_io import load_timeline, save_timeline
from .split import (
    GPT2_SPLIT_PATTERN,
    GPT4_SPLIT_PATTERN,
    O200K_SPLIT_PATTERN,
    SPLIT_PRESETS,
    Splitter,
    parse_split,
)
from .timeline import Timeline, Training, TrainSettings, merge_budget, train
from .tokenizer import BpeTokenizer, ExplainStep
from .train_bpe import BpeTrainer, Candidate, MergeStep
from .units import UNITS, UNK_TOKEN, BaseVocab

__all__ = [
    "BaseVocab",
    "Batch",
    "BpeTokenizer",
    "BpeTrainer",
    "Cancelled",
    "Candidate",
    "CharTokenizer",
    "CorpusError",
    "EncodeError",
    "Encoding",
    "ExplainStep",
    "GPT2_SPLIT_PATTERN",
    "GPT4_SPLIT_PATTERN",
    "MergeStep",
    "ModelFormatError",
    "O200K_SPLIT_PATTERN",
    "SPLIT_PRESETS",
    "SettingsError",
    "SplitError",
    "Splitter",
    "Timeline",
    "TokvizError",
    "TrainSettings",
    "Training",
    "UNITS",
    "UNK_TOKEN",
    "WordTokenizer",
    "count_chunks",
    "count_word_table",
    "decode_utf8",
    "load_timeline",
    "looks_like_word_counts",
    "make_batch",
    "merge_budget",
    "parse_split",
    "parse_word_counts",
    "read_text",
    "save_timeline",
    "train",
]
