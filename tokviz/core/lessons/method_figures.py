"""The figures of the lessons on the training methods of the papers: SuperBPE's two stages
(`superbpe_stages`), BoundlessBPE's supermerges (`supermerges`), parity-aware BPE's languages
(`parity_languages`) and BPE-dropout's samples of one word (`dropout_samples`). Same shape as
`figures`: ``(FigureContext) -> (Figure, caption fields)``. Each reads what the timeline declares
(`chart_marks`, `chart_second_series`, `superword_ids`, `step_kind`, `step_note`) rather than
asking which algorithm trained it.
"""

from __future__ import annotations

from tokviz.core.display.tokens import visible_token

from .figures import Figure, FigureContext, pieces

SAMPLES = 200  # draws per distribution of the dropout figure


def _step(ctx: FigureContext) -> int:
    return max(0, min(ctx.step, ctx.timeline.n_merges))


def _quoted(token: bytes) -> str:
    return f"‘{visible_token(token)}’"


def _wordy(step) -> tuple[bool, int]:
    """Sort key: superwords of whole words first (" of the" before ", ‘"), then the most frequent."""
    words = step.token.strip().split(b" ")
    return (not all(w.isalpha() for w in words), -step.count)


def superbpe_stages(ctx: FigureContext) -> tuple[Figure, dict]:
    """Bytes per token over the steps with step k marked, and where superwords begin: the
    timeline's first chart mark (the transition) and its superwords so far."""
    tl = ctx.timeline
    second = tl.chart_second_series() if tl is not None and tl.lists_merges else None
    if second is None or not tl.chart_marks():
        return Figure("curve", "Train SuperBPE first"), {}
    title, per_token = second
    k = _step(ctx)
    t = tl.chart_marks()[0][0]
    supers = tl.superword_ids(k)
    made = [s for s in tl.steps[t:k] if s.id in supers]
    fields = {"transition": t, "superwords": len(supers), "stage": "two" if k > t else "one",
              "bpt_start": f"{per_token[0]:.2f}", "bpt_transition": f"{per_token[t]:.2f}",
              "bpt_now": f"{per_token[k]:.2f}", "first_superword": _quoted(made[0].token) if made else "none yet",
              "first_superword_step": made[0].rank + 1 if made else 0,
              "top_superwords": ", ".join(_quoted(s.token) for s in sorted(made, key=_wordy)[:4]) or "none yet"}
    if ctx.text:
        fields["pieces"] = pieces(tl.tokenizer(), ctx.text, step=k)
    return Figure("curve", f"{title}: superwords may form from merge {t + 1:,}", x=tuple(range(len(per_token))),
                  y=tuple(per_token), marker=k, x_label="merges", y_label=title.lower(), log_x=False), fields


def supermerges(ctx: FigureContext) -> tuple[Figure, dict]:
    """The supermerges among the first k steps (which pair of whole pretokens, how often, what
    the best ordinary merge had), and the kind of step k."""
    tl = ctx.timeline
    if tl is None or not tl.lists_merges or not tl.step_kinds:
        return Figure("table", "Train BoundlessBPE first"), {}
    k = _step(ctx)
    supers = tl.superword_ids(k)
    made = [s for s in tl.steps[:k] if s.id in supers]
    vocab = tl.merge_vocab()
    rows = tuple((f"{s.rank + 1:,}", f"{_quoted(vocab[s.pair[0]])} + {_quoted(vocab[s.pair[1]])}",
                  _quoted(s.token), f"{s.count:,}") for s in made[-8:])
    fields = {"supermerges": len(made), "inside": k - len(made),
              "kind": tl.step_kind(k - 1) if k else "no step yet", "note": tl.step_note(k - 1) if k else "",
              "first_super": _quoted(made[0].token) if made else "none yet",
              "first_super_step": made[0].rank + 1 if made else 0,
              "latest_supers": ", ".join(_quoted(s.token) for s in made[-4:]) or "none yet"}
    if ctx.text:
        fields["pieces"] = pieces(tl.tokenizer(), ctx.text, step=k)
    title = f"Supermerges in the first {k:,} merges: {len(made):,}" + (" (the latest 8)" if len(made) > 8 else "")
    return Figure("table", title, rows=rows, labels=("merge", "two whole pretokens", "superword", "count")), fields


