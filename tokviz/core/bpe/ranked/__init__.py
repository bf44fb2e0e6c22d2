"""Byte-level BPE by token rank, tiktoken's rule: `tokenizer` (`RankBpeTokenizer`, for tiktoken files,
GPT-2's data-gym files and any `RankedVocab`), run by the loops of `tokviz.core.bpe.byte_ranks`; the
merge timeline and joins inside a word (`explaining`), ids to spans (`id_spans`) and the JSON of a
one-off encode in two processes (`json_output`).
"""
