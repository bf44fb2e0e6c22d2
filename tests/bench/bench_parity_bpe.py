"""Parity-aware BPE against plain BPE on a multi-parallel corpus at the same vocabulary size: the Gini
coefficient of per-document token counts, and the training time.

Run from the repository root::

    python tests/bench/bench_parity_bpe.py                    # udhr2 (340 translations), vocab 8000
    python tests/bench/bench_parity_bpe.py --vocab 4000 --hybrid 2000

Each training runs in a fresh subprocess (``--worker ALGO``) that times only the training (counting,
then every merge; reading the file is left out), then encodes every document (split as ``tokviz
compare --by-document`` splits it) with the trained tokenizer and takes the Gini coefficient of the
token counts and the premiums against the English document (`tokviz.core.compare`). The parent
prints both Ginis, the times and the ratio to BPE (target: at most 2x), and writes
``tests/bench/results/parity_bpe.json`` and the figure ``parity_bpe_gini.png`` (the Gini after each
merge: plain BPE's curve comes from the same merges trained as the hybrid with every merge global).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "udhr2_all.txt"
RESULTS = ROOT / "tests" / "bench" / "results"
LIMIT = 2.0


def worker(algo: str, path: str, vocab: int, hybrid: int) -> dict:
    from tokviz.core.bpe.timeline import TrainSettings
    from tokviz.core.compare.documents import find_reference, gini, premiums, split_documents
    from tokviz.core.parity_bpe import ParitySettings
    from tokviz.core.parity_bpe.costs import gini_curve
    from tokviz.core.registry import make_training

    text = Path(path).read_text(encoding="utf-8")
    settings = (TrainSettings(vocab_size=vocab) if algo == "bpe"
                else ParitySettings(vocab_size=vocab, hybrid=hybrid if algo == "hybrid" else 0))
    wall, cpu = time.perf_counter(), time.process_time()
    training = make_training(settings, texts=[text])
    training.prepare()
    timeline = training.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    docs = split_documents(text)
    tok = timeline.tokenizer()
    tokens = [len(tok.encode_ordinary(text[d.start:d.end]).ids) for d in docs]
    ref = find_reference(docs)
    prem = [p for p in premiums(tokens, ref) if p is not None]
    out = {"algorithm": algo, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "merges": timeline.n_merges,
           "documents": len(docs), "tokens": sum(tokens), "gini": round(gini(tokens), 4),
           "premium_max": round(max(prem), 3), "premium_min": round(min(prem), 3)}
    if algo == "bpe":  # the same merges with the documents' costs recorded: hybrid = budget is plain BPE
        timeline = make_training(ParitySettings(vocab_size=vocab, hybrid=vocab), texts=[text]).run()
    else:
        out["documents_served"] = len({s.served for s in timeline.steps if s.served >= 0})
    out["gini_training_table"] = round(timeline.parity_at(timeline.n_merges).gini, 4)
    ks = list(range(0, timeline.n_merges + 1, 50))
    out["gini_curve"] = [[k, round(g, 5)] for k, g in zip(ks, gini_curve(timeline.costs(), ks))]
    return out


def figure(results: dict, path: Path) -> None:
    """The Gini of tokens per document after each merge, one curve per run, as a PNG."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    pg.setConfigOptions(background="w", foreground="k", antialias=True)
    w = pg.PlotWidget()
    w.resize(900, 500)
    plot = w.getPlotItem()
    plot.setTitle(f"{results['corpus']}: Gini of tokens per document, vocabulary {results['vocab']:,}")
    plot.setLabel("bottom", "merges")
    plot.setLabel("left", "Gini coefficient")
    plot.addLegend()
    colours = {"bpe": "#888888", "parity": "#d62728", "hybrid": "#1f77b4"}
    names = {"bpe": "plain BPE", "parity": "parity-aware", "hybrid": "hybrid"}
    for algo, run in results["runs"].items():
        ks, gs = zip(*run["gini_curve"])
        plot.plot(ks, gs, pen=pg.mkPen(colours[algo], width=2), name=f"{names[algo]} ({run['gini']:.3f} by encoding)")
    app.processEvents()
    ImageExporter(plot).export(str(path))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default=str(CORPUS))
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--hybrid", type=int, default=None, help="also run the hybrid with M global merges")
    p.add_argument("--worker", choices=("bpe", "parity", "hybrid"))
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.corpus, a.vocab, a.hybrid or 0)))
        return
    runs = {}
    for algo in ("bpe", "parity") + (("hybrid",) if a.hybrid else ()):
        cmd = [sys.executable, __file__, "--worker", algo, "--corpus", a.corpus, "--vocab", str(a.vocab)]
        if a.hybrid:
            cmd += ["--hybrid", str(a.hybrid)]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
        runs[algo] = json.loads(res.stdout.strip().splitlines()[-1])
        print(runs[algo], flush=True)
    ratio = runs["parity"]["wall_s"] / runs["bpe"]["wall_s"]
    print(f"Gini of tokens per document: BPE {runs['bpe']['gini']:.4f}, parity-aware {runs['parity']['gini']:.4f}")
    print(f"training time: parity-aware {ratio:.2f}x BPE (target at most {LIMIT}x): "
          + ("within" if ratio <= LIMIT else "OVER"))
    cpu_ratio = runs["parity"]["cpu_s"] / runs["bpe"]["cpu_s"]
    print(f"CPU time: parity-aware {cpu_ratio:.2f}x BPE")
    RESULTS.mkdir(exist_ok=True)
    results = {"corpus": Path(a.corpus).name, "vocab": a.vocab, "runs": runs, "time_ratio": round(ratio, 2),
               "cpu_ratio": round(cpu_ratio, 2), "machine": platform.machine(), "python": platform.python_version()}
    (RESULTS / "parity_bpe.json").write_text(json.dumps(results, indent=1) + "\n")
    figure(results, RESULTS / "parity_bpe_gini.png")


if __name__ == "__main__":
    main()
