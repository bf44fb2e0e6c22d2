"""What tokviz saves and opens again beside model files: sessions (`session`) and exports of a
trained tokenizer to other tools' formats (`tokenizer_export`).

These use the tokenizer readers (`tokviz.core.loading`, `tokviz.core.formats`) and the registry, so they sit above
both. Model files themselves (`tokviz.core.model_files`) sit beside the registry, a floor lower,
because the readers of every format open them too; the plumbing (bounded reads, atomic writes,
checks of numbers: `tokviz.core.io`) knows no algorithm.
"""