def parity_languages(ctx: FigureContext) -> tuple[Figure, dict]:
    """Tokens per language at step k, the language merge k served, and the Gini of the token
    counts, beside plain BPE's with as many merges on the same documents."""
    from tokviz.core.bpe.timeline import TrainSettings, train
    from tokviz.core.compare.documents import gini, split_documents

    tl = ctx.timeline
    if tl is None or not hasattr(tl, "parity_at") or not tl.documents:
        return Figure("bars", "Train parity-aware BPE on a parallel text first"), {}
    k = _step(ctx)
    now, start = tl.parity_at(k), tl.parity_at(0)
    titles = tl.documents
    fields = {"gini_start": f"{start.gini:.3f}", "gini_now": f"{now.gini:.3f}", "languages": len(titles),
              "costliest_start": titles[int(max(range(len(titles)), key=lambda d: start.tokens[d]))],
              "most_start": max(start.tokens), "least_start": min(start.tokens),
              "most_now": max(now.tokens), "least_now": min(now.tokens),
              "served": tl.step_kind(k - 1) if k else "no merge yet"}
    if k:
        d = tl.steps[k - 1].served
        before = tl.parity_at(k - 1)
        if 0 <= d < len(titles):
            fields["served_before"], fields["served_after"] = before.tokens[d], now.tokens[d]
    if ctx.corpus and k:
        s = tl.settings
        bpe = train(TrainSettings(units=s.units, split=s.split, merges=k, min_count=s.min_count), texts=[ctx.corpus])
        tok = bpe.tokenizer()
        counts = [len(tok.encode_ordinary(ctx.corpus[d.start:d.end]).ids) for d in split_documents(ctx.corpus)]
        if len(counts) == len(titles):
            fields["bpe_gini"] = f"{gini(counts):.3f}"
            fields["bpe_most"], fields["bpe_least"] = max(counts), min(counts)
            fields["bpe_costliest"] = titles[max(range(len(counts)), key=counts.__getitem__)]
    return Figure("bars", f"Tokens per language after {k:,} merges (Gini {now.gini:.3f})", labels=tuple(titles),
                  values=tuple(float(t) for t in now.tokens)), fields


def dropout_samples(ctx: FigureContext) -> tuple[Figure, dict]:
    """The segmentations of the lesson's word over `SAMPLES` draws with BPE-dropout p (the
    figure's ``dropout``), most frequent first, and how spread they are at a higher p
    (``dropout_high``)."""
    from tokviz.core.explain.samples import sample_shares

    tl = ctx.timeline
    if tl is None or not tl.lists_merges:
        return Figure("table", "Train BPE first"), {}
    tok = tl.tokenizer()
    if not tok.drops_merges:
        return Figure("table", f"{tl.title} does not join pairs: dropout applies to BPE"), {}
    k = _step(ctx)
    word = str(ctx.params.get("word", " Rabbit"))
    p, high = float(ctx.params.get("dropout", 0.1)), float(ctx.params.get("dropout_high", 0.5))
    usual = pieces(tok, word, step=k)
    low_draws = sample_shares(tl.title, tok, word, n=SAMPLES, dropout=p, step=k)
    high_draws = sample_shares(tl.title, tok, word, n=SAMPLES, dropout=high, step=k)
    joined = [("|".join(r.pieces), r) for r in low_draws.rows]
    rows = tuple((seg, f"{r.count:,}", f"{r.share:.0%}") for seg, r in joined[:10])
    usual_share = next((r.share for seg, r in joined if seg == usual), 0.0)
    high_usual = next((r.share for r in high_draws.rows if "|".join(r.pieces) == usual), 0.0)
    fields = {"word": visible_token(word.encode()), "usual": usual, "dropout": f"{p:g}", "samples": SAMPLES,
              "n_segmentations": len(low_draws.rows), "usual_share": f"{usual_share:.0%}",
              "dropout_high": f"{high:g}", "high_n_segmentations": len(high_draws.rows),
              "high_usual_share": f"{high_usual:.0%}",
              "rare": joined[-1][0] if joined else usual}
    return Figure("table", f"{SAMPLES} draws of ‘{fields['word']}’ with dropout {p:g}",
                  labels=("segmentation", "draws", "share"), rows=rows,
                  note=f"without dropout: {usual}"), fields
