"""A model at step k, ready to be measured: its vocabulary facts, and a text's tokens with positions.

`model_facts(timeline, step)` gathers what the metrics need of a tokenizer once: the vocabulary
size at the step (special tokens included), the ids of ``[UNK]``/``<unk>`` (by token bytes) and of
the 256 ``<0xNN>`` byte-fallback tokens (by the vocabulary's written form, when it writes all 256),
and each id's bytes.

`encode_positions` encodes a whole text as plain text (special-token strings as text) and gives
each token a position ``[start, end)``, for the continued-words metric and for cutting the text
into documents. Two ways, the fast one first:

- bytes: ``encode_ids`` (no per-token objects; big texts in two processes), then the token
  bytes' running lengths, used only after checking that the tokens' bytes joined are exactly
  the text's UTF-8 (byte-level BPE: tiktoken files, GPT-2, tokviz BPE);
- chars: `Encoding.spans` from ``encode_ordinary`` for everything else (WordPiece's ``##``,
  SentencePiece's ``▁``, dropped whitespace, ``[UNK]``). A small sample picks the way first, so
  a tokenizer that is not byte-exact is not encoded twice.

On 5 MB with cl100k the bytes way takes about a sixth of the time of building `Encoding` objects.
What this leaves out: the metrics themselves (`metrics`), documents, loading models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import TokvizError

from .metrics import TextFacts

UNK_FORMS = (b"[UNK]", b"<unk>")
_BYTE_FORM = re.compile(rb"<0x([0-9A-Fa-f]{2})>")
PROBE_CHARS = 20_000  # sample that decides between the two ways
_SLICE_IDS = 1 << 15  # ids checked and converted per C call
_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")  # a lone surrogate's UTF-8 ("surrogatepass")


@dataclass(frozen=True, eq=False)
class ModelFacts:
    """A tokenizer at one step, with the vocabulary facts the metrics need."""

    tokenizer: object  # the timeline's tokenizer (the protocol's grid)
    step: int | None  # None: the finished model
    vocab_size: int  # ids the vocabulary at `step` holds, special tokens included
    unk_ids: np.ndarray  # ids whose bytes are [UNK] or <unk>
    byte_ids: np.ndarray | None  # the <0xNN> ids, None: no byte fallback
    vocab: list[bytes]  # bytes of every id (b"" for unused ids)
    lengths: np.ndarray  # (n_vocab,) int64: len(vocab[i])
    processes: int = 1  # how many may encode a big text (`tokviz.core.processes.parallel`)


def vocab_size_at(timeline, tokenizer, step: int | None) -> int:
    """Vocabulary size at `step` (special tokens included): the finished size minus the tokens
    that only later steps make. WordPiece and Unigram tokenizers know it (``n_vocab_at``)."""
    if step is None:
        return int(tokenizer.n_vocab)
    at = tokenizer.n_vocab_at(step)
    if at is not None:
        return int(at)
    n = timeline.n_steps
    formed = [timeline.new_id_at(j) for j in range(1, n + 1)]  # id made by each step
    later = set(formed[step:]) - set(formed[:step]) - {None}
    return int(tokenizer.n_vocab) - len(later)


def check_step(timeline, step: int | None) -> None:
    """Raise `TokvizError` when `step` is past the timeline's last step."""
    if step is None:
        return
    last = timeline.last_step
    if step > last:
        noun = getattr(timeline, "step_noun", "merge")
        raise TokvizError(f"step {step} is past the last {noun} ({last}); steps go from 0 to {last}")


def _written_forms(tokenizer, vocab: list[bytes]) -> list[bytes]:
    """How the vocabulary writes each id (``<0xE4>`` rather than its byte), where it says."""
    if not tokenizer.writes_token_text:
        return vocab
    return [(tokenizer.token_text(i) or "").encode("utf-8") for i in range(len(vocab))]


def model_facts(timeline, step: int | None = None, *, processes: int = 1) -> ModelFacts:
    """Everything `encode_positions` and the metrics need of `timeline` at `step` (encoding with
    up to `processes` processes)."""
    check_step(timeline, step)
    tok = timeline.tokenizer()
    vocab = list(timeline.token_bytes())
    if None in vocab:
        vocab = [b if b is not None else b"" for b in vocab]
    lengths = np.fromiter(map(len, vocab), dtype=np.int64, count=len(vocab))
    forms = _written_forms(tok, vocab)
    form_lengths = lengths if forms is vocab else np.fromiter(map(len, forms), dtype=np.int64, count=len(forms))
    # only ids of the right length are looked at: o200k's 200,000 one by one took 30 ms of each model
    unk = set(_ids_of(forms, form_lengths, UNK_FORMS)) | set(_ids_of(vocab, lengths, UNK_FORMS))
    byte_of = {}
    for i in np.flatnonzero(form_lengths == 6).tolist():
        m = _BYTE_FORM.fullmatch(forms[i])
        if m is not None:
            byte_of.setdefault(int(m.group(1), 16), i)
    byte_ids = np.array(sorted(byte_of.values()), dtype=np.int64) if len(byte_of) == 256 else None
    return ModelFacts(tok, step, vocab_size_at(timeline, tok, step), np.array(sorted(unk), dtype=np.int64),
                      byte_ids, vocab, lengths, processes)


def _ids_of(tokens: list[bytes], lengths: np.ndarray, wanted: tuple[bytes, ...]) -> list[int]:
    """The ids whose token is one of `wanted`, looking only at tokens of a wanted length."""
    sizes = np.array(sorted({len(w) for w in wanted}), dtype=np.int64)
    return [i for i in np.flatnonzero(np.isin(lengths, sizes)).tolist() if tokens[i] in wanted]


