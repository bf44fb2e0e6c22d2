"""The token view's texts: the Diagnostics tab as HTML for a QTextBrowser, and token tooltips.

Round trip (with the lost characters), leading-space twins, digit runs, trailing whitespace,
tokens per character by script and tokens never seen in training. What it leaves out: computing
them (`tokviz.core.display.diagnostics`, run by the engine).
"""

from __future__ import annotations

import html
import math

from PySide6.QtGui import QPalette

from tokviz.core.display.tokens import KIND_NAMES, escape_text, hex_bytes, token_label
from tokviz.core.special_tokens import added_token_map
from tokviz.panels.base import error_color, muted_color, ok_color


def _code(s: str) -> str:
    return f"<code>{html.escape(s)}</code>"


def diagnostics_html(result, palette: QPalette) -> str:
    ok, bad, muted = ok_color(palette).name(), error_color(palette).name(), muted_color(palette).name()
    ref = result.reference
    text = result.request.text
    d = result.diagnostics
    out = [f"<h3>{html.escape(ref.spec.title)}</h3>"]
    rt = ref.round_trip
    if rt is not None:
        if rt.ok:
            out.append(f"<p><b style='color:{ok}'>Round trip ✓</b> decode(encode(text)) == text</p>")
        else:
            out.append(f"<p><b style='color:{bad}'>Round trip ✗</b> {html.escape(rt.summary())}</p>")
            if rt.lossy:
                shown = rt.lossy[:40]
                items = ", ".join(f"{_code(text[a:b])} at {a}" for a, b in shown)
                out.append(f"<p>Lost: {items}{' …' if len(rt.lossy) > 40 else ''}</p>")
    for row in result.rows[1:]:
        r = row.round_trip
        if r is not None and not r.ok:
            lost = sorted({text[a:b] for a, b in r.lossy[:5000]})  # a 1 MB paste can lose 100k positions
            what = ", ".join(_code(s) for s in lost[:20]) if lost else html.escape(r.note)
            out.append(f"<p style='color:{muted}'>{html.escape(row.spec.title)}: round trip ✗ ({what})</p>")
    if d is None:
        return "".join(out)
    out.append("<h4>Leading-space twins</h4>")
    if d.twins:
        out.append("<p>" + "; ".join(f"{_code(t.word)} = {t.bare_id}, {_code(' ' + t.word)} = {t.spaced_id}"
                                      for t in d.twins[:30]) + "</p>")
    else:
        out.append(f"<p style='color:{muted}'>No word of this text is in the vocabulary both with and without a "
                   "leading space.</p>")
    out.append("<h4>Digit runs</h4>")
    if d.digits:
        out.append("<p>" + ", ".join(f"{_code(r.digits)} → {_code(r.pattern)}" for r in d.digits[:30]) + "</p>")
    else:
        out.append(f"<p style='color:{muted}'>No digits.</p>")
    out.append("<h4>Trailing whitespace</h4>")
    if d.trailing:
        lines = ", ".join(str(n) for n in d.trailing[:30])
        out.append(f"<p style='color:{bad}'>⚠ Lines ending in spaces or tabs: {lines}. Trailing whitespace becomes "
                   "tokens of its own (and differs from the leading space of the next word).</p>")
    else:
        out.append(f"<p style='color:{muted}'>None.</p>")
    out.append("<h4>Tokens per character by script</h4><table cellspacing='0' cellpadding='3'>"
               "<tr><th align='left'>script</th><th align='right'>characters</th><th align='right'>tokens</th>"
               "<th align='right'>tokens/char</th></tr>")
    for s in d.scripts:
        out.append(f"<tr><td>{html.escape(s.script)}</td><td align='right'>{s.chars:,}</td>"
                   f"<td align='right'>{s.tokens:,}</td><td align='right'>{s.tokens_per_char:.2f}</td></tr>")
    out.append("</table>")
    _unknown_html(out, d, bad, muted)
    out.append("<h4>Tokens never seen in training</h4>")
    if d.unseen:
        enc = ref.encoding
        items = []
        for i, tid in d.unseen[:40]:
            a, b = enc.spans[i]
            label = token_label(enc.tokens[i], show_whitespace=True)[0] if i not in enc.unknown else "[UNK]"
            items.append(f"{_code(label)} (id {tid}, for {_code(escape_text(text[a:b], show_whitespace=True))})")
        out.append(f"<p style='color:{bad}'>" + ", ".join(items) + "</p>")
    else:
        out.append(f"<p style='color:{muted}'>Every token of this text occurs in the training corpus.</p>")
    return "".join(out)


