"""What one tokenizer makes of one text, stage by stage, and the first stage where two differ.

A tokenizer's pipeline, in the order the text goes through it:

1. ``special_tokens``: special and added tokens recognised in the text (their places and ids);
2. ``normalizer``: the text the model is given (a ``▁`` marker read as the space it stands for);
3. ``pre_tokenizer``: the pieces the model segments one by one;
4. ``model``: the tokens of the text (merges, vocabulary) and their ids;
5. ``bos_eos``: the tokens a post-processor inserts around the text (BOS/EOS, CLS/SEP);
6. ``decoder``: the text the decoder gives back for the ids.

Two tokenizers *disagree* on a text when their ids differ or their decoders give different text
(`Outcome`); then `first_stage` names the earliest stage whose output differs in a way that
matters (two pre-tokenizers that cut at different places only matter where a token of one side
crosses a cut of the other). A stage a tokenizer does not expose (no normalizer) passes the text
through. What this leaves out: generating and shrinking texts (`generate`, `shrink`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from itertools import accumulate

from tokviz.core.compare.trace import pipeline_pieces
from tokviz.core.display.tokens import visible_token
from tokviz.core.formats.tokenizer_json.pretokenizers import CHAR_BYTE
from tokviz.core.special_tokens import encode_specials_as_text

STAGES = ("special_tokens", "normalizer", "pre_tokenizer", "model", "bos_eos", "decoder")
IGNORABLE = ("bos_eos", "decoder")  # stages whose own output may be left out of the comparison
MARKER = "\u2581"
SHOWN_TOKENS = 12  # tokens quoted in a stage's detail line


@dataclass(frozen=True)
class Outcome:
    """What one tokenizer gives for one text: every id, the ids that come from the text (all
    but the inserted special tokens), the inserted ones as ``(position, id)``, and the decoded
    text of the text's ids."""

    ids: tuple[int, ...]
    text_ids: tuple[int, ...]
    inserted: tuple[tuple[int, int], ...]
    decoded: str


@dataclass(frozen=True)
class Side:
    """One tokenizer of a comparison: its timeline at `step`, encoding as the command line's
    ``encode`` does (special-token text as such, or as plain text with `specials_as_text`)."""

    label: str
    timeline: object
    step: int | None = None
    specials_as_text: bool = False

    @property
    def tokenizer(self):
        return self.timeline.tokenizer()

    def encode(self, text: str):
        tok = self.tokenizer
        if self.specials_as_text:
            return encode_specials_as_text(tok, text, step=self.step)
        return tok.encode(text, step=self.step, allowed_special="all")

    def outcome(self, text: str) -> Outcome:
        enc = self.encode(text)
        special = set(enc.special)
        inserted = {i for i in enc.inserted if i in special}
        text_ids = tuple(t for i, t in enumerate(enc.ids) if i not in inserted)
        return Outcome(tuple(enc.ids), text_ids, tuple((enc.spans[i][0], enc.ids[i]) for i in sorted(inserted)),
                       self.tokenizer.decode(list(text_ids)))


def disagree(a: Outcome, b: Outcome, *, ignore: Collection[str] = ()) -> bool:
    """True when the two outcomes differ in ids (only the text's ids when ``bos_eos`` is
    ignored) or, unless ``decoder`` is ignored, in decoded text."""
    ids_differ = a.text_ids != b.text_ids if "bos_eos" in ignore else a.ids != b.ids
    return ids_differ or ("decoder" not in ignore and a.decoded != b.decoded)


# -- each stage's output, comparable across tokenizers -----------------------------------------


def _plain(tok, piece: str, text: str) -> str:
    """A piece or normalized text as the text it stands for: a byte-level tokenizer's ``Ġ``
    characters as their bytes, a ``▁`` marker as a space (when the input had no ``▁`` of its own)."""
    if tok.byte_level:
        try:
            return bytes(CHAR_BYTE[c] for c in piece).decode("utf-8", errors="replace")
        except KeyError:
            return piece
    return piece.replace(MARKER, " ") if MARKER not in text else piece


def normalized(tok, text: str) -> str:
    """The text the model is given: the tokenizer's ``normalize`` or its normalizer's, else the text."""
    own = tok.normalize(text)  # None: no normalization step of its own
    if own is not None:
        return _plain(tok, own, text)
    normalizer = tok.normalizer
    if normalizer is not None and callable(getattr(normalizer, "text", None)):
        return _plain(tok, normalizer.text(text), text)
    return text


