"""The tokenization core: pure Python + numpy + regex, no Qt.

Training (`Training`, `train`, a generator of `MergeStep`), encoding with offsets
(`BpeTokenizer`, `Encoding`), baselines, batches and model files. Panels and the CLI sit on top.

The names are imported from their modules when first used (PEP 562): a command that needs one
submodule (``tokviz encode`` reads a file and a tokenizer) does not load numpy and every trainer.
"""

from __future__ import annotations

from tokviz.core.lazy_names import lazy_names

_WHERE = {  # name -> the module that defines it
    "CharTokenizer": ".baselines",
    "WordTokenizer": ".baselines",
    "Batch": ".batch",
    "make_batch": ".batch",
    "Timeline": ".bpe.timeline",
    "TrainSettings": ".bpe.settings",
    "Training": ".bpe.timeline",
    "merge_budget": ".bpe.timeline",
    "train": ".bpe.timeline",
    "BpeTokenizer": ".bpe.tokenizer",
    "ExplainStep": ".bpe.tokenizer",
    "BpeTrainer": ".bpe.trainer",
    "Candidate": ".bpe.trainer",
    "MergeStep": ".bpe.trainer",
    "BaseVocab": ".bpe.units",
    "UNITS": ".bpe.units",
    "UNK_TOKEN": ".algorithm.records",
    "Encoding": ".encoding",
    "CorpusError": ".errors",
    "EncodeError": ".errors",
    "ModelFormatError": ".errors",
    "SettingsError": ".errors",
    "SplitError": ".errors",
    "TokvizError": ".errors",
    "load_timeline": ".model_files",
    "save_timeline": ".model_files",
    "Cancelled": ".errors",
    "count_chunks": ".text.chunks",
    "count_word_table": ".text.chunks",
    "decode_utf8": ".text.corpus",
    "looks_like_word_counts": ".text.corpus",
    "parse_word_counts": ".text.corpus",
    "read_text": ".text.corpus",
    "GPT2_SPLIT_PATTERN": ".text.split",
    "GPT4_SPLIT_PATTERN": ".text.split",
    "O200K_SPLIT_PATTERN": ".text.split",
    "SPLIT_PRESETS": ".text.split",
    "Splitter": ".text.split",
    "parse_split": ".text.split",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