def _unknown_html(out: list[str], d, bad: str, muted: str) -> None:
    """The unknown words of the text and the out-of-vocabulary rate on the corpus (tokenizers
    with an unknown token: WordLevel, WordPiece, Unigram)."""
    u, c = d.unknown, d.corpus_unknown
    if u is None and c is None:
        return
    out.append("<h4>Unknown words ([UNK])</h4>")
    if c is not None:
        where = "the corpus" if c.complete else f"the first {c.chars:,} characters of the corpus"
        out.append(f"<p><b>Out-of-vocabulary rate on {where}: {100 * c.rate:.2f}%</b> "
                   f"({c.unknown:,} of {c.tokens:,} tokens unknown, {c.distinct:,} distinct words)</p>")
    if u is not None and u.unknown:
        items = ", ".join(f"{_code(w)} ×{n}" if n > 1 else _code(w) for w, n in u.words)
        more = " …" if u.distinct > len(u.words) else ""
        out.append(f"<p style='color:{bad}'>In this text {u.unknown:,} of {u.tokens:,} tokens "
                   f"({100 * u.rate:.1f}%) are unknown: {items}{more}</p>")
    elif u is not None:
        out.append(f"<p style='color:{muted}'>Every word of this text is in the vocabulary.</p>")


def token_tooltip_html(result, row: int, index: int) -> str:
    """Tooltip of token `index` of row `row`: id, kind, escaped text, hex bytes, span, and for the
    trained tokenizer the merge that made it (rank, pair) and its count in the training corpus."""
    if result is None or row >= len(result.rows) or index >= len(result.rows[row].encoding.ids):
        return ""
    r = result.rows[row]
    enc, tok = r.encoding, r.tokenizer
    tid, data = enc.ids[index], enc.tokens[index]
    a, b = enc.spans[index]
    text = result.request.text
    kind = r.labels.kinds[index] if index < len(r.labels.kinds) else 0
    label, partial = token_label(data, show_whitespace=True)
    lines = [f"<b>id {tid}</b> · {KIND_NAMES[kind]} · {r.spec.title}",
             f"text: <code>{html.escape(label)}</code>",
             f"bytes: <code>{hex_bytes(data)}</code>",
             f"characters {a}–{b}: <code>{html.escape(escape_text(text[a:b], show_whitespace=True))}</code>"
             if a < b else f"inserted at character {a}: covers no text"]
    if partial:
        lines.append("part of a character: its bytes are shown as &lt;XX&gt;")
    if index in enc.unknown:
        lines.append("<b>unknown</b>: not in the vocabulary, decoding loses it")
    if index < len(r.marked) and r.marked[index]:  # the bar under it
        lines.append("<b>superword</b>: one token across word boundaries")
    added = added_token_map(tok).get(tid) if index in enc.special else None
    if added is not None:
        lines.append(f"<b>{html.escape(added.describe())}</b>")
    if tok.scores_pieces and tid >= tok.n_special:  # a Unigram piece
        lp = tok.log_prob(tid, step=r.spec.step)
        lines.append(f"log-probability {lp:.3f} (p = {math.exp(lp):.2g})" if lp is not None else "pruned by then")
    if tok.ids_by_merge_rank:  # trained BPE, minbpe: merge ranks and corpus counts
        pair = tok.merge_of(tid)
        if pair is not None:
            left = html.escape(token_label(tok.token_bytes(pair[0]), show_whitespace=True)[0])
            right = html.escape(token_label(tok.token_bytes(pair[1]), show_whitespace=True)[0])
            rank = tid - tok.base_size
            lines.append(f"merge {rank + 1:,} (step {rank + 1:,}): ({pair[0]}, {pair[1]}) "
                         f"<code>{left}</code> + <code>{right}</code>")
        elif tid < tok.base_size:
            lines.append("base unit (no merge)")
        count = result.counts.get(tid)
        if count is not None and r.spec.key in ("step", "final"):
            what = "pair count when merged" if pair is not None else "count in the training corpus"
            lines.append(f"{what}: {count:,}")
    return "<br>".join(lines)
