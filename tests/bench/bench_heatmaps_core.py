"""Core timings behind the heatmap panels: positional matrices, similarities, embedding training.

Run from the repository root::

    python tests/bench/bench_heatmaps_core.py              # every row, 5 repetitions
    python tests/bench/bench_heatmaps_core.py --reps 9 --json /tmp/heatmaps.json

Each row reports the best and median wall time of the core call alone (no drawing; the panel
side is measured separately), after one warm-up call. The issue's budget is 100 ms for an
8192 x 1024 heatmap after a control changes, so the core share must stay well below that.
The last rows train embeddings on a worker thread while the main thread sleeps in 5 ms ticks
and records its longest wait: a proxy for how long a GUI thread could be held up (GIL).
The machine's load average is printed too: on a busy machine every number grows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from collections.abc import Callable

import numpy as np

from tokviz.core.embeddings import EmbedTrainer, EmbedTrainSettings, cosine_similarity, reorder_for_similarity
from tokviz.core.embeddings import positional as P


def timed(fn: Callable[[], object], reps: int) -> tuple[float, float]:
    """(best, median) seconds over `reps` calls after a warm-up call."""
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def positional_rows() -> list[tuple[str, Callable[[], object]]]:
    n, d = 8192, 1024
    shown = P.display_positions(n, 2048)
    q, k = P.rope_demo_vectors(d)
    params = P.PositionalParams(d=d, n_pos=n)
    return [
        ("sinusoidal 8192 x 1024 (float32)", lambda: P.sinusoidal(n, d)),
        ("sinusoidal 8192 x 1024 exact float64 -> float32",
         lambda: P.sinusoidal(n, d, dtype=np.float64).astype(np.float32)),
        ("learned random 8192 x 1024", lambda: P.learned_random(n, d, seed=0)),
        ("rope angles 8192 x 512 (wrapped)", lambda: P.rope_angles(n, d, wrap=True)),
        ("positional_matrix sinusoidal 8192 x 1024", lambda: P.positional_matrix("sinusoidal", params)),
        ("rope score by distance, +-8191", lambda: P.rope_score_by_distance(q, k, n - 1)),
        ("rope score matrix 2048 x 2048 (every 4th pos)", lambda: P.rope_score_matrix(q, k, shown)),
        ("rope score matrix 8192 x 8192", lambda: P.rope_score_matrix(q, k, n)),
        ("sinusoidal similarity 2048 x 2048 (cosine)", lambda: P.sinusoidal_similarity(shown, d, kind="cosine")),
        ("sinusoidal similarity 8192 x 8192 (dot)", lambda: P.sinusoidal_similarity(n, d)),
        ("learned similarity 2048 x 2048 (cosine)",
         lambda: P.positional_similarity("learned", params, "cosine", positions=shown)),
        ("alibi bias 2048 x 2048", lambda: P.alibi_bias(shown)),
        ("alibi bias 8192 x 8192", lambda: P.alibi_bias(n)),
    ]


def embedding_rows() -> list[tuple[str, Callable[[], object]]]:
    rng = np.random.default_rng(0)
    table = rng.standard_normal((8192, 256)).astype(np.float32)
    ids = list(range(500))
    sim = cosine_similarity(table, ids)
    return [
        ("cosine similarity 500 tokens, D 256", lambda: cosine_similarity(table, ids)),
        ("reorder 500 tokens (average linkage)", lambda: reorder_for_similarity(sim)),
    ]


def training_step(n_vocab: int, dim: int, batch: int, reps: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    seqs = [rng.integers(0, n_vocab, 200_000).tolist()]
    trainer = EmbedTrainer(seqs, n_vocab, EmbedTrainSettings(dim=dim, batch_size=batch, epochs=1))
    steps = trainer.steps()
    return timed(lambda: next(steps), reps)


def idle_probe(seconds: float = 3.0) -> float:
    """The main thread's longest extra wait per 5 ms tick with nothing else running (ms)."""
    worst, end = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        time.sleep(0.005)
        worst = max(worst, time.perf_counter() - t0 - 0.005)
    return worst * 1e3


def gil_probe(n_vocab: int, dim: int, batch: int, seconds: float = 3.0) -> dict:
    """Train on a thread for `seconds`; the main thread ticks every 5 ms and records its longest wait."""
    rng = np.random.default_rng(0)
    seqs = [rng.integers(0, n_vocab, 200_000).tolist()]
    trainer = EmbedTrainer(seqs, n_vocab, EmbedTrainSettings(dim=dim, batch_size=batch, epochs=1))
    stop = threading.Event()
    done = [0]

    def work() -> None:
        for _ in trainer.steps():
            done[0] += 1
            if stop.is_set():
                break

    worker = threading.Thread(target=work)
    worker.start()
    worst, end = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        time.sleep(0.005)
        worst = max(worst, time.perf_counter() - t0 - 0.005)
    stop.set()
    worker.join()
    return {"steps": done[0], "worst_extra_wait_ms": worst * 1e3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    results: dict[str, dict] = {}
    print(f"{'computation':50s} {'best ms':>9s} {'median ms':>10s}")
    for name, fn in positional_rows() + embedding_rows():
        best, median = timed(fn, args.reps)
        results[name] = {"best_ms": best * 1e3, "median_ms": median * 1e3}
        print(f"{name:50s} {best * 1e3:9.1f} {median * 1e3:10.1f}")
    for v, d, b in [(8192, 256, 512), (8192, 64, 512), (1024, 64, 512)]:
        name = f"training step V {v}, D {d}, batch {b}"
        best, median = training_step(v, d, b, args.reps)
        results[name] = {"best_ms": best * 1e3, "median_ms": median * 1e3}
        print(f"{name:50s} {best * 1e3:9.1f} {median * 1e3:10.1f}")
    idle = idle_probe()
    results["main-thread stall, idle"] = {"worst_extra_wait_ms": idle}
    print(f"{'main-thread stall, idle (baseline)':50s} worst extra wait {idle:.1f} ms")
    for v, d, b in [(8192, 256, 512), (1024, 64, 512)]:
        name = f"main-thread stall while training V {v}, D {d}"
        probe = gil_probe(v, d, b)
        results[name] = probe
        print(f"{name:50s} worst extra wait {probe['worst_extra_wait_ms']:.1f} ms over {probe['steps']} steps")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"load_average": load, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