@dataclass(frozen=True, eq=False)
class TokenPositions:
    """A text's ids with each token's ``[start, end)``, in bytes or in chars (`in_bytes`)."""

    ids: np.ndarray  # (tokens,) int64
    starts: np.ndarray  # (tokens,) int64, non-decreasing
    ends: np.ndarray  # (tokens,) int64
    in_bytes: bool

    def word_bounds(self, facts: TextFacts) -> tuple[np.ndarray, np.ndarray]:
        """The text's word spans in this object's unit."""
        if self.in_bytes:
            return facts.char_bytes[facts.word_starts], facts.char_bytes[facts.word_ends]
        return facts.word_starts, facts.word_ends

    def position(self, facts: TextFacts, char: int) -> int:
        """Char offset `char` in this object's unit."""
        return int(facts.char_bytes[char]) if self.in_bytes else char


def _byte_positions(ids: list[int], model: ModelFacts, data: bytes) -> TokenPositions | None:
    """Positions from the tokens' byte lengths, or None when the tokens do not spell `data`.
    Checked and converted a slice at a time: no single C call holds the GIL for long (the
    window's thread keeps drawing while a worker measures a 5 MB text). A tokenizer whose tokens
    can only leave text out (``spells_text_bytes``) is checked by length alone (udhr2, three
    models: 0.36 s instead of 0.66 s): unless the text holds a lone surrogate, which it would
    write as U+FFFD, as many bytes."""
    if model.tokenizer.spells_text_bytes and _SURROGATE.search(data) is None:
        return _positions_by_length(ids, model, len(data))
    vocab, view = model.vocab, memoryview(data)
    parts, pos = [], 0
    for i in range(0, len(ids), _SLICE_IDS):
        part = ids[i:i + _SLICE_IDS]
        try:
            piece = b"".join(map(vocab.__getitem__, part))
        except IndexError:
            return None
        if view[pos:pos + len(piece)] != piece:
            return None
        pos += len(piece)
        parts.append(np.fromiter(part, np.int64, len(part)))
    if pos != len(data):
        return None
    arr = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    lengths = model.lengths[arr]
    ends = np.cumsum(lengths)
    return TokenPositions(arr, ends - lengths, ends, True)


def _positions_by_length(ids: list[int], model: ModelFacts, n_bytes: int) -> TokenPositions | None:
    """`_byte_positions` of a ``spells_text_bytes`` tokenizer: None unless the ids are ids of the
    vocabulary whose lengths add up to `n_bytes`."""
    parts = []
    for i in range(0, len(ids), _SLICE_IDS):
        part = ids[i:i + _SLICE_IDS]
        parts.append(np.fromiter(part, np.int64, len(part)))  # from a list: twice as fast as `np.array`
    arr = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if len(arr) and (int(arr.min()) < 0 or int(arr.max()) >= len(model.vocab)):
        return None
    lengths = model.lengths[arr]
    ends = np.cumsum(lengths)
    if (int(ends[-1]) if len(ends) else 0) != n_bytes:
        return None
    return TokenPositions(arr, ends - lengths, ends, True)


def _span_positions(tokenizer, text: str, step: int | None, processes: int = 1) -> TokenPositions:
    from tokviz.core.algorithm.ids_path import processes_kw

    enc = tokenizer.encode_ordinary(text, step=step, **processes_kw(tokenizer, processes))
    spans = np.array(enc.spans, dtype=np.int64).reshape(-1, 2)
    starts = np.maximum.accumulate(spans[:, 0]) if len(spans) else spans[:, 0]
    return TokenPositions(np.fromiter(enc.ids, np.int64, len(enc.ids)), starts, spans[:, 1].copy(), False)


def positions_of(model: ModelFacts, text: str, data: bytes, *, try_bytes: bool) -> TokenPositions:
    if try_bytes:
        from tokviz.core.algorithm.ids_path import processes_kw

        ids = model.tokenizer.encode_ids(text, step=model.step, **processes_kw(model.tokenizer, model.processes))
        found = _byte_positions(ids, model, data)
        if found is not None:
            return found
    return _span_positions(model.tokenizer, text, model.step, model.processes)


def byte_exact_start(model: ModelFacts, text: str) -> bool:
    """Whether the tokens of the text's first `PROBE_CHARS` spell it: worth trying bytes."""
    probe = text[:PROBE_CHARS]
    ids = model.tokenizer.encode_ids(probe, step=model.step)
    return _byte_positions(ids, model, probe.encode("utf-8", "surrogatepass")) is not None


def encode_positions(model: ModelFacts, facts: TextFacts) -> TokenPositions:
    """Encode ``facts.text`` with `model` as plain text; each token's position (module doc).

    >>> from tokviz.core.compare.metrics import text_facts
    >>> from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
    >>> from tokviz.core.explain.loaded_timeline import as_timeline
    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    >>> tl = as_timeline(RankBpeTokenizer(ranks, pattern=r"\\S+|\\s+"))
    >>> p = encode_positions(model_facts(tl), text_facts("ab é"))
    >>> p.ids.tolist(), p.starts.tolist(), p.ends.tolist(), p.in_bytes
    ([256, 32, 195, 169], [0, 2, 3, 4], [2, 3, 4, 5], True)
    """
    return positions_of(model, facts.text, facts.data, try_bytes=byte_exact_start(model, facts.text))
