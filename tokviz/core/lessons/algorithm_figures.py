"""The figures of the lessons on the other training algorithms: WordPiece's merge scores and
greedy longest match (`wordpiece_scores`), Unigram's rounds of EM and pruning with a word's best
segmentations and samples (`unigram_rounds`). Same shape as `figures`: ``(FigureContext) ->
(Figure, caption fields)``; each reads the trained timeline's own replay and explanations."""

from __future__ import annotations

from .figures import Figure, FigureContext


def _form(tl, token_id: int) -> str:
    """A WordPiece vocabulary form as text (``##ug``)."""
    return tl.token_bytes()[token_id].decode("utf-8")


def wordpiece_scores(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 13: the candidates of the merge that made step k, score next to count, and the
    greedy longest match of the lesson's words at step k (``##`` pieces, ``[UNK]`` words)."""
    from tokviz.core.wordpiece.replay import wordpiece_decision

    tl = ctx.timeline
    if tl is None or not tl.has_scores:
        return Figure("table", "Train WordPiece first"), {}
    k = max(0, min(ctx.step, tl.n_merges))
    d = wordpiece_decision(tl, k)
    rows, fields = [], {}
    for c in d.candidates[:6]:
        a, b = (_form(tl, i) for i in c.pair)
        rows.append(("★" if c.winner else "", f"{a} + {b}", f"{c.count:,}", f"{c.left_count:,} · {c.right_count:,}",
                     f"{c.score:.4f}"))
    if d.candidates:
        win = d.candidates[0]
        top = max(d.candidates, key=lambda c: c.count)
        fields["winner"] = "‘{}’ + ‘{}’".format(*(_form(tl, i) for i in win.pair))
        fields["winner_count"], fields["winner_score"] = win.count, f"{win.score:.4f}"
        fields["frequent"] = "‘{}’ + ‘{}’".format(*(_form(tl, i) for i in top.pair))
        fields["frequent_count"], fields["frequent_score"] = top.count, f"{top.score:.4f}"
    tok = tl.tokenizer()
    for key, word in (("word", ctx.params.get("word", "hugs")), ("unk", ctx.params.get("unk_word", "mug"))):
        matches = tok.explain(word, step=k)
        fields[key] = word
        fields[f"{key}_pieces"] = " ".join(m.token for m in matches if not m.reason) if not matches[-1].reason \
            else "[UNK]"
        fields[f"{key}_tried"] = ", ".join(t for m in matches for t in m.tried) or "nothing longer"
        fields[f"{key}_reason"] = matches[-1].reason or "covered"
    what = f"Merge {k}" if k else "The first merge"
    fig = Figure("table", f"{what}: score = count(ab) / (count(a) · count(b))",
                 ("", "pair", "count(ab)", "count(a) · count(b)", "score"), rows=tuple(rows), note=d.note)
    return fig, fields


def unigram_rounds(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 14: the rounds up to k (vocabulary, log-likelihood, pruned pieces), and for the
    lesson's word the n best segmentations at round k with their probabilities, and samples."""
    import random

    tl = ctx.timeline
    if tl is None or tl.lists_merges:
        return Figure("table", "Train Unigram first"), {}
    k = max(0, min(ctx.step, tl.last_step))
    rounds = tl.steps[: k + 1]
    rows = tuple((str(r.index), str(r.vocab_size), f"{r.log_likelihood:,.1f}", str(len(r.pruned)),
                  " ".join(p.piece for p in r.pruned[:4]) + (" …" if len(r.pruned) > 4 else ""))
                 for r in rounds)
    r = rounds[-1]
    fields = {"seed_size": tl.steps[0].vocab_size, "vocab_size": r.vocab_size, "pruned": len(r.pruned),
              "log_likelihood": f"{r.log_likelihood:,.1f}", "rounds": tl.last_step,
              "pruned_examples": ", ".join(f"‘{p.piece}’" for p in r.pruned[:3]) or "none"}
    if r.pruned:
        p = max(r.pruned, key=lambda p: p.loss)  # the costliest to lose
        fields["pruned_piece"], fields["pruned_loss"] = p.piece, f"{p.loss:.2f}"
        fields["pruned_alternative"] = " ".join(p.alternative) or "unused"
    tok = tl.tokenizer()
    word = ctx.params.get("word", "hugs")
    ex = tok.explain(word, step=k, n=3)
    shown = [(" ".join(s.pieces), f"{s.prob:.1%}") for s in ex.nbest]
    fields["word"], fields["n_segmentations"] = word, ex.n_segmentations
    fields["best"], fields["best_prob"] = shown[0]
    fields["second"], fields["second_prob"] = shown[1] if len(shown) > 1 else ("none", "0%")
    rng = random.Random(int(ctx.params.get("seed", 0)))
    alpha = float(ctx.params.get("alpha", 0.2))  # < 1 flattens the distribution: more variety
    fields["alpha"] = f"{alpha:g}"
    fields["samples"] = " · ".join(" ".join(tok.sample(word, alpha=alpha, step=k, rng=rng).pieces) for _ in range(4))
    return Figure("table", f"Rounds 0–{k}: EM, then pruning", ("round", "vocab", "log-likelihood", "pruned", "examples"),
                  rows=rows), fields
