"""`DecodeStream`: decode ids one at a time, as a server streams a model's output.

The rule is `tokenizers`' ``decoders.DecodeStream``: after each id the ids since the last emitted
piece are decoded with the tokenizer's own `decode`; text is emitted only when that decoding has
grown and does not end in U+FFFD (a character whose bytes have not all arrived yet is held back),
and it is the part after the previous window's decoding, so a decoder's leading-space handling
(Metaspace's dropped first ``▁``, WordPiece's ``##``) is applied as on the whole text. Works with any
tokenizer that has ``decode(ids)``. What it leaves out: the display of the steps (CLI, token view).

One departure, for hostile input only: `tokenizers` keeps every id of a run that never completes a
character (thousands of lone continuation bytes) and decodes the growing run again at each id, which
is quadratic; past `MAX_PENDING` ids such a run is emitted as it decodes (with its U+FFFD).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .errors import TokvizError

MAX_PENDING = 256  # ids held back at most; a real character is at most 4 byte tokens


class DecodeStreamError(TokvizError):
    """The decoding of the window no longer starts with what was already emitted (a decoder that
    rewrites earlier text); `tokenizers` stops there too."""


@dataclass(frozen=True, slots=True)
class StreamStep:
    """One id fed to the stream: the text it added (None while a character is incomplete) and
    the length of the text emitted so far, in characters (``text[:end]`` of `stream_steps`)."""

    id: int
    added: str | None
    end: int


class DecodeStream:
    """Feed ids with `step`; each returns the newly completed text or None.

    >>> class Bytes:  # a toy tokenizer: id = one byte
    ...     def decode(self, ids): return bytes(ids).decode("utf-8", "replace")
    >>> s = DecodeStream(Bytes())
    >>> [s.step(b) for b in "é!".encode()]
    [None, 'é', '!']
    """

    def __init__(self, tokenizer, *, skip_special_tokens: bool = False, ids: Sequence[int] = ()) -> None:
        """`ids`: ids already shown (a prompt): their text is context, not emitted, unless they end
        inside a character (then, as in `tokenizers`, the first piece emitted holds their text too)."""
        self._tokenizer = tokenizer
        self._skip = skip_special_tokens
        self._ids = list(ids)  # the window: ids since just before the last emitted piece
        self._prefix = self._decode(self._ids)  # the window's decoding up to the last emitted piece
        self._prefix_index = len(self._ids)  # where in the window the not yet emitted ids start
        if self._prefix.endswith("\ufffd"):  # ids ending inside a character: tokenizers starts afresh
            self._prefix, self._prefix_index = "", 0

    def _decode(self, ids: list[int]) -> str:
        if self._skip:
            return self._tokenizer.decode(ids, skip_special_tokens=True)
        return self._tokenizer.decode(ids)

    def step(self, token_id: int) -> str | None:
        """The text `token_id` completes, or None while it ends inside a character."""
        self._ids.append(token_id)
        text = self._decode(self._ids)
        held = len(text) <= len(self._prefix) or text.endswith("\ufffd")
        if held and len(self._ids) - self._prefix_index < MAX_PENDING:
            return None
        if len(text) <= len(self._prefix):  # a long run that adds nothing: the next window starts empty
            self._ids, self._prefix, self._prefix_index = [], "", 0
            return None
        if not text.startswith(self._prefix):
            raise DecodeStreamError(
                f"decoding id {token_id} changed text already emitted ({self._prefix[-20:]!r}); "
                f"this tokenizer's decoder cannot be streamed id by id"
            )
        added = text[len(self._prefix):]
        # the next window starts at the ids of the piece just emitted: their text is its prefix
        self._ids, start = self._ids[self._prefix_index:], len(self._ids) - self._prefix_index
        self._prefix = self._decode(self._ids)
        self._prefix_index = start
        return added


def stream_steps(tokenizer, ids: Iterable[int], *,
                 skip_special_tokens: bool = False) -> tuple[list[StreamStep], str]:
    """Every step of streaming `ids` and the whole text emitted."""
    stream = DecodeStream(tokenizer, skip_special_tokens=skip_special_tokens)
    steps: list[StreamStep] = []
    shown: list[str] = []
    end = 0
    for tid in ids:
        added = stream.step(tid)
        if added is not None:
            shown.append(added)
            end += len(added)
        steps.append(StreamStep(tid, added, end))
    return steps, "".join(shown)
