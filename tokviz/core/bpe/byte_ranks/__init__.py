"""tiktoken's merge loop: on one chunk (`one_chunk`), and on many chunks at once with numpy
(`merge_rounds.BatchMerger`, for big texts) or compiled with numba (`compiled`, `kernels`: for texts
of many languages), the choice between them made by `mergers`.

The rule: lowest rank of a joined pair first, leftmost of equals. The batch runs one join per chunk
per round, all chunks of a batch in the same numpy operations; the ranks of joined pairs are looked
up once per distinct pair (`PairTable`, asking `PairRanks` for the pairs it has not met). It must
agree exactly with the one-chunk loop. What this
leaves out: chunking, caching and the tokenizer around them (`tokviz.core.bpe.ranked.tokenizer`), and
the pair-rank rule of merge lists (`tokviz.core.bpe.pair_merge`).

Nothing is imported here: the one-chunk loop must not cost a tokenizer the import of numpy.
"""
