"""Opening real tokenizers: tokviz's `load_tokenizer` against tiktoken's own loader, same files,
same process, medians of 5 (file cache warm, as for a user opening a file twice).

    python tests/bench/bench_load.py

Target: cl100k_base and o200k_base open in under a second (README quotes the figures).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "vocab" / "tiktoken"


def _median(fn, reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    from tokviz.core.loading import load_tokenizer

    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError:
        tiktoken = None
    print(f"{'encoding':<14} {'tokviz':>9} {'tiktoken':>9} {'ratio':>7}")
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        path = SHARED / f"{name}.tiktoken"
        if not path.exists():
            print(f"{name:<14} missing ({path})")
            continue
        path.read_bytes()
        ours = _median(lambda path=path: load_tokenizer(path).encode_ids("warm up the pattern"))
        ref = None
        if tiktoken is not None:
            def theirs(path=path, name=name):
                ranks = load_tiktoken_bpe(str(path))
                enc = tiktoken.Encoding(name, pat_str=r"\w+", mergeable_ranks=ranks, special_tokens={})
                enc.encode_ordinary("warm up the pattern")
            ref = _median(theirs)
        ratio = f"{ours / ref:.2f}x" if ref else "-"
        print(f"{name:<14} {ours:>8.3f}s {ref if ref is None else f'{ref:.3f}s':>9} {ratio:>7}"
              f"   target < 1 s: {'ok' if ours < 1.0 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
