"""Parity-aware BPE: each merge chosen for the language a multi-parallel corpus currently encodes worst.

`reference` (the readable rule, the one to study first), `trainer` (the steps), `pairs` (all
documents' pairs in one incremental state), `settings` (every option), `timeline` (the training
run, the timeline), `costs` (tokens per document at every step, premiums, Gini), `model_file` (the
``tokviz-parity-bpe`` format). No printing, no Qt.
"""

from tokviz.core.lazy_names import lazy_names

# each public name and the module that holds it, imported on first use: the settings alone
# (the command line's help, the training panel) load no trainer
_WHERE = {
    "CostTable": ".costs", "Parity": ".costs", "GLOBAL": ".reference", "reference_train": ".reference",
    "FORMAT_NAME": ".settings", "ParitySettings": ".settings",
    "ParityTimeline": ".timeline", "ParityTraining": ".timeline", "train": ".timeline",
    "ParityStep": ".trainer", "ParityTrainer": ".trainer",
}
__all__ = [  # the names of `_WHERE`
    "FORMAT_NAME",
    "GLOBAL",
    "CostTable",
    "Parity",
    "ParitySettings",
    "ParityStep",
    "ParityTimeline",
    "ParityTrainer",
    "ParityTraining",
    "reference_train",
    "train",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
