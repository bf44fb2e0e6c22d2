"""`RankBpeExplaining`: how a `RankBpeTokenizer` forms its tokens (the merge timeline of a loaded
encoding, the joins inside one word), as a mixin of the tokenizer.

A token's merge is the pair that tiktoken's own rule produces on the token's bytes with only lower
ranks allowed; a token for which that rule ends in more than two parts has no merge. What this
leaves out: encoding (`rank_bpe`).
"""

from __future__ import annotations

from collections.abc import Callable

from tokviz.core.algorithm.reach import Reason, text_reason
from tokviz.core.algorithm.records import LoadedMerge
from tokviz.core.bpe.byte_ranks.one_chunk import bpe_parts
from tokviz.core.bpe.tokenizer import ExplainStep


class RankBpeExplaining:
    """The explaining half of `RankBpeTokenizer` (it holds `_enc`, `_vocab`, `_merges`, ...)."""

    def parts_of(self, token_id: int) -> list[int]:
        """How tiktoken's rule splits the token's own bytes when only lower ranks may join."""
        data = self.token_bytes(token_id)
        if token_id in self._special_ids or len(data) < 2:
            return [token_id]
        b = bpe_parts(self._enc, data, token_id)
        return [self._enc[data[b[i] : b[i + 1]]] for i in range(len(b) - 1)]

    def merge_of(self, token_id: int) -> tuple[int, int] | None:
        """The pair that forms `token_id` (None for bytes, specials and tokens no merge forms)."""
        parts = self.parts_of(token_id)
        return (parts[0], parts[1]) if len(parts) == 2 else None

    def merge_list(self, *, should_stop: Callable[[], bool] | None = None) -> list[LoadedMerge]:
        """The merge timeline: every multi-byte token in rank order with the pair forming it.

        Computed on first use (a few seconds for 200k tokens: call it from a worker) and kept.
        """
        if self._merges is None:
            out = []
            vocab = self._vocab
            for index, r in enumerate(self._merge_ranks):
                if should_stop is not None and index % 4096 == 0 and should_stop():
                    from tokviz.core.errors import Cancelled

                    raise Cancelled()
                out.append(LoadedMerge(index, r, self.merge_of(r), vocab[r]))  # type: ignore[arg-type]
            self._merges = out
        return list(self._merges)

    def explain(self, word: str, *, step: int | None = None) -> list[ExplainStep]:
        """The joins that happen while encoding `word` as one chunk, in order.

        The first entry is the starting bytes; each later one gives the merge index (`rank`,
        the step on the timeline), the pair and the new id. When the whole chunk is a token the
        result is that token even if the joins end elsewhere: a last entry with ``pair=None``.
        """
        thr = self._threshold(step)
        enc = self._enc
        piece = word.encode("utf-8")
        bounds = list(range(len(piece) + 1))

        def ids_of(bd: list[int]) -> tuple[int, ...]:
            return tuple(enc[piece[bd[i] : bd[i + 1]]] for i in range(len(bd) - 1))

        out = [ExplainStep(None, None, None, ids_of(bounds))]
        while len(bounds) > 2:
            best, at = thr, -1
            for i in range(len(bounds) - 2):
                r = enc.get(piece[bounds[i] : bounds[i + 2]])
                if r is not None and r < best:
                    best, at = r, i
            if at < 0:
                break
            pair = (enc[piece[bounds[at] : bounds[at + 1]]], enc[piece[bounds[at + 1] : bounds[at + 2]]])
            del bounds[at + 1]
            out.append(ExplainStep(self._index_of_rank(best), pair, best, ids_of(bounds)))
        whole = enc.get(piece)
        if whole is not None and len(piece) > 1 and whole < thr and len(bounds) > 2:
            out.append(ExplainStep(self._index_of_rank(whole), None, whole, (whole,)))
        return out

    def unreachable(self, token_id: int) -> Reason | None:
        """Why encoding the token's own bytes as text does not give it back (`text_reason`), or None."""
        data = self.token_bytes(token_id)
        if token_id not in self._special_ids and self._enc.get(data) == token_id:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return "partial_utf8", ()
            if self.chunks(text) == [text]:  # one chunk that is a token: tiktoken's rule takes it whole
                return None
        return text_reason(self, token_id)

    def lattice_view(self) -> None:
        return None  # no piece lattice: byte ranks
