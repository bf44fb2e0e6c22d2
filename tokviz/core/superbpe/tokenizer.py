"""`SuperBpeTokenizer`: a BPE tokenizer whose chunks are SuperBPE's stage-2 chunks.

Up to the transition (step k <= t) it encodes exactly as plain BPE with the stage-1 split: each
stage-2 chunk is cut with the stage-1 split and every piece is merged on its own. After it, the
merges apply in rank order over the whole stage-2 chunk, as the authors' Hugging Face tokenizer
does; the first t merges then run over the whole chunk as well, which is how stage 2 of training
starts (`tokviz.core.superbpe.timeline`), so encoding at any step k > t gives training's
segmentation at step k.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.bpe.units import BaseVocab
from tokviz.core.text.split import Splitter, parse_split

from .split import STAGE_TWO


class SuperBpeTokenizer(BpeTokenizer):
    """BPE over stage-2 chunks; steps up to `transition` replay plain BPE over `stage_one` chunks."""

    def __init__(
        self,
        base: BaseVocab,
        merges: Sequence[tuple[int, int]],
        stage_one: Splitter,
        transition: int,
        *,
        special_tokens: Mapping[str, int] | None = None,
        unk_id: int | None = None,
        name: str = "superbpe",
    ) -> None:
        super().__init__(base, merges, STAGE_TWO, special_tokens=special_tokens, unk_id=unk_id, name=name)
        self.stage_one = stage_one
        self.transition = transition

    @classmethod
    def from_timeline(cls, timeline) -> SuperBpeTokenizer:
        return cls(timeline.base, timeline.merges(), parse_split(timeline.settings.split), timeline.transition,
                   special_tokens=timeline.special_ids, unk_id=timeline.unk_id, name="trained")

    def _encode_chunk(self, chunk: str, limit: int):
        if limit > self.transition:
            return super()._encode_chunk(chunk, limit)
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        for a, b in self.stage_one.spans(chunk):
            part_ids, part_spans = super()._encode_chunk(chunk[a:b], limit)
            ids.extend(part_ids)
            spans.extend((a + x, a + y) for x, y in part_spans)
        return tuple(ids), tuple(spans)

    def unmerge_chunk(self, chunk: str, ids: Sequence[int], limit: int):
        if limit <= self.transition:  # the stage-1 pieces, not an undoing of later merges
            return self._encode_chunk(chunk, limit)
        return super().unmerge_chunk(chunk, ids, limit)
