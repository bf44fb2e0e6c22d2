"""What tokviz saves and opens again: model files of every algorithm (`model_files`), sessions
(`session`) and exports of a trained tokenizer to other tools' formats (`tokenizer_export`).

These name algorithms and file formats, so they sit above the registry; the plumbing they use
(bounded reads, atomic writes, checks of numbers: `tokviz.core.io`) knows no algorithm.
"""
