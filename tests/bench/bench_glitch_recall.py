"""Benchmark: how well the glitch finder's ranking of GPT-2 finds the tokens a model really never
learned, as recall@20 and recall@100 against a published list, on each shared corpus.

The reference: the under-trained tokens of GPT-2 (openai-community/gpt2) that cohere-ai/magikarp
("Fishing for Magikarp", Land & Bartolo 2024) verified with the model itself: listed below its
indicator threshold in `results/reports_mini/openai_community_gpt2.md` and with a verification
max_prob under 0.01 (25 tokens; ``ÃÂÃÂ``, at 0.043, is left out). Their evidence is the model's
embeddings; ours is only the tokenizer and a corpus, so this measures how far that gets.

Each corpus is ranked on its first `MAX_CORPUS_CHARS` characters, as the window's panel ranks it
(``--full`` ranks whole files too), and once with no corpus (the round trip alone).

Run: python tests/bench/bench_glitch_recall.py [--full]
Prints a table and writes tests/bench/results/glitch_recall.json.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tokviz.core.glitch import MAX_CORPUS_CHARS, glitch_report
from tokviz.core.loading import open_timeline

SHARED = Path(__file__).resolve().parents[3] / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
GPT2 = SHARED / "vocab" / "gpt2-data-gym" / "vocab.bpe"
RESULTS = Path(__file__).parent / "results" / "glitch_recall.json"
KS = (20, 100)

# id: token text, as magikarp's report shows it (▁ for a leading space)
VERIFIED_GPT2 = {
    40241: "InstoreAndOnline", 30905: "rawdownload", 39752: "quickShip", 40240: "oreAndOnline",
    30898: "embedreportprint", 45544: "▁サーティ", 36173: "▁RandomRedditor", 30212: "▁externalToEVA",
    42089: "▁TheNitrome", 30897: "reportprint", 30208: "▁externalTo", 23090: "ÃÂ" * 16,
    37574: "StreamerBot", 31573: "ActionCode", 14827: "ÃÂ" * 8, 42066: "Nitrome", 9364: "ÃÂ" * 4,
    39749: "DeliveryDate", 39142: "ThumbnailImage", 39714: "isSpecial", 40219: "oreAnd",
    30899: "cloneembedreportprint", 13150: "▁subur", 17629: "▁practition", 39655: "Orderable",
}


def recall(ranked_ids: list[int], k: int) -> float:
    """Share of the verified tokens among the first `k` ranked ids."""
    return len(VERIFIED_GPT2.keys() & set(ranked_ids[:k])) / len(VERIFIED_GPT2)


def measure(tok, name: str, text: str) -> dict:
    t0 = time.perf_counter()
    report = glitch_report(tok, text)
    ids = [r.id for r in report.rows]
    place = {i: p + 1 for p, i in enumerate(ids)}
    ranks = sorted(place[i] for i in VERIFIED_GPT2)
    return {"corpus": name, "chars": len(text), **{f"recall@{k}": recall(ids, k) for k in KS},
            "median_rank": ranks[len(ranks) // 2], "magikarp_rank": place.get(43453),
            "top10": [tok.vocab()[i].decode("utf-8", "replace") for i in ids[:10]],
            "seconds": round(time.perf_counter() - t0, 1)}


def main() -> int:
    if not GPT2.exists():
        print(f"needs {GPT2}")
        return 1
    tok = open_timeline(str(GPT2)).tokenizer()
    for i, text in VERIFIED_GPT2.items():  # the list is about this vocabulary
        assert tok.vocab()[i].decode("utf-8", "replace").replace(" ", "▁") == text, (i, text)
    runs = [("(no corpus)", "")]
    for path in sorted((SHARED / "corpora").glob("*.txt")):
        with open(path, encoding="utf-8") as f:
            head = f.read(MAX_CORPUS_CHARS + 1)
        whole = len(head) <= MAX_CORPUS_CHARS
        runs.append((path.stem if whole else f"{path.stem} (first {MAX_CORPUS_CHARS:,})", head[:MAX_CORPUS_CHARS]))
        if not whole and "--full" in sys.argv:
            runs.append((f"{path.stem} (whole)", path.read_text(encoding="utf-8")))
    rows = []
    print(f"{'corpus':<32} {'chars':>11} {'R@20':>6} {'R@100':>6} {'median':>7} {'Magikarp':>9} {'s':>6}")
    for name, text in runs:
        r = measure(tok, name, text)
        rows.append(r)
        print(f"{name:<32} {r['chars']:>11,} {r['recall@20']:>6.2f} {r['recall@100']:>6.2f} "
              f"{r['median_rank']:>7,} {r['magikarp_rank']!s:>9} {r['seconds']:>6}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"reference": "cohere-ai/magikarp gpt2, verified", "n": len(VERIFIED_GPT2),
                                   "rows": rows}, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
