"""The numbers behind the guided lessons: a small chart or table per lesson, and caption fields.

Each figure kind is a function ``(FigureContext) -> (Figure, fields)``: the figure is plain data
(bars, a table or a curve) that the lesson panel draws; the fields fill the ``{name}`` slots of
the captions. `step_fields` gives the fields every lesson may use (the merge made at step k, the
vocabulary size, token counts). All of it is plain maths on a timeline, a text and tokenizers.
The figures of the WordPiece and Unigram lessons are in `algorithm_figures`; the table of figure
kinds (and `compute_figure`) is `figure_kinds`.

>>> counts = unit_counts(FigureContext(text="the cat sat on the mat"))[1]
>>> counts["chars"], counts["words"]
(22, 6)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import regex

from tokviz.core.baselines import CharTokenizer, WordTokenizer
from tokviz.core.bpe.timeline import Timeline, TrainSettings, train
from tokviz.core.display.tokens import token_label
from tokviz.core.explain.numbers import number_grid

PIECE_SEPARATOR = "|"
_SPANS_SPACE = regex.compile(r"\S\s")  # a non-space then a space: the token crosses a word boundary


@dataclass(frozen=True)
class Figure:
    """What the lesson panel draws. ``kind``: "bars" (labels, values), "table" (header, rows) or
    "curve" (x, y, `marker` = index of the highlighted point)."""

    kind: str
    title: str
    labels: tuple[str, ...] = ()
    values: tuple[float, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    marker: int | None = None
    x_label: str = ""
    y_label: str = ""
    note: str = ""
    log_x: bool = True  # a curve's x axis: log scale (vocabulary sizes), else linear (steps)


@dataclass
class FigureContext:
    """What a figure may read: the lesson's text and corpus, the trained timeline at `step`,
    loaded pretrained tokenizers (by `lessons.PRETRAINED` name), an embedding table and the
    figure's parameters from the lesson file."""

    text: str = ""
    corpus: str = ""
    timeline: Timeline | None = None
    step: int = 0
    tokenizers: Mapping[str, object] = field(default_factory=dict)
    embedding: tuple | None = None  # (vectors (V, D), labels, counts per id)
    params: Mapping = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)  # tokenizer name -> file it needs
    batch: tuple | None = None  # (Batch, lines, bos id, eos id, pad id) as the token view shows it


def pieces(tokenizer, text: str, *, step: int | None = None) -> str:
    """``"␣Solid|Gold"``: the tokens of `text`, spaces shown as ␣, joined by ``|``."""
    enc = tokenizer.encode_ordinary(text, step=step) if step is not None else tokenizer.encode_ordinary(text)
    return PIECE_SEPARATOR.join(token_label(t, show_whitespace=True)[0] for t in enc.tokens)


def _show(data: bytes) -> str:
    return token_label(data, show_whitespace=True)[0]


# -- fields every lesson may use ---------------------------------------------------------------


def step_fields(timeline: Timeline | None, step: int, text: str = "") -> dict:
    """``step``, ``n_steps``, ``merges``, ``merge`` (the merge made to reach `step`), its ``count``,
    ``vocab`` (vocabulary size at `step`), ``corpus_tokens`` and ``tokens`` (of `text`)."""
    if timeline is None:
        return {"step": step, "n_steps": 0, "merges": 0}
    if not timeline.lists_merges:  # Unigram: step k is round k
        k = max(0, min(step, timeline.last_step))
        r = timeline.steps[k]
        out = {"step": k, "n_steps": timeline.last_step, "merges": 0, "vocab": r.vocab_size,
               "corpus_tokens": f"{r.viterbi_tokens:,}", "count": r.n_pruned,
               "merge": f"round {k}: {r.n_pruned} pieces pruned" if k else "the seed vocabulary"}
        if text:
            out["tokens"] = len(timeline.tokenizer().encode_ordinary(text, step=k).ids)
        return out
    k = max(0, min(step, timeline.n_merges))
    out = {"step": k, "n_steps": timeline.n_merges, "merges": timeline.n_merges,
           "vocab": timeline.vocab_size - timeline.n_merges + k, "corpus_tokens": f"{timeline.length_at(k):,}"}
    if k:
        s = timeline.steps[k - 1]
        vocab = timeline.token_bytes()
        a, b = s.pair
        out["merge"] = f"‘{_show(vocab[a])}’ + ‘{_show(vocab[b])}’ → ‘{_show(s.token)}’ (count {s.count:,})"
        out["count"] = s.count
    else:
        out["merge"] = "no merge yet"
    if text:
        out["tokens"] = len(timeline.tokenizer().encode_ordinary(text, step=k).ids)
    return out


