"""``tokviz info MODEL``: what a tokenizer is, in lines or one JSON object: its summary (the
window's), and for a loaded tokenizer its pre-tokenizer's fingerprint: the family its split and
normalizer belong to, the check-text hash, the split its vocabulary was made with, and warnings
(a known-bad regex, a GGUF file declaring a pre-tokenizer its vocabulary does not fit)."""

from __future__ import annotations

import argparse
import json
import sys


def run_info(args: argparse.Namespace, read_model) -> int:
    timeline = read_model(args.model, args.pattern)
    from tokviz.core.explain.fingerprints import fingerprint
    from tokviz.core.explain.loaded_timeline import LoadedTimeline

    # a model trained in tokviz shows its split in its settings; a loaded tokenizer is fingerprinted
    found = fingerprint(timeline.tokenizer()) if isinstance(timeline, LoadedTimeline) else None
    if not args.json:
        lines = timeline.settings.describe() if found is not None else timeline.describe()
        print("\n".join(lines + (found.describe() if found is not None else [])))
        return 0
    data: dict = {"summary": timeline.describe() if found is None else timeline.settings.describe()}
    if found is not None:
        origin = found.origin
        data.update(family=found.family, check_hash=found.check_hash, by_pattern=found.by_pattern,
                    declared_pre=found.declared_pre, warnings=list(found.warnings),
                    vocab_origin=None if origin is None else {
                        "origin": list(origin.origin), "sample": origin.sample, "own_share": origin.own_share,
                        "shares": origin.shares, "unformable": list(origin.unformable)})
    json.dump(data, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
