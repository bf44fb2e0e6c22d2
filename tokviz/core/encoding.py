"""`Encoding`: the result of encoding a text, with everything a view needs to draw it.

Ids, token bytes and character spans travel together (as in HF tokenizers' `Encoding`), so the
token view never re-derives positions by decoding tokens one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from .errors import EncodeError
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
        return [i for i, (a, b) in enumerate(self.spans) if a == b]

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
        """``json.dumps(self.to_json())``, written without building the dict (a few C-level joins
        over the lists: megabytes of tokens in a fraction of the time)."""
        spans = self.spans
        inserted = [i for i, (a, b) in enumerate(spans) if a == b] if spans else []
        tokens = '", "'.join(map(bytes.hex, self.tokens))
        flat = [x for span in spans for x in span]
        pairs = map(", ".join, zip(map(str, flat[0::2]), map(str, flat[1::2])))
        return "".join([
            '{"ids": [', ", ".join(map(str, self.ids)),
            '], "tokens_hex": [', f'"{tokens}"' if self.tokens else "",
            '], "spans": [', f"[{'], ['.join(pairs)}]" if spans else "",
            '], "inserted": [', ", ".join(map(str, inserted)), "]}",
        ])


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