# -- one function per figure kind --------------------------------------------------------------


def unit_counts(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 1: tokens of the text as characters, words and BPE subwords (all merges)."""
    text = ctx.text
    fields = {"chars": len(text), "words": len(text.split())}
    labels, values = ["characters", "words"], [fields["chars"], fields["words"]]
    if ctx.timeline is not None:
        fields["subwords"] = len(ctx.timeline.tokenizer().encode_ordinary(text).ids)
        fields["subword_pieces"] = pieces(ctx.timeline.tokenizer(), text)
        labels.append("subwords")
        values.append(fields["subwords"])
    return Figure("bars", f"Tokens for “{text}”", tuple(labels), tuple(values), y_label="tokens"), fields


def oov(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 2: character- and word-level vocabularies from the corpus meet new text; byte BPE."""
    text = ctx.text
    words, chars = WordTokenizer.from_texts([ctx.corpus]), CharTokenizer.from_texts([ctx.corpus])
    rows, fields = [], {}
    for key, tok in (("word", words), ("char", chars)):
        enc = tok.encode(text)
        lost = [text[enc.spans[i][0]:enc.spans[i][1]] for i in enc.unknown]
        fields[f"{key}_tokens"], fields[f"{key}_unk"] = len(enc.ids), len(enc.unknown)
        fields[f"{key}_lost"] = ", ".join(dict.fromkeys(lost)) or "nothing"
        ok = tok.decode(enc.ids) == text
        rows.append((f"{key}-level ({tok.n_vocab - 1} {key}s seen)", str(len(enc.ids)), str(len(enc.unknown)),
                     "✓" if ok else f"✗ → {tok.decode(enc.ids)}"))
    if ctx.timeline is not None:
        tok = ctx.timeline.tokenizer()
        enc = tok.encode_ordinary(text)
        ok = tok.decode(enc.ids) == text
        fields["bpe_tokens"], fields["bpe_round_trip"] = len(enc.ids), "yes" if ok else "no"
        rows.append((f"byte-level BPE ({ctx.timeline.n_merges} merges)", str(len(enc.ids)), "0", "✓" if ok else "✗"))
    fig = Figure("table", f"New text: “{text}”", ("vocabulary", "tokens", "[UNK]", "round trip"), rows=tuple(rows))
    return fig, fields


def segmentations(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 3: each distinct corpus word as tokens at the current step."""
    tl = ctx.timeline
    counts: dict[str, int] = {}
    for w in ctx.corpus.split():
        counts[w] = counts.get(w, 0) + 1
    rows = []
    if tl is not None:
        tok = tl.tokenizer()
        rows = [(w, str(n), pieces(tok, w, step=ctx.step)) for w, n in counts.items()]
    fig = Figure("table", f"The corpus after {ctx.step} merge{'s' * (ctx.step != 1)}", ("word", "count", "tokens"),
                 rows=tuple(rows))
    return fig, {}


_curve_cache: dict = {}


def vocab_curve(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 4: tokens of the text as the vocabulary grows, from one training run (step k =
    vocabulary base + k). Monotone: one more merge never adds a token."""
    tl = ctx.timeline
    if tl is None:
        return Figure("curve", "Train first"), {}
    base = tl.vocab_size - tl.n_merges
    key = (id(tl), tl.n_merges, ctx.text)
    if key not in _curve_cache:
        ks = sorted({int(round(k)) - 1 for k in np.geomspace(1, tl.n_merges + 1, 48)} | {0, tl.n_merges})
        tok = tl.tokenizer()
        _curve_cache.clear()
        _curve_cache[key] = (ks, [len(tok.encode_ordinary(ctx.text, step=k).ids) for k in ks])
    ks, ys = _curve_cache[key]
    k = max(0, min(ctx.step, tl.n_merges))
    marker = min(range(len(ks)), key=lambda i: abs(ks[i] - k))
    fields = {"base": base, "max_vocab": tl.vocab_size, "first_tokens": ys[0], "last_tokens": ys[-1]}
    fig = Figure("curve", f"Tokens for the sentence, by vocabulary size ({ctx.params.get('x_note', '')})".replace(" ()", ""),
                 x=tuple(base + k for k in ks), y=tuple(ys), marker=marker, x_label="vocabulary size",
                 y_label="tokens")
    return fig, fields


def utf8_table(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 5: characters as UTF-8 bytes; how many tokens of the text hold part of a character."""
    chars = ctx.params.get("chars", "aé東👋")
    rows = tuple((c, f"U+{ord(c):04X}", c.encode("utf-8").hex(" ").upper(), str(len(c.encode("utf-8"))))
                 for c in chars)
    fields = {"chars": len(ctx.text), "bytes": len(ctx.text.encode("utf-8"))}
    if ctx.timeline is not None:
        enc = ctx.timeline.tokenizer().encode_ordinary(ctx.text, step=ctx.step)
        fields["partial"] = sum(token_label(t)[1] for t in enc.tokens)
        fields["tokens"] = len(enc.ids)
    return Figure("table", "Characters as UTF-8 bytes", ("char", "code point", "UTF-8 bytes", "bytes"), rows=rows), fields


def spans_space(token: bytes) -> bool:
    """True when a token crosses a word boundary: a non-space character followed by a space.

    >>> spans_space(b"e t"), spans_space(b" the"), spans_space(b"at ")
    (True, False, True)
    """
    return bool(_SPANS_SPACE.search(token.decode("utf-8", errors="replace")))


def cross_space(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 6: train the corpus with each split (same merge budget) and count the merges whose
    token crosses a space."""
    merges = int(ctx.params.get("merges", 40))
    rows, fields = [], {}
    for split in ctx.params.get("splits", ("none", "gpt2")):
        tl = train(TrainSettings(units="bytes", split=split, merges=merges), texts=[ctx.corpus])
        crossing = [s.token for s in tl.steps if spans_space(s.token)]
        fields[f"{split}_cross"] = len(crossing)
        fields[f"{split}_examples"] = ", ".join(f"‘{_show(t)}’" for t in crossing[:4]) or "none"
        rows.append((split, str(tl.n_merges), str(len(crossing)), fields[f"{split}_examples"]))
    return Figure("table", "Merges that cross a space", ("split", "merges", "crossing a space", "examples"),
                  rows=tuple(rows)), fields


def digits(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 8: numbers as tokens in each pretrained tokenizer (``|`` between tokens)."""
    names = list(ctx.params.get("tokenizers", ("gpt2", "cl100k_base", "o200k_base")))
    numbers = list(ctx.params.get("numbers", ("2024", "1234567")))
    focus = ctx.params.get("focus", numbers[-1])
    rows, fields = [], {"number": focus}
    for n in numbers:
        row = [n]
        for name in names:
            tok = ctx.tokenizers.get(name)
            row.append(pieces(tok, n) if tok is not None else f"needs {ctx.missing.get(name, name)}")
        rows.append(tuple(row))
    for name in names:
        tok = ctx.tokenizers.get(name)
        fields[f"{name}_pieces"] = pieces(tok, focus) if tok is not None else f"(needs {ctx.missing.get(name, name)})"
        fields[f"{name}_one_token"] = (f"{number_grid(tok).summary()['one_token']:.0%}" if tok is not None
                                       else f"(needs {ctx.missing.get(name, name)})")
    return Figure("table", "Numbers as tokens", ("number", *names), rows=tuple(rows)), fields


def scripts(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 9: tokens per character for each ``Language: sentence`` line of the text."""
    tl = ctx.timeline
    if tl is None:
        return Figure("bars", "Train first"), {}
    tok = tl.tokenizer()
    ratios: list[tuple[str, float]] = []
    for line in ctx.text.splitlines():
        lang, sep, sentence = line.partition(":")
        sentence = sentence.strip()
        if sep and sentence:
            ratios.append((lang.strip(), len(tok.encode_ordinary(sentence).ids) / len(sentence)))
    ratios.sort(key=lambda r: r[1])
    if not ratios:
        return Figure("bars", "No 'Language: sentence' lines"), {}
    (low, lr), (high, hr) = ratios[0], ratios[-1]
    fields = {"least_lang": low, "least_ratio": f"{lr:.2f}", "most_lang": high, "most_ratio": f"{hr:.2f}",
              "factor": f"{hr / lr:.1f}"}
    return Figure("bars", "Tokens per character", tuple(r[0] for r in ratios), tuple(round(r[1], 3) for r in ratios),
                  y_label="tokens per character"), fields


def glitch(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 10: the ids and tokens of a few texts in each pretrained tokenizer."""
    texts = list(ctx.params.get("texts", (" SolidGoldMagikarp", "SolidGoldMagikarp")))
    rows, fields = [], {}
    for name in ctx.params.get("tokenizers", ("gpt2",)):
        tok = ctx.tokenizers.get(name)
        for i, t in enumerate(texts):
            if tok is None:
                rows.append((_show(t.encode()), name, f"needs {ctx.missing.get(name, name)}", ""))
                fields[f"{name}_ids_{i}"] = fields[f"{name}_pieces_{i}"] = f"(needs {ctx.missing.get(name, name)})"
                continue
            ids = tok.encode_ordinary(t).ids
            fields[f"{name}_ids_{i}"] = ", ".join(map(str, ids))
            fields[f"{name}_pieces_{i}"] = pieces(tok, t)
            fields[f"{name}_count_{i}"] = len(ids)
            rows.append((_show(t.encode()), name, fields[f"{name}_ids_{i}"], fields[f"{name}_pieces_{i}"]))
    return Figure("table", "Glitch token", ("text", "tokenizer", "ids", "tokens"), rows=tuple(rows)), fields


def batch_table(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 7: the padded ids and the attention mask of each line, BOS/EOS/PAD by name."""
    if ctx.batch is None:
        return Figure("table", "No batch yet"), {}
    batch, lines, bos, eos, pad = ctx.batch
    names = {i: n for i, n in ((bos, "BOS"), (eos, "EOS"), (pad, "PAD")) if i is not None}
    rows = []
    for line, ids, mask in zip(lines, batch.ids.tolist(), batch.attention_mask.tolist()):
        rows.append((line if len(line) <= 14 else line[:13] + "…", " ".join(names.get(i, str(i)) for i in ids),
                     " ".join(map(str, mask))))
    fields = {"width": batch.ids.shape[1] if batch.ids.ndim == 2 else 0, "pad_id": pad}
    return Figure("table", "The batch: padded ids and attention mask", ("line", "ids", "mask"), rows=tuple(rows)), fields


def static_table(ctx: FigureContext) -> tuple[Figure, dict]:
    """A table written in the lesson file: ``{"kind": "table", "title": ..., "header": [...], "rows": [[...]]}``."""
    p = ctx.params
    return Figure("table", p.get("title", ""), tuple(p["header"]), rows=tuple(tuple(r) for r in p["rows"])), {}


def neighbours(ctx: FigureContext) -> tuple[Figure, dict]:
    """Lesson 11: the nearest tokens (cosine) of one token in the current embedding table."""
    from tokviz.core.embeddings import nearest_neighbours

    word = ctx.params.get("token", " the")
    if ctx.embedding is None:
        return Figure("table", "No embedding table yet"), {"token": _show(word.encode())}
    vectors, labels, counts = ctx.embedding
    tl = ctx.timeline
    ids = tl.tokenizer().encode_ordinary(word, step=ctx.step).ids if tl is not None else []
    if len(ids) != 1:
        return Figure("table", f"‘{word}’ is not one token"), {"token": _show(word.encode())}
    among = np.flatnonzero(np.asarray(counts)) if counts is not None else None
    near = nearest_neighbours(vectors, ids[0], 6, among=among if among is not None and len(among) > 1 else None)
    rows = tuple((str(i + 1), labels[t], f"{s:+.2f}") for i, (t, s) in enumerate(near))
    fields = {"token": _show(word.encode()), "nearest": ", ".join(f"‘{labels[t]}’" for t, _ in near[:3]),
              "best_similarity": f"{near[0][1]:+.2f}" if near else "…"}
    return Figure("table", f"Nearest to ‘{_show(word.encode())}’", ("#", "token", "cosine"), rows=rows), fields


__all__ = ["Figure", "FigureContext", "pieces", "spans_space", "step_fields"]
