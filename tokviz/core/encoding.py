"""`Encoding`: the result of encoding a text, with everything a view needs to draw it.

Ids, token bytes and character spans travel together (as in HF tokenizers' `Encoding`), so the
token view never re-derives positions by decoding tokens one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, starmap
from operator import eq, itemgetter

from .gc_pause import collector_paused
from .errors import EncodeError
from .json_columns import write_json_columns
from .text.split import split_specials


@dataclass(slots=True)
class Encoding:
    """Ids of a text with each token's bytes and character span ``(start, end)`` in the input.

    Not frozen: a tokenizer builds it in place, extending its lists chunk by chunk (one result
    object, no copies of a megabyte of ids). Once returned, treat it as read-only.

    A token holding only part of a character (byte-level BPE on emoji or CJK) has the span of
    the whole character, so neighbouring partial tokens share a span.

    A token that covers no input has an empty span ``(i, i)`` at the point where it was
    inserted, and only such a token has an empty span (`inserted` lists them): a post-processor's
    ``[CLS]``/``<s>`` before the text at ``(0, 0)``, its ``[SEP]``/``</s>`` after it at
    ``(len(text), len(text))``, an end-of-word marker at the end of its chunk. For a
    ``tokenizer.json`` the spans are Hugging Face's offsets (a ``▁`` a normalizer prepended shares
    the span of the character it precedes), except that there every inserted token is ``(0, 0)``.
    """

    ids: list[int]
    tokens: list[bytes]
    spans: list[tuple[int, int]]
    unknown: list[int] = field(default_factory=list)  # indices of [UNK] tokens (lossy positions)
    special: list[int] = field(default_factory=list)  # indices of special tokens
    dropped: list[tuple[int, int]] = field(default_factory=list)  # text no chunk covers

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def inserted(self) -> list[int]:
        """Indices of the tokens that cover no input (empty spans: see the class docstring)."""
        return list(compress(count(), starmap(eq, self.spans)))  # (a C-level pass)

    @property
    def lossless(self) -> bool:
        """True when decoding gives back the text: nothing unknown, nothing dropped."""
        return not self.unknown and not self.dropped

    def to_json(self) -> dict:
        """``{"ids": [...], "tokens_hex": [...], "spans": [[start, end], ...], "inserted": [...]}``."""
        return {
            "ids": list(self.ids),
            "tokens_hex": [t.hex() for t in self.tokens],
            "spans": [list(s) for s in self.spans],
            "inserted": self.inserted,
        }

    def json_text(self) -> str:
        """``json.dumps(self.to_json())``, written without building the dict."""
        parts: list[str] = []
        self.write_json(parts.append)
        return "".join(parts)

    def write_json(self, write: Callable[[str], object], *, processes: int = 1) -> None:
        """Write ``json.dumps(self.to_json())`` through `write`, in chunks, a long encoding's
        in two processes given two `processes` (`write_json_columns`)."""
        spans = self.spans
        write_json_columns(write, self.ids, self.tokens, {t: t.hex() for t in set(self.tokens)},
                           list(map(_FIRST, spans)), list(map(_SECOND, spans)), processes=processes)


_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_SCAN_EACH = 32  # up to this many disallowed specials, the text is searched for each in turn


_LAZY_FIELDS = ("tokens", "spans", "unknown", "special", "dropped")


def _completed_field(name: str) -> property:
    """A field of `LazyEncoding` read from the base class's slot, filled by `complete` first."""
    slot = Encoding.__dict__[name]  # the dataclass's slot descriptor

    def get(self):
        if name == "ids" and self._ids_only is not None:  # the ids asked for first: the ids path
            slot.__set__(self, self._ids_only())
            self._ids_only = None
        try:
            return slot.__get__(self)
        except AttributeError:  # not filled yet
            self._fill()
            return slot.__get__(self)

    def set_(self, value) -> None:
        slot.__set__(self, value)
        if name == "ids":  # assigned: the ids path is not run
            self._ids_only = None

    return property(get, set_, doc=f"`Encoding.{name}`, computed on first use.")


class LazyEncoding(Encoding):
    """An `Encoding` whose tokens, spans, unknown, special and dropped are made on first use by
    `complete()` (which returns the full `Encoding` of the same ids).

    A caller that only wants ``encode(text).ids`` (a batch of short texts, a comparison) pays
    for the ids alone; one that draws the tokens pays for them once. `ids` may be a function
    too (the ids path): it runs when the ids are read before anything else, and otherwise
    `complete()` gives them with the rest (so a view that reads spans first encodes once).
    Equal to the plain `Encoding` of the same fields.
    """

    __slots__ = ("_complete", "_columns", "_ids_only")

    def __init__(self, ids: list[int] | Callable[[], list[int]], complete: Callable[[], Encoding], *,
                 columns: Callable[[], tuple | None] | None = None) -> None:  # noqa: D107
        self._ids_only = ids if callable(ids) else None
        if not callable(ids):
            self.ids = ids
        self._complete = complete
        self._columns = columns  # the arguments of `write_json_columns` after `write`, or None

    def write_json(self, write: Callable[[str], object], *, processes: int = 1) -> None:
        """`Encoding.write_json`, from the columns when given and nothing was filled yet (no
        tokens or spans lists made)."""
        cols = self._columns() if self._columns is not None and self._complete is not _filled else None
        if cols is None:
            super().write_json(write, processes=processes)
        else:
            write_json_columns(write, *cols, processes=processes)

    def _fill(self) -> None:
        with collector_paused():  # a long text's tokens and spans: many new objects, no cycles
            full = self._complete()
        self._complete = _filled  # the text and tokenizer it held are let go
        self._columns = self._ids_only = None
        for name in ("ids", *_LAZY_FIELDS):
            slot = Encoding.__dict__[name]
            try:
                slot.__get__(self)
            except AttributeError:  # a field set meanwhile (assigned by a caller) is kept
                slot.__set__(self, getattr(full, name))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Encoding):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in ("ids", *_LAZY_FIELDS))

    __hash__ = None  # type: ignore[assignment]  # mutable, as Encoding

    def __reduce__(self):
        return Encoding, tuple(getattr(self, f) for f in ("ids", *_LAZY_FIELDS))


