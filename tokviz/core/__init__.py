"""The tokenization core: pure Python + numpy + regex, no Qt.

Training (`Training`, `train`, a generator of `MergeStep`), encoding with offsets
(`BpeTokenizer`, `Encoding`), baselines, batches and model files. Panels and the CLI sit on top.
"""

from .baselines import CharTokenizer, WordTokenizer
from .batch import Batch, make_batch
from .bpe.timeline import Timeline, Training, TrainSettings, merge_budget, train
from .bpe.tokenizer import BpeTokenizer, ExplainStep
from .bpe.trainer import BpeTrainer, Candidate, MergeStep
from .bpe.units import UNITS, UNK_TOKEN, BaseVocab
from .encoding import Encoding
from .errors import CorpusError, EncodeError, ModelFormatError, SettingsError, SplitError, TokvizError
from .io.model_files import load_timeline, save_timeline
from .text.chunks import Cancelled, count_chunks, count_word_table
from .text.corpus import decode_utf8, looks_like_word_counts, parse_word_counts, read_text
from .text.split import (
    GPT2_SPLIT_PATTERN,
    GPT4_SPLIT_PATTERN,
    O200K_SPLIT_PATTERN,
    SPLIT_PRESETS,
    Splitter,
    parse_split,
)

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
