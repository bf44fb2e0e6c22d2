"""BoundlessBPE (Schmidt et al., 2025): BPE whose vocabulary may also join two whole pretokens.

`reference` is the readable version; `trainer` the fast one; `timeline` the settings, training run
and timeline; `tokenizer` the two-pass encoder; `model_file` the ``tokviz-boundless`` format.
"""
