"""Benchmark: Magikarp's indicators over a 10 GiB embedding matrix (a sparse file: the rows are a
hole, read as zeros), in a fresh process, with its peak memory.

The default test suite reads a 10 GB file whose needed tensor is small
(tests/core/weights/test_sparse_weights.py); this is the full pass: every one of the 2,621,440 x
2,048 bfloat16 rows read a slice at a time. Measures the time of the pass and the process's peak
resident memory (ru_maxrss, which counts mapped pages it touched) against the file's size.

Run: python tests/bench/bench_weights_sparse.py [folder for the temporary file]
Prints one line and writes tests/bench/results/weights_sparse.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).parent / "results" / "weights_sparse.json"
ROWS, DIM = 2_621_440, 2048  # 10 GiB of bfloat16

CHILD = """
import json, resource, sys, time
import numpy as np
from tokviz.core.weights import open_weights, weight_evidence
t = time.perf_counter()
ev = weight_evidence(open_weights(sys.argv[1]), reference=np.arange(int(sys.argv[2]) - 64, int(sys.argv[2])))
seconds = time.perf_counter() - t
print(json.dumps({"seconds": round(seconds, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "rows": ev.n_rows, "finite": bool(np.isfinite(ev.indicator).all())}))
"""


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from tests.core.weights.sparse import write_sparse

    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    path = folder / "sparse-10g.safetensors"
    try:
        size = write_sparse(path, hole=("model.embed_tokens.weight", "BF16", (ROWS, DIM)))
        out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(ROWS)], capture_output=True, text=True,
                             check=True, cwd=ROOT)
        result = {"file_bytes": size, **json.loads(out.stdout)}
    finally:
        path.unlink(missing_ok=True)
    print(f"{size / 2**30:.1f} GiB file: {result['seconds']} s, peak RSS {result['peak_rss_mb']} MB")
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
