"""Byte-pair encoding. Read `reference` first: a slow, obviously correct trainer and encoder (every
step recounts every pair). Then the incremental trainer (`trainer`), base units (`units`),
settings/training/timeline (`timeline`), the tokenizer (`tokenizer`) and replay at step k (`replay`).
The encoders every BPE tokenizer shares: `pair_merge` (merge lists: trained, minbpe, Hugging Face)
and `byte_ranks` (tiktoken's rule: the lowest-ranked joined bytes first, one chunk or many at once).
`dropout`: BPE-dropout, both rules with merges skipped at random (sampled segmentations).

Core: may import `text`, `algorithm`, `encoding`, `errors`; no Qt.
"""
