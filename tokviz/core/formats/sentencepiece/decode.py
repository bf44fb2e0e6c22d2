"""SentencePiece's decoder (``DecodeOptimized``): what each id contributes to the decoded text.

Control pieces vanish; an unknown piece shows as the model's ``unk_surface`` (`` ⁇ ``); a run of
byte pieces is joined and decoded, a valid character going on the last byte of it and each byte
that is not valid UTF-8 giving one U+FFFD (Python's ``errors="replace"`` gives one per bad
sequence); ``▁`` is a space, and while the text is still empty a piece's leading ``▁`` is dropped
(when the model adds a dummy prefix or removes extra whitespace).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tokviz.core.formats.sentencepiece.proto import BYTE, CONTROL, ModelProto
from tokviz.core.unigram.encoder.segments import MARK

BYTE_NAMES = {f"<0x{b:02X}>": b for b in range(256)}


def split_utf8(data: bytes) -> list[tuple[int, str]]:
    """``(bytes consumed, text)`` per character of a byte run, as sentencepiece reads it."""
    out = []
    pos, n = 0, len(data)
    while pos < n:
        lead = data[pos]
        size = (1 if lead < 0x80 else 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0
                else 4 if 0xF0 <= lead < 0xF8 else 0)
        if size and pos + size <= n:
            try:
                out.append((size, data[pos : pos + size].decode("utf-8")))
                pos += size
                continue
            except UnicodeDecodeError:
                pass
        out.append((1, "\ufffd"))
        pos += 1
    return out


def decode_surfaces(proto: ModelProto, types: Sequence[int], is_unknown: Callable[[int], bool],
                    ids: Sequence[int], *, raw: bool) -> list[str | bytes]:
    """Each id's part of the decoded text (with `raw`, a byte piece gives its own byte)."""
    pieces = proto.pieces
    norm = proto.normalizer
    strip_first = norm.add_dummy_prefix or norm.remove_extra_whitespaces
    unk_surface = proto.trainer.unk_surface
    out: list[str | bytes] = [""] * len(ids)
    text_len = 0
    bos_ws = True
    run: list[int] = []  # positions of a run of byte pieces

    def flush() -> None:
        nonlocal text_len
        if not run:
            return
        data = bytes(BYTE_NAMES[pieces[ids[k]]] for k in run)
        if raw:
            for k, by in zip(run, data):
                out[k] = bytes([by])
            text_len += len(data)
        else:
            j = 0
            for size, s in split_utf8(data):
                out[run[j + size - 1]] = s
                j += size
                text_len += len(s)
        run.clear()

    for k, i in enumerate(ids):
        ty = types[i]
        if ty == BYTE:
            run.append(k)
            continue
        flush()
        if text_len:
            bos_ws = False
        if ty == CONTROL:
            continue
        p = pieces[i]
        has_bos_ws = False
        if bos_ws and strip_first and p.startswith(MARK):
            p = p[1:]
            has_bos_ws = not norm.remove_extra_whitespaces
        s = unk_surface if is_unknown(i) else p.replace(MARK, " ")
        out[k] = s
        text_len += len(s)
        if has_bos_ws or text_len:
            bos_ws = False
    flush()
    return out
