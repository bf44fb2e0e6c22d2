"""What ``tokviz train`` loads beside its own start: the algorithm's compiled kernels (its
warm-up), on a thread while the corpus is read and counted when the corpus is small enough to be
counted in this process, then the code that saves the model.

What this leaves out: the thread and the compile notice (`progress.ProgressBar.load_kernels_aside`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from functools import partial


def warm_up_of(args: argparse.Namespace) -> Callable[[], object] | None:
    """The call that loads the compiled kernels of the algorithm (`AlgorithmSpec.warm_up`), or None."""
    from tokviz.core.registry import SPECS

    warm_up = SPECS[args.algorithm].warm_up
    return None if warm_up is None else partial(warm_up, encoder=False)  # the model is only saved


def then_saving_code(warm_up: Callable[[], object]) -> None:
    """`warm_up`, then the import of the code that saves the model: on the warm-up's thread, that
    runs beside the training's steps (whose kernels let go of the GIL), not after the last one."""
    warm_up()
    import tokviz.core.model_files  # noqa: F401


def counted_here(args: argparse.Namespace) -> bool:
    """Whether the corpus is small enough to be counted in this process (below
    `chunks.PARALLEL_MIN_CHARS`: a file's bytes are at least its characters): the kernels may then
    load on a thread while it is read and counted (`ProgressBar.load_kernels_aside`). A bigger one
    is counted in forked processes, which a running thread would forbid; a file that cannot be
    looked at is read first, which says what is wrong."""
    from tokviz.core.text.chunks import PARALLEL_MIN_CHARS

    try:
        return sum(os.path.getsize(f) for f in args.files) < PARALLEL_MIN_CHARS
    except OSError:
        return False
