"""Parity-aware BPE: each merge chosen for the language a multi-parallel corpus currently encodes worst.

`reference` (the readable rule, the one to study first), `trainer` (the steps), `pairs` (all
documents' pairs in one incremental state), `timeline` (settings, the training run, the timeline), `costs` (tokens per document at
every step, premiums, Gini), `model_file` (the ``tokviz-parity-bpe`` format). No printing, no Qt.
"""

from .costs import CostTable, Parity
from .reference import GLOBAL, reference_train
from .timeline import FORMAT_NAME, ParitySettings, ParityTimeline, ParityTraining, train
from .trainer import ParityStep, ParityTrainer

__all__ = [name for name in dir() if not name.startswith("_")]
