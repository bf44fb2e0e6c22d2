"""Streaming decode of hostile id runs: ids that never complete a character stay bounded work."""

from __future__ import annotations

from tokviz.core.decode_stream import MAX_PENDING, DecodeStream


class _CountingBytes:
    """A toy tokenizer: id = one byte; counts the ids it decodes."""

    def __init__(self) -> None:
        self.decoded = 0

    def decode(self, ids):
        self.decoded += len(ids)
        return bytes(ids).decode("utf-8", "replace")


def test_a_long_run_of_continuation_bytes_is_linear():
    tok = _CountingBytes()
    stream = DecodeStream(tok)
    n = 20_000
    out = [stream.step(0x80) for _ in range(n)]  # each decodes to U+FFFD: held back by tokenizers' rule
    assert tok.decoded < n * 3 * MAX_PENDING  # quadratic would be ~n*n/2 = 2e8
    assert "".join(o for o in out if o) == "\ufffd" * (n - n % MAX_PENDING)
    assert stream.step(ord("a")) == "\ufffd" * (n % MAX_PENDING) + "a"  # the rest, then the letter


def test_a_long_run_that_decodes_to_nothing_is_dropped_not_rescanned():
    class Empty(_CountingBytes):
        def decode(self, ids):
            self.decoded += len(ids)
            return ""

    tok = Empty()
    stream = DecodeStream(tok)
    assert all(stream.step(1) is None for _ in range(10_000))
    assert tok.decoded < 10_000 * 2 * MAX_PENDING
