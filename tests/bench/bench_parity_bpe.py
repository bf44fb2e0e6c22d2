"""Parity-aware BPE against plain BPE on a multi-parallel corpus at the same vocabulary size: the Gini
coefficient of per-document token counts, and the training time.

Run from the repository root::

    python tests/bench/bench_parity_bpe.py                    # udhr2 (383 translations), vocab 8000
    python tests/bench/bench_parity_bpe.py --vocab 4000 --hybrid 2000
    python tests/bench/bench_parity_bpe.py --vocab 32000      # writes parity_bpe_32000.json

Each training runs in a fresh subprocess (``--worker ALGO``) that times only the training (counting,
then every merge; reading the file is left out), then encodes every document (split as ``tokviz
compare --by-document`` splits it) with the trained tokenizer and takes the Gini coefficient of the
token counts and the premiums against the English document (`tokviz.core.compare`). The parent
prints both Ginis, the times and the ratio to BPE (target: at most 2x; CPU time is the figure that
holds on a shared machine, wall time is printed too), and writes ``tests/bench/results/parity_bpe.json``
(``parity_bpe_<vocab>.json`` for another vocabulary) and the figure ``parity_bpe_gini.png`` (the
Gini after each merge: plain BPE's curve comes from the same merges trained as the hybrid with
every merge global).

The corpus must be multi-parallel (one document per language), so gutenberg30 (30 English books)
cannot be measured: udhr2 is. Parity-aware training stops when the costliest document has no pair
left occurring twice: on udhr2 that happens after 2,367 merges (the Dhivehi translation, whose
vowel signs the GPT-4 split cuts from their letters, cannot be shortened further), so it makes fewer merges
than BPE; plain BPE is then also timed for that same number of merges (``bpe_matched``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "udhr2_all.txt"
RESULTS = ROOT / "tests" / "bench" / "results"
LIMIT = 2.0


def worker(algo: str, path: str, vocab: int, hybrid: int, merges: int | None = None) -> dict:
    from tokviz.core.bpe.timeline import TrainSettings
    from tokviz.core.compare.documents import find_reference, gini, premiums, split_documents
    from tokviz.core.parity_bpe import ParitySettings
    from tokviz.core.parity_bpe.costs import gini_curve
    from tokviz.core.registry import make_training

    text = Path(path).read_text(encoding="utf-8")
    settings = (TrainSettings(vocab_size=None if merges else vocab, merges=merges) if algo == "bpe"
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
        same = (ParitySettings(merges=merges, hybrid=merges) if merges else ParitySettings(vocab_size=vocab, hybrid=vocab))
        timeline = make_training(same, texts=[text]).run()
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
    p.add_argument("--merges", type=int, default=None, help="(worker) train BPE for this many merges instead")
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.corpus, a.vocab, a.hybrid or 0, a.merges)))
        return

    def run(algo: str, merges: int | None = None) -> dict:
        cmd = [sys.executable, __file__, "--worker", algo, "--corpus", a.corpus, "--vocab", str(a.vocab)]
        if a.hybrid:
            cmd += ["--hybrid", str(a.hybrid)]
        if merges:
            cmd += ["--merges", str(merges)]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
        out = json.loads(res.stdout.strip().splitlines()[-1])
        print({k: v for k, v in out.items() if k != "gini_curve"}, flush=True)
        return out

    load = os.getloadavg()[0]
    runs = {algo: run(algo) for algo in ("bpe", "parity") + (("hybrid",) if a.hybrid else ())}
    if runs["parity"]["merges"] < runs["bpe"]["merges"]:
        print(f"parity-aware stopped after {runs['parity']['merges']:,} merges (BPE made {runs['bpe']['merges']:,})")
        matched = runs["bpe_matched"] = run("bpe", runs["parity"]["merges"])
        print(f"CPU time at {matched['merges']:,} merges each: parity-aware "
              f"{runs['parity']['cpu_s'] / matched['cpu_s']:.2f}x BPE")
    ratio = runs["parity"]["wall_s"] / runs["bpe"]["wall_s"]
    print(f"Gini of tokens per document: BPE {runs['bpe']['gini']:.4f}, parity-aware {runs['parity']['gini']:.4f}")
    print(f"training time: parity-aware {ratio:.2f}x BPE (target at most {LIMIT}x): "
          + ("within" if ratio <= LIMIT else "OVER"))
    cpu_ratio = runs["parity"]["cpu_s"] / runs["bpe"]["cpu_s"]
    print(f"CPU time: parity-aware {cpu_ratio:.2f}x BPE (target at most {LIMIT}x): "
          + ("within" if cpu_ratio <= LIMIT else "OVER"))
    RESULTS.mkdir(exist_ok=True)
    results = {"corpus": Path(a.corpus).name, "vocab": a.vocab, "runs": runs, "time_ratio": round(ratio, 2),
               "cpu_ratio": round(cpu_ratio, 2), "load_average": round(load, 2), "machine": platform.machine(),
               "python": platform.python_version()}
    if "bpe_matched" in runs:
        results["cpu_ratio_matched_merges"] = round(runs["parity"]["cpu_s"] / runs["bpe_matched"]["cpu_s"], 2)
    name = "parity_bpe" if a.vocab == 8000 else f"parity_bpe_{a.vocab}"
    (RESULTS / f"{name}.json").write_text(json.dumps(results, indent=1) + "\n")
    if a.vocab == 8000:
        figure({**results, "runs": {k: v for k, v in runs.items() if k != "bpe_matched"}}, RESULTS / "parity_bpe_gini.png")


if __name__ == "__main__":
    main()
