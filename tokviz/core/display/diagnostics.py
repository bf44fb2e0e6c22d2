"""Teaching and debugging aids for one tokenized text, and its export as HTML or JSON.

Diagnostics (each a small function of the text and its `Encoding`):

* `leading_space_twins`: words of the text whose vocabulary has both ``hello`` and `` hello``;
* `digit_runs`: how runs of digits were cut (``2024`` -> ``20|24``);
* `trailing_whitespace`: lines ending in spaces or tabs (they become tokens of their own);
* `script_counts`: characters and tokens per writing system (tokens per character by script);
* `unseen_tokens`: tokens whose count in the training corpus is zero;
* `unknown_words`: what became an unknown token (``[UNK]``), how often, and the share of tokens
  it is (a WordLevel model's out-of-vocabulary rate).

Export: `export_json` (ids, tokens, spans), `export_html` (a self-contained coloured page).

What this leaves out: drawing, threads (`tokviz.engine.token_view.token_view_engine` runs these off the GUI
thread) and where counts come from (the caller passes them).
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import regex

from tokviz.core.encoding import Encoding

from .palette import TokenPalette, token_colors
from .tokens import BYTES, INSERTED, SPECIAL, UNKNOWN, hex_bytes, token_labels, token_stats

_WORD = re.compile(r"\w+")
# scanned with concurrent=True: a megabyte with few matches is one long search, which must not hold
# the GIL from the window while the token view's worker runs it
_DIGITS = regex.compile(r"\d+")
_TRAILING = regex.compile(r"[ \t]+(?=\r?\n|\Z)")


@dataclass(frozen=True)
class Twin:
    word: str
    bare_id: int  # id of "word"
    spaced_id: int  # id of " word"


def leading_space_twins(text: str, lookup: Callable[[bytes], int | None], *, limit: int = 50) -> list[Twin]:
    """Words of `text` that are in the vocabulary both with and without a leading space.

    `lookup` maps token bytes to an id (None when absent).
    """
    out, seen = [], set()
    for m in _WORD.finditer(text):
        w = m.group()
        if w in seen:
            continue
        seen.add(w)
        bare, spaced = lookup(w.encode()), lookup(b" " + w.encode())
        if bare is not None and spaced is not None:
            out.append(Twin(w, bare, spaced))
            if len(out) >= limit:
                break
    return out


@dataclass(frozen=True)
class DigitRun:
    start: int
    digits: str
    pieces: tuple[str, ...]  # the run cut at token boundaries

    @property
    def pattern(self) -> str:
        return "|".join(self.pieces)


def digit_runs(text: str, enc: Encoding, *, limit: int = 50) -> list[DigitRun]:
    """How each run of digits (first `limit`) is cut by the tokens of `enc`."""
    starts = ends = None
    out = []
    for m in _DIGITS.finditer(text, concurrent=True):
        a, b = m.span()
        if starts is None:  # token starts and ends, each in text order (no sort of a megabyte's spans)
            starts, ends = [x for x, _ in enc.spans], [y for _, y in enc.spans]
        inside = {x for bounds in (starts, ends)
                  for x in bounds[bisect.bisect_right(bounds, a):bisect.bisect_left(bounds, b)]}
        cuts = [a, *sorted(inside), b]
        out.append(DigitRun(a, m.group(), tuple(text[x:y] for x, y in zip(cuts, cuts[1:], strict=False))))
        if len(out) >= limit:
            break
    return out


def trailing_whitespace(text: str) -> list[int]:
    """1-based numbers of the lines that end in spaces or tabs."""
    out, line, pos = [], 1, 0
    for m in _TRAILING.finditer(text, concurrent=True):
        if m.end() > m.start():
            line += text.count("\n", pos, m.start())  # counted from the last match: linear, not quadratic
            pos = m.start()
            out.append(line)
    return out


def script_of(c: str) -> str:
    """A coarse writing-system name: ``Latin``, ``Han``, ``Cyrillic``, ``Emoji``, ``Digit``, ...

    >>> script_of("é"), script_of("東"), script_of("7")
    ('Latin', 'Han', 'Digit')
    """
    if c.isspace():
        return "Space"
    cat = unicodedata.category(c)
    if cat == "Nd":
        return "Digit"
    if cat.startswith("P"):
        return "Punctuation"
    if cat == "So" or 0x1F000 <= ord(c) <= 0x1FAFF:
        return "Emoji/symbol"
    if cat in ("Cf", "Cc", "Mn", "Sk"):
        return "Other"
    name = unicodedata.name(c, "")
    if name.startswith("CJK"):
        return "Han"
    word = name.split(" ", 1)[0]
    return word.capitalize() if word else "Other"


@dataclass(frozen=True)
class ScriptCount:
    script: str
    chars: int
    tokens: int

    @property
    def tokens_per_char(self) -> float:
        return self.tokens / self.chars if self.chars else 0.0


def script_counts(text: str, enc: Encoding) -> list[ScriptCount]:
    """Characters and tokens per script; a token counts for the script of its first character
    (so four byte tokens of one emoji give 4 tokens for 1 character). Most characters first."""
    cache: dict[str, str] = {}

    def script(c: str) -> str:
        s = cache.get(c)
        if s is None:
            s = cache[c] = script_of(c)
        return s

    chars: dict[str, int] = {}
    for c in text:
        s = script(c)
        chars[s] = chars.get(s, 0) + 1
    tokens: dict[str, int] = {}
    for a, b in enc.spans:
        if b > a:
            s = script(text[a])
            tokens[s] = tokens.get(s, 0) + 1
    rows = [ScriptCount(s, n, tokens.get(s, 0)) for s, n in chars.items()]
    return sorted(rows, key=lambda r: (-r.chars, r.script))


def unseen_tokens(enc: Encoding, counts: Mapping[int, int], *, limit: int = 50) -> list[tuple[int, int]]:
    """(token index, id) of tokens whose training-corpus count is zero (or unknown tokens)."""
    out = []
    unknown = set(enc.unknown)
    for i, t in enumerate(enc.ids):
        if i in unknown or counts.get(t, 1) == 0:
            out.append((i, t))
            if len(out) >= limit:
                break
    return out


@dataclass(frozen=True)
class UnknownWords:
    """The unknown tokens of a text: `tokens` in all (those a post-processor inserted, such as
    ``[CLS]``, left out), `unknown` of them unknown, the texts they
    stand for (`words`, most frequent first, at most a limit) and how many distinct ones
    (`distinct`), over the first `chars` characters of the text (`complete`: all of it)."""

    tokens: int
    unknown: int
    words: tuple[tuple[str, int], ...]
    distinct: int
    chars: int
    complete: bool = True

    @property
    def rate(self) -> float:
        """Share of the tokens that are unknown (0 for no tokens)."""
        return self.unknown / self.tokens if self.tokens else 0.0


def unknown_words(text: str, enc: Encoding, *, limit: int = 50, complete: bool = True) -> UnknownWords:
    """`UnknownWords` of `enc`, the encoding of `text`.

    >>> enc = Encoding([5, 0, 7, 0, 2], [b"a", b"?", b"b", b"?", b"[SEP]"], [(0, 1), (2, 5), (6, 7), (8, 11),
    ...                (11, 11)], unknown=[1, 3])
    >>> u = unknown_words("a xyz b xyz", enc)
    >>> u.words, u.unknown, u.tokens, u.rate, u.distinct
    ((('xyz', 2),), 2, 4, 0.5, 1)
    """
    counts: dict[str, int] = {}
    spans = enc.spans
    for i in enc.unknown:
        a, b = spans[i]
        w = text[a:b]
        counts[w] = counts.get(w, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    tokens = len(enc.ids) - sum(1 for a, b in spans if a == b)
    return UnknownWords(tokens, len(enc.unknown), tuple(top), len(counts), len(text), complete)


# -- export -----------------------------------------------------------------------------------


def export_json(text: str, enc: Encoding, *, name: str = "", step: int | None = None) -> dict:
    """``{"tokenizer", "step", "text", "ids", "tokens", "tokens_hex", "spans", "unknown", "special",
    "inserted", "stats"}`` (`Encoding`'s span convention: an inserted token has an empty span)."""
    labels = token_labels(text, enc, show_whitespace=True)
    st = token_stats(text, enc)
    return {
        "format": "tokviz-tokens",
        "version": 1,
        "tokenizer": name,
        "step": step,
        "text": text,
        "ids": list(enc.ids),
        "tokens": labels.labels,
        "tokens_hex": [t.hex() for t in enc.tokens],
        "spans": [list(s) for s in enc.spans],
        "unknown": list(enc.unknown),
        "special": list(enc.special),
        "inserted": enc.inserted,
        "stats": {"tokens": st.tokens, "characters": st.chars, "bytes": st.bytes},
    }


_CSS = """body{{font-family:system-ui,sans-serif;background:{page};color:{fg};margin:2em}}
.tokens{{font-family:ui-monospace,Menlo,Consolas,monospace;line-height:2.1;white-space:pre-wrap}}
.t{{padding:2px 1px;border-radius:3px;{border}}}
.b{{font-size:85%}}
.s{{background:{sbg};color:{sfg};border-radius:8px;padding:2px 6px}}
.i{{background:none;color:{fg};border:1px dashed {sbg}}}
.u{{background:{ubg};color:{ufg};text-decoration:line-through wavy}}
.id{{font-size:70%;vertical-align:sub;opacity:.8}}
.stats{{color:{fg};opacity:.8;margin-top:1em}}"""


def export_html(
    text: str,
    enc: Encoding,
    palette: TokenPalette,
    *,
    title: str = "tokviz tokens",
    show_ids: bool = False,
    limit: int = 200_000,
) -> str:
    """A self-contained HTML page (inline CSS, no scripts) with one coloured span per token."""
    labels = token_labels(text, enc, show_whitespace=True, limit=limit)
    colors = token_colors(enc.ids[:limit], palette)
    parts = []
    for i, label in enumerate(labels.labels):
        tid = enc.ids[i]
        kind = labels.kinds[i]
        tip = html.escape(f"id {tid} · {hex_bytes(enc.tokens[i])}", quote=True)
        cls = {SPECIAL: "t s", INSERTED: "t s i", UNKNOWN: "t u", BYTES: "t b"}.get(kind, "t")
        style = "" if kind in (SPECIAL, INSERTED, UNKNOWN) else f' style="background:{colors[i]};color:{palette.text}"'
        ident = f'<span class="id">{tid}</span>' if show_ids else ""
        parts.append(f'<span class="{cls}"{style} title="{tip}">{html.escape(label)}{ident}</span>')
        if labels.breaks[i]:
            parts.append("\n" * labels.breaks[i])
    st = token_stats(text, enc)
    page = "#111418" if palette.dark else "#ffffff"
    fg = "#e6edf3" if palette.dark else "#1f2328"
    border = f"border:1px solid {palette.border};" if palette.border else ""
    css = _CSS.format(page=page, fg=fg, border=border, sbg=palette.special_bg, sfg=palette.special_text,
                      ubg=palette.unknown_bg, ufg=palette.unknown_text)
    more = f" (first {limit:,} tokens shown)" if len(enc.ids) > limit else ""
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{css}</style></head><body>\n"
        f"<h1>{html.escape(title)}</h1>\n<div class=\"tokens\">{''.join(parts)}</div>\n"
        f"<p class=\"stats\">{html.escape(st.summary())}{more}</p>\n</body></html>\n"
    )


def ids_text(ids: Sequence[int]) -> str:
    """``'[1, 2, 3]'``: what "copy ids" puts on the clipboard."""
    return "[" + ", ".join(str(i) for i in ids) + "]"
