"""Loading SuperBPE's compiled kernels before a training needs them (`warm_up`), so that a first
compilation on a machine is said, not a silent stop at the transition (about 10 s here).

What this leaves out: the kernels (`kernels`, `piece_kernels`, `chunk_kernels`) and when the app
and the command line call a warm-up (`tokviz.core.registry.AlgorithmSpec.warm_up`).
"""

from __future__ import annotations

import numpy as np

from tokviz.core import jit
from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.text.split import parse_split

from . import pieces
from .compiled import load_kernels
from .settings import SuperBpeSettings
from .stage_two import stage_two_start
from .timeline import SuperBpeTraining

# words and word pairs that repeat (stage 2 merges across spaces), punctuation runs, digits; the
# second text has a character beyond U+FFFF (32-bit code points)
TEXTS = ("hug pug, hug pug!! 12345 " * 4, "x\U0001F600 hug y hug")


def warm_up(*, encoder: bool = True) -> bool:
    """Load (the first time on a machine: compile) every SuperBPE kernel with the argument types a
    real training passes: a tiny training (the stage-2 merge, the start's kernels), the counting
    and numbering of a child on 16-bit and 32-bit code points, and the start from numbered pieces.
    False when kernels are off (`tokviz.core.jit`). `encoder` is for the registry's signature: a
    SuperBPE tokenizer encodes without kernels."""
    stage_one = parse_split("gpt4")
    kernels, chunk_kernels, merge_kernels = pieces.load_kernels(stage_one), jit.kernels(pieces.CHUNK_KERNELS), \
        load_kernels()
    if kernels is None or chunk_kernels is None or merge_kernels is None:
        return False
    timeline = SuperBpeTraining(SuperBpeSettings(merges=16, transition=8), texts=list(TEXTS)).run()
    pairs = [s.pair for s in timeline.steps[:timeline.transition]]
    words = list(dict.fromkeys(p for t in TEXTS for p in stage_one.chunks(t)))
    merged = BpeTokenizer(timeline.base, pairs, stage_one)
    segments = {w: list(merged.encode_chunk(w, step=len(pairs))[0]) for w in words}
    scheme = pieces.COMPILED_SCHEMES[stage_one.spec]
    for text in TEXTS:
        counted = pieces.count_and_number([text], (), scheme, words, kernels, chunk_kernels)
        stage_two_start(timeline.base, pairs, (), stage_one, segments, numbered=counted.numbered, kernels=kernels)
    one = np.zeros(1, np.int64)
    merge_kernels.live_counts(one, one - 1, one, one, one, one + 1, one)
    return True