def _filled() -> Encoding:
    raise AssertionError("a LazyEncoding is filled once")


for _name in ("ids", *_LAZY_FIELDS):
    setattr(LazyEncoding, _name, _completed_field(_name))


def uncovered(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """Gaps of ``[0, length)`` not covered by the sorted `spans`.

    >>> uncovered([(0, 2), (3, 4)], 6)
    [(2, 3), (4, 6)]
    """
    gaps = []
    pos = 0
    for a, b in spans:
        if a > pos:
            gaps.append((pos, a))
        pos = max(pos, b)
    if pos < length:
        gaps.append((pos, length))
    return gaps


def allowed_specials(
    text: str,
    special_tokens: Mapping[str, int],
    allowed_special: Collection[str] | str,
    disallowed_special: Collection[str] | str,
) -> set[str]:
    """tiktoken's rule: the allowed specials, after checking none of the disallowed is in `text`."""
    allowed = set(special_tokens) if allowed_special == "all" else set(allowed_special)
    unknown = allowed - set(special_tokens)
    if unknown:
        raise EncodeError(
            f"unknown special token {sorted(unknown)[0]!r}; this tokenizer has "
            f"{sorted(special_tokens)[:8] or 'no special tokens'}"
        )
    disallowed = set(special_tokens) - allowed if disallowed_special == "all" else set(disallowed_special)
    if len(disallowed) > _SCAN_EACH:  # many: one pass over the text for all of them
        disallowed = {text[a:b] for a, b, special in split_specials(text, tuple(disallowed)) if special}
    for s in sorted(disallowed):
        if s in text:
            raise EncodeError(
                f"text contains special token {s!r}; pass allowed_special={{{s!r}}} to encode "
                f"it as a special token, or disallowed_special=() to encode it as text"
            )
    return allowed


def encode_with_specials(
    text: str,
    special_tokens: Mapping[str, int],
    token_bytes: Callable[[int], bytes],
    encode_text: Callable[[str, int, Encoding], None],
    *,
    allowed_special: Collection[str] | str = (),
    disallowed_special: Collection[str] | str = "all",
) -> Encoding:
    """tiktoken's special-token rules, shared by every tokenizer's `encode`.

    Specials in `allowed_special` ("all" for every one) become their ids; any in
    `disallowed_special` ("all" = every special not allowed) found in the text is an error; the
    others are ordinary text. `encode_text(part, offset, out)` appends the tokens of ordinary text.
    """
    allowed = allowed_specials(text, special_tokens, allowed_special, disallowed_special)
    out = Encoding([], [], [], [], [], [])
    for a, b, is_special in split_specials(text, tuple(allowed)):
        if is_special:
            out.special.append(len(out.ids))
            tid = special_tokens[text[a:b]]
            out.ids.append(tid)
            out.tokens.append(token_bytes(tid))
            out.spans.append((a, b))
        else:
            encode_text(text[a:b], a, out)
    return out


def ids_with_specials(
    text: str,
    special_tokens: Mapping[str, int],
    encode_ids: Callable[[str], list[int]],
    *,
    allowed_special: Collection[str] | str = (),
    disallowed_special: Collection[str] | str = (),
) -> list[int]:
    """The ids `encode_with_specials` gives, without tokens or spans: the ids path.

    `encode_ids(part)` returns the ids of ordinary text. The defaults encode every special-token
    string as text (``encode_ordinary``); tiktoken's rules apply as in `encode_with_specials`.
    """
    allowed = allowed_specials(text, special_tokens, allowed_special, disallowed_special)
    if not allowed:
        return encode_ids(text)
    out: list[int] = []
    for a, b, is_special in split_specials(text, tuple(allowed)):
        if is_special:
            out.append(special_tokens[text[a:b]])
        else:
            out.extend(encode_ids(text[a:b]))
    return out


def offsets_of(tokens: Sequence[bytes]) -> tuple[str, list[int]]:
    """Decoded text and each token's start offset in characters (tiktoken's rule: a token that
    starts inside a character points at that character)."""
    offsets = []
    n = 0
    for t in tokens:
        offsets.append(max(0, n - (1 if t and 0x80 <= t[0] < 0xC0 else 0)))
        n += sum(1 for c in t if not 0x80 <= c < 0xC0)
    return b"".join(tokens).decode("utf-8", errors="replace"), offsets