@dataclass(frozen=True)
class StageView:
    """One tokenizer's output at each stage for one text (see the module docstring)."""

    specials: tuple[tuple[tuple[int, int], bytes, int], ...]  # (span, token bytes, id) found in the text
    normalized: str
    pieces: tuple[str, ...]
    tokens: tuple[bytes, ...]  # the text's tokens (no special token)
    token_ids: tuple[int, ...]
    inserted: tuple[tuple[int, int], ...]
    decoded: str


def stage_view(side: Side, text: str, outcome: Outcome | None = None) -> StageView:
    tok = side.tokenizer
    enc = side.encode(text)
    outcome = outcome or side.outcome(text)
    special = set(enc.special)
    found = tuple((tuple(enc.spans[i]), enc.tokens[i], enc.ids[i]) for i in enc.special
                  if enc.spans[i][0] != enc.spans[i][1])
    pieces = tuple(_plain(tok, p, text) for p in pipeline_pieces(side.timeline, tok, text))
    plain = [i for i in range(len(enc.ids)) if i not in special]
    return StageView(found, normalized(tok, text), pieces, tuple(enc.tokens[i] for i in plain),
                     tuple(enc.ids[i] for i in plain), outcome.inserted, outcome.decoded)


def _cuts(parts) -> set[int] | None:
    """Byte offsets between consecutive parts (str or bytes)."""
    return set(accumulate(len(p.encode("utf-8") if isinstance(p, str) else p) for p in parts))


def _pieces_matter(a: StageView, b: StageView) -> bool:
    """Whether different pieces change the tokens: a piece boundary of one side that the other
    side's tokens cross. When pieces and tokens do not spell the same bytes (a pre-tokenizer that
    drops spaces, unknown tokens) any difference in pieces counts."""
    spelled = {"".join(v.pieces).encode("utf-8") for v in (a, b)} | {b"".join(v.tokens) for v in (a, b)}
    if len(spelled) > 1:
        return True
    return not (_cuts(a.pieces) <= _cuts(b.tokens) and _cuts(b.pieces) <= _cuts(a.tokens))


def _short(values, show=visible_token) -> str:
    items = [show(v) for v in values[:SHOWN_TOKENS]]
    more = f" … ({len(values)} in all)" if len(values) > SHOWN_TOKENS else ""
    return " ".join(items) + more


def _first_change(a: tuple, b: tuple) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def first_stage(a: StageView, b: StageView, *, ignore: Collection[str] = ()) -> tuple[str, str]:
    """``(stage, detail)``: the earliest stage (`STAGES`) whose output differs and matters, with a
    line saying how; ``("model", ...)`` when only the ids differ. Call it on texts the two
    tokenizers disagree on."""
    if a.specials != b.specials:
        if [s[:2] for s in a.specials] == [s[:2] for s in b.specials]:
            return "special_tokens", "the same special-token text, different ids: " + \
                f"A {[s[2] for s in a.specials]} B {[s[2] for s in b.specials]}"
        show = lambda s: f"{visible_token(s[1])}@{s[0][0]}"  # noqa: E731
        return "special_tokens", f"A recognises [{_short(a.specials, show)}], B [{_short(b.specials, show)}]"
    if a.normalized != b.normalized:
        return "normalizer", f"A gives {a.normalized!r}, B {b.normalized!r}"
    if a.pieces != b.pieces and _pieces_matter(a, b):
        return "pre_tokenizer", f"A cuts {_short(a.pieces, _piece)}, B {_short(b.pieces, _piece)}"
    if a.tokens != b.tokens:
        k = _first_change(a.tokens, b.tokens)
        return "model", f"from token {k}: A {_short(a.tokens[k:])}, B {_short(b.tokens[k:])}"
    if a.token_ids != b.token_ids:
        k = _first_change(a.token_ids, b.token_ids)
        return "model", f"the same tokens, different ids from token {k}: A {a.token_ids[k]}, B {b.token_ids[k]}"
    if "bos_eos" not in ignore and a.inserted != b.inserted:
        return "bos_eos", f"A inserts {_inserted(a.inserted)}, B {_inserted(b.inserted)}"
    if "decoder" not in ignore and a.decoded != b.decoded:
        return "decoder", f"A decodes to {a.decoded!r}, B to {b.decoded!r}"
    return "model", "the ids differ"


def _piece(p: str) -> str:
    return visible_token(p.encode("utf-8"))


def _inserted(items: tuple[tuple[int, int], ...]) -> str:
    return "[" + ", ".join(f"{tid} at {pos}" for pos, tid in items) + "]" if items else "nothing"
