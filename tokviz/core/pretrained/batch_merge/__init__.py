"""tiktoken's merge loop run on many chunks at once with numpy (`merge_all`), for big texts.

Exactly the loop of `tokviz.core.pretrained.rank_bpe` (lowest rank of a joined pair first,
leftmost of equals), one join per chunk per round, all chunks of a batch in the same numpy
operations; the ranks of joined pairs are looked up once per distinct pair (`PairTable`).
What this leaves out: the one-chunk loop it must agree with (`rank_bpe`).
"""

from .merge_rounds import BatchMerger

__all__ = ["BatchMerger"]
