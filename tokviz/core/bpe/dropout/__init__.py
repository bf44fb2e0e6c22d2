"""BPE-dropout (Provilkov et al., 2020): segmentations sampled by skipping merges at random.

Every BPE rule here runs Hugging Face tokenizers' dropout loop (``Word::merge_all``): candidate
joins come off a queue lowest key first, leftmost of equals; each one popped is skipped with
probability `p` and kept aside until the next candidate that is not skipped puts the kept ones
back; a candidate whose pair has changed since it was queued is dropped. One draw of the random
generator per candidate popped, stale ones included, so every loop that follows the rule consumes
a seeded ``random.Random`` identically: the same (text, p, seed) gives the same ids. With p = 0 it
is the deterministic encode, with p = 1 no join happens (the starting symbols).

`reference`: the readable loop, minbpe-sized, the one the fast ones are tested against.
`pair_rank`: the loop of merge lists (`PairMerges`: trained BPE, minbpe, tokenizer.json BPE).
`byte_rank`: tiktoken's rule (joined bytes ranked). `sampled`: ``encode_dropout`` of the
tokenizers built on them. What this leaves out: SentencePiece's own BPE sampling (it drops a
candidate for good, after its staleness check: another rule, in
`tokviz.core.formats.sentencepiece.dropout`), and Unigram sampling (`tokviz.core.unigram`).
"""

from .rate import check_rate, make_rng

__all__ = ["check_rate", "make_rng"]
