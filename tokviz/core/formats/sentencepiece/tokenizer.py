"""`SentencePieceTokenizer`: a SentencePiece ``.model`` file run by tokviz's own code.

``encode(text).ids`` equals ``sentencepiece.SentencePieceProcessor(model_file=f).encode(text)``
(no BOS/EOS, as that library's default): normalize (`SpNormalizer`), segment with the model
(Unigram Viterbi: `PieceLattice`; BPE: `SpBpe`), then sentencepiece's ``PopulateSentencePieceText``:
an unknown piece becomes its UTF-8 bytes as ``<0xNN>`` pieces with byte fallback, else a run of
unknown pieces becomes one unknown token. ``decode(ids)`` equals that library's ``decode``:
control pieces vanish, ``<unk>`` shows as the model's ``unk_surface`` (`` ⁇ ``), byte pieces are
joined and decoded (each invalid byte a U+FFFD), ``▁`` is a space and the first one is dropped.

Like the library, the text is never searched for ``<s>`` or other control symbols: they only come
from ids. Spans are in characters of the input (byte-fallback tokens share their character's).
What this leaves out: reading the protobuf (`proto`), the charsmap (`charsmap`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tokviz.core.algorithm.defaults import TokenizerDefaults
from tokviz.core.algorithm.reach import Reason, text_reason
from tokviz.core.algorithm.records import LoadedMerge
from tokviz.core.bpe.tokenizer import ExplainStep
from tokviz.core.encoding import Encoding, LazyEncoding, allowed_specials, encode_with_specials, offsets_of
from tokviz.core.errors import EncodeError, ModelFormatError
from tokviz.core.formats.descriptions import SentencePieceModel
from tokviz.core.formats.sentencepiece.bpe import SpBpe
from tokviz.core.formats.sentencepiece.columns import append_columns, unknown_columns
from tokviz.core.formats.sentencepiece.decode import BYTE_NAMES, decode_surfaces
from tokviz.core.formats.sentencepiece.dropout import SpDropout
from tokviz.core.formats.sentencepiece.ends import add_ends, declared_ends
from tokviz.core.formats.sentencepiece.merges import ScoreMerges
from tokviz.core.formats.sentencepiece.normalizer import SpNormalizer
from tokviz.core.formats.sentencepiece.piece_checks import check_pieces
from tokviz.core.formats.sentencepiece.proto import (
    BPE_MODEL,
    BYTE,
    CONTROL,
    NORMAL,
    PIECE_TYPES,
    UNIGRAM_MODEL,
    UNKNOWN,
    UNUSED,
    USER_DEFINED,
    ModelProto,
)
from tokviz.core.formats.sentencepiece.reader import read_sentencepiece
from tokviz.core.formats.sentencepiece.unknown_ids import fused_runs, resolve_unknowns
from tokviz.core.unigram.encoder.lattice import COMPILE_MIN as LATTICE_COMPILE_MIN
from tokviz.core.unigram.encoder.lattice import F32_SP, FLT_MAX, MARK, PieceLattice, absolute_ends, f32
from tokviz.core.unigram.encoder.piece_table import PieceIndex

if TYPE_CHECKING:
    from tokviz.core.algorithm.records import LatticeView

_NORMAL_KINDS = (NORMAL, USER_DEFINED, UNUSED)
_ARRAYS_MIN = 4096  # characters from which `encode_ids` takes the compiled Viterbi's arrays as they are


class _TokenBytes:
    """Each id's text as bytes (``▁`` as a space, byte pieces as their byte), made when first
    asked for: a model may have millions of pieces and a text uses a few thousand."""

    def __init__(self, pieces: Sequence[str], types: Sequence[int]) -> None:
        self._pieces, self._types = pieces, types
        self._made: dict[int, bytes] = {}

    def __getitem__(self, i: int) -> bytes:
        b = self._made.get(i)
        if b is None:
            p, ty = self._pieces[i], self._types[i]
            if ty == BYTE:
                b = bytes([BYTE_NAMES[p]])
            elif ty in (CONTROL, UNKNOWN):
                b = p.encode("utf-8")
            else:
                b = p.replace(MARK, " ").encode("utf-8")
            self._made[i] = b
        return b

    def many(self, ids: list[int]) -> list[bytes]:
        """``self[i]`` for each of `ids`."""
        made = self._made
        for i in set(ids).difference(made):
            self[i]  # made and kept
        return list(map(made.__getitem__, ids))


class SentencePieceTokenizer(SpDropout, TokenizerDefaults):
    """``SentencePieceTokenizer.from_file("tokenizer.model")``; `proto` is the parsed file."""

    kind = "sentencepiece"
    writes_token_text = True  # token_text(): the pieces as the model writes them
    source: str | None = None
    ends: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # ids added before / after every text

    ids_by_merge_rank = False  # the Tokenizer protocol's capabilities (tokviz.core.algorithm.protocol)
    takes_processes = True  # a big text's segments may be shared with forked children
    one_off_paths = ranks_merges = False

    def __init__(self, proto: ModelProto, *, name: str = "sentencepiece") -> None:
        self.proto = proto
        self.name = name
        t = proto.trainer
        if t.model_type not in (UNIGRAM_MODEL, BPE_MODEL):
            raise ModelFormatError(
                f"unsupported SentencePiece model type {proto.model_type!r}; tokviz reads unigram and bpe models"
            )
        unigram = t.model_type == UNIGRAM_MODEL
        pieces = proto.pieces
        types = proto.type_array
        nul = pieces.char_lengths() == 1
        nul[nul] = pieces.holding("\0")[nul]  # the pieces that are "\0"
        if t.byte_fallback and nul.any():  # sentencepiece treats a stray "\0" piece as unused then
            types = types.copy()
            types[nul] = UNUSED
        self.types = types
        # sentencepiece's pieces_ (every piece for BPE models); the others (control, unknown and
        # byte pieces of Unigram models) are its reserved_id_map_
        skipped = nul & (types == UNUSED)
        self._in_normal = ~skipped & (np.isin(types, _NORMAL_KINDS) if unigram else True)
        self._in_reserved = ~skipped & ~self._in_normal
        self._index = PieceIndex(pieces)
        unk_id, _ = check_pieces(pieces, types, skipped, self._in_normal, self._index,
                                            byte_fallback=t.byte_fallback)
        self.unk_id = unk_id  # the model's unknown piece (-1: none; unknown text then falls back to bytes)
        self._byte_ids: list[int] | None = (
            [self.piece_to_id(f"<0x{b:02X}>") for b in range(256)] if t.byte_fallback else None
        )
        ud_ids = np.flatnonzero(types == USER_DEFINED)
        ud = [pieces[i] for i in ud_ids.tolist()]
        suffix = t.treat_whitespace_as_suffix
        self.normalizer = SpNormalizer(proto.normalizer, user_defined=ud, whitespace_suffix=suffix)
        dn = proto.denormalizer
        self.denormalizer = SpNormalizer(dn) if dn is not None and dn.precompiled_charsmap else None
        self.control_ids = frozenset(np.flatnonzero(types == CONTROL).tolist())
        self.unknown_ids = frozenset(np.flatnonzero(types == UNKNOWN).tolist())
        # the Viterbi's edges hold no unknown piece: its unknowns are characters, fused into one id without bytes
        self._fuse_unknown = unk_id if self._byte_ids is None and unk_id >= 0 else None
        self.special_tokens: dict[str, int] = {}  # sentencepiece never reads control symbols from text
        self.model_kind = "Unigram" if unigram else "BPE"
        self._normal: dict[str, int] = {}
        if unigram:
            scores = proto.score_array
            if not np.isfinite(scores).all():
                raise ModelFormatError("a piece's score is NaN or infinite")
            plain = scores[types == NORMAL]
            min_score = float(plain.min()) if len(plain) else FLT_MAX
            self.lattice: PieceLattice | None = PieceLattice(
                pieces, scores, mode=F32_SP,
                edge_ids=np.flatnonzero(self._in_normal & np.isin(types, (NORMAL, USER_DEFINED))),
                unk_id=unk_id, unk_score=f32(min_score - 10.0), user_defined=ud_ids,
                whitespace_suffix=suffix,
            )
            self.bpe: SpBpe | None = None
        else:
            self.lattice = None
            normal = dict(zip(pieces, range(len(pieces))))
            normal.pop("\0", None)  # only skipped pieces can be "\0" here
            self._normal = normal
            self.bpe = SpBpe(normal, proto.scores, types.tolist(), unk_id=unk_id, user_defined=ud,
                             whitespace_suffix=suffix, byte_ids=self._byte_ids)
        self._vocab_bytes: _TokenBytes | None = None
        self._merge_order: list[int] | None = None
        self._rank_of: dict[int, int] | None = None
        self._allowed_memo: dict[int, frozenset] = {}

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> SentencePieceTokenizer:
        return cls.from_description(read_sentencepiece(path))

    @classmethod
    def from_description(cls, model: SentencePieceModel) -> SentencePieceTokenizer:
        """The tokenizer of a `.model` file read by `tokviz.core.formats.sentencepiece`."""
        try:
            tok = cls(model.proto, name=model.name)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{model.source}: {exc}") from None
        tok.source = model.source
        tok.ends = declared_ends(model.declared)  # a GGUF file's BOS/EOS; a .model file declares none
        return tok

    def __repr__(self) -> str:
        return f"<SentencePieceTokenizer {self.name!r} {self.model_kind} n_vocab={self.n_vocab}>"

    # -- vocabulary --------------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return len(self.proto.pieces)

    def piece_to_id(self, piece: str) -> int:
        """sentencepiece's ``PieceToId``: control/unknown/byte pieces first, unknown strings -> unk."""
        ids = self._index.ids_of(piece)
        for table in (self._in_reserved, self._in_normal):
            for i in ids:
                if table[i]:
                    return i
        return self.unk_id

    def _is_unknown(self, token_id: int) -> bool:
        return token_id < 0 or token_id in self.unknown_ids

    def token_text(self, token_id: int) -> str:
        """The piece as the vocabulary writes it (``▁the``, ``<0xE4>``, ``<s>``)."""
        self._check_ids([token_id])
        return self.proto.pieces[token_id]

    def piece_type(self, token_id: int) -> str:
        """``"normal"``, ``"unknown"``, ``"control"``, ``"user-defined"``, ``"unused"`` or ``"byte"``."""
        self._check_ids([token_id])
        return PIECE_TYPES[int(self.proto.type_array[token_id])]

    def score(self, token_id: int) -> float:
        self._check_ids([token_id])
        return float(self.proto.score_array[token_id])

    @property
    def byte_fallback(self) -> bool:
        return self._byte_ids is not None

    def _bytes_table(self) -> _TokenBytes:
        if self._vocab_bytes is None:
            self._vocab_bytes = _TokenBytes(self.proto.pieces, self.types)
        return self._vocab_bytes

    def vocab(self) -> list[bytes]:
        """Each id's text as bytes (``▁`` as a space, byte pieces as their byte)."""
        table = self._bytes_table()
        return [table[i] for i in range(self.n_vocab)]

    def token_bytes(self, token_id: int) -> bytes:
        self._check_ids([token_id])
        return self._bytes_table()[token_id]

    def is_special(self, token_id: int) -> bool:
        return token_id in self.control_ids or token_id == self.unk_id

    def _check_ids(self, ids: Sequence[int]) -> None:
        n = self.n_vocab
        for i in ids:
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
                raise EncodeError(f"id {i!r} is not in the vocabulary (valid ids: 0..{n - 1})")

    # -- encoding ----------------------------------------------------------------------------------

    def normalize(self, text: str) -> str:
        """The normalized text the model sees (``▁Hello▁world``)."""
        return self.normalizer.normalize(text)[0]

    def _columns(self, norm: str, step: int | None = None, processes: int = 1,
                 skip: Callable[[], bool] | None = None) -> tuple[list[int], list[int], list[int]]:
        """Ids, starts and ends of the model's pieces over normalized text, after sentencepiece's
        unknown handling (`unknown_columns`); `skip`: see `SpBpe.sample`."""
        bpe, allowed = self.bpe, self._allowed(step)
        if self.lattice is not None:
            ids, ends = self.lattice.best_path(norm, processes=processes)
        elif skip is None:  # (an empty text's [] either way)
            ids = bpe.compiled_ids(norm, allowed, raw=True) or bpe.encode_ids(norm, allowed)[0]  # type: ignore
            ends = bpe.ends_of(ids)  # type: ignore[union-attr]
        else:
            raw = bpe.sample(norm, skip, allowed)  # type: ignore[union-attr]
            ids, ends = [i for _, _, i in raw], [b for _, b, _ in raw]
        return unknown_columns(norm, ids, ends, unknown=self.unknown_ids, unk_id=self.unk_id, byte_ids=self._byte_ids)

    def _encode_text(self, text: str, offset: int, out: Encoding, step: int | None = None,
                     processes: int = 1, skip: Callable[[], bool] | None = None) -> None:
        norm, n2o = self.normalizer.normalize(text, aligned=True)
        append_columns(out, text, offset, n2o, *self._columns(norm, step, processes, skip),  # type: ignore[arg-type]
                       tokens_of=self._bytes_table().many, unknown=self.unknown_ids)

    def encode(self, text: str, *, step: int | None = None, allowed_special: Collection[str] | str = (),
               disallowed_special: Collection[str] | str = (), processes: int = 1) -> Encoding:
        """sentencepiece's ``encode(text)`` with tokens and spans (control symbols in the text
        are text, as in the library), with the BOS/EOS the file declares (`ends`); `processes`: see
        `PieceLattice.best_segments`. Nothing is encoded before a field is read: the ids alone
        (`encode_ids`) when they are read first, else everything at once."""
        allowed_specials(text, self.special_tokens, allowed_special, disallowed_special)  # the errors, now
        return LazyEncoding(lambda: self.encode_ids(text, step=step, add_special_tokens=True, processes=processes),
                            lambda: self._encode_all(text, step, allowed_special, disallowed_special, processes))

    def _encode_all(self, text: str, step: int | None, allowed_special: Collection[str] | str,
                    disallowed_special: Collection[str] | str, processes: int) -> Encoding:
        """`encode`'s every field (the ids, tokens and spans at once)."""
        enc = encode_with_specials(text, self.special_tokens, self.token_bytes,
                                   lambda part, offset, out: self._encode_text(part, offset, out, step, processes),
                                   allowed_special=allowed_special, disallowed_special=disallowed_special)
        return add_ends(enc, *self.ends, len(text), self.token_bytes)

    def encode_ordinary(self, text: str, *, step: int | None = None, processes: int = 1) -> Encoding:
        out = Encoding([], [], [], [], [], [])
        self._encode_text(text, 0, out, step, processes)
        return out

    def encode_ids(self, text: str, *, step: int | None = None, add_special_tokens: bool = False,
                   processes: int = 1) -> list[int]:
        """Just the ids (= ``SentencePieceProcessor.encode(text)``); `add_special_tokens`: with the
        BOS/EOS the file declares, as `encode`."""
        if add_special_tokens and any(self.ends):
            lead, tail = self.ends
            return [*lead, *self.encode_ids(text, step=step, processes=processes), *tail]
        norm = self.normalizer.normalize(text)[0]
        if not norm:  # an empty or blank line: nothing to segment
            return []
        if self.lattice is not None:
            compiled = self.lattice.loaded
            if compiled is None and self._fuse_unknown is not None and len(norm) >= _ARRAYS_MIN:
                compiled = self.lattice.compiled_for(len(norm), count=False)  # (counted below when None)
            if compiled is not None and self._fuse_unknown is not None:  # one call and one list, a line or a text
                return compiled.fused_ids(norm, self._fuse_unknown).tolist()
            # a long text's ids stay arrays through the unknown handling (numpy's per-call cost
            # is more than a line's lists)
            ids, seg_ends = self.lattice.best_segments(norm, processes=processes, arrays=len(norm) >= _ARRAYS_MIN)
            if isinstance(ids, np.ndarray):  # the compiled Viterbi's: no list until the end
                return self._array_ids(norm, ids, seg_ends[0])
            if -1 not in ids and self.unknown_ids.isdisjoint(ids):
                return ids
            # the ends are only needed to cut unknown pieces into bytes
            ends = absolute_ends(seg_ends) if self._byte_ids is not None else ()
        else:
            allowed = self._allowed(step)
            ids = self.bpe.compiled_ids(norm, allowed)  # type: ignore[union-attr]
            if ids is not None:  # with byte fallback, no piece there is unknown (it came as bytes)
                ends_of = tuple
            else:
                ids, ends_of = self.bpe.encode_ids(norm, allowed)  # type: ignore[union-attr]
            if -1 not in ids and self.unknown_ids.isdisjoint(ids):
                return ids
            ends = ends_of() if self._byte_ids is not None else ()
        return resolve_unknowns(norm, ids, ends, unknown=self.unknown_ids, unk_id=self.unk_id,
                                byte_ids=self._byte_ids)

    def warm_up(self) -> None:
        """Load the compiled Viterbi of a Unigram model, or merge loop of a BPE one, now (with
        numba): the window calls this while idle, so its texts take the compiled path at once; a
        one-off command never does, and loads it only when its text repays numba's import
        (`tokviz.core.unigram.encoder.lattice.COMPILE_MIN`, `bpe.COMPILE_MIN`)."""
        if self.lattice is not None:
            _ = self.lattice.compiled  # made on first use
        elif self.bpe is not None:
            self.bpe.compiled()

    def prepare_for(self, text: str) -> None:
        """Load now what encoding `text` repays, so that forked children encoding it inherit it: a
        Unigram model's compiled Viterbi before `COMPILE_MIN` characters or more (it would load
        once that many had taken the plain path), a BPE model's compiled merge loop before a text
        of many new words (`SpBpe.repaid_by`; else after `bpe.COMPILE_MIN` words merged in Python)."""
        if self.lattice is not None and len(text) >= LATTICE_COMPILE_MIN:
            _ = self.lattice.compiled  # made on first use
        elif self.bpe is not None and self.bpe.repaid_by(text):
            self.bpe.compiled()

    def _array_ids(self, norm: str, ids: np.ndarray, ends: np.ndarray) -> list[int]:
        """`encode_ids`'s unknown handling on the compiled Viterbi's ids and ends."""
        unknown = ids < 0
        if self.unknown_ids:
            unknown |= np.isin(ids, np.fromiter(self.unknown_ids, dtype=np.int64))
        at = np.flatnonzero(unknown)
        if not len(at):
            return ids.tolist()
        if self._byte_ids is None:
            return fused_runs(ids, at, self.unk_id)
        return resolve_unknowns(norm, ids.tolist(), ends.tolist(), unknown=self.unknown_ids, unk_id=self.unk_id,
                                byte_ids=self._byte_ids)

    def chunks(self, text: str) -> list[str]:
        """The parts of the normalized text the model segments independently (words)."""
        norm = self.normalize(text)
        cut = self.lattice.segments if self.lattice is not None else self.bpe.segments  # type: ignore[union-attr]
        return [norm[a:b] for a, b in cut(norm)]

    # -- decoding ----------------------------------------------------------------------------------

    def _surfaces(self, ids: Sequence[int], *, raw: bool) -> list[str | bytes]:
        self._check_ids(ids)
        return decode_surfaces(self.proto, self.types, self._is_unknown, ids, raw=raw)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        """sentencepiece's ``decode(ids)``."""
        if errors != "replace":
            return self.decode_bytes(ids).decode("utf-8", errors=errors)
        text = "".join(self._surfaces(ids, raw=False))  # type: ignore[arg-type]
        if self.denormalizer is not None:
            text = self.denormalizer.normalize(text)[0]
        return text

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The decoded text's bytes, byte pieces as their raw bytes (no U+FFFD)."""
        return b"".join(s if isinstance(s, bytes) else s.encode("utf-8") for s in self._surfaces(ids, raw=True))

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """Each token's bytes as the vocabulary has them (``▁`` as a space), as `HfTokenizer`."""
        self._check_ids(ids)
        table = self._bytes_table()
        return [table[i] for i in ids]

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        return offsets_of(self.decode_tokens_bytes(ids))

    # -- the merge timeline (BPE models) -----------------------------------------------------------

    def _merge_ids(self) -> list[int]:
        """Ids of the pieces merges can form, best score first: a BPE model's merge timeline
        (step k allows only the first k; a Unigram model has none)."""
        if self._merge_order is None:
            if self.bpe is None:
                self._merge_order = []
            else:
                ok = np.fromiter(self.bpe.mergeable, np.int64, len(self.bpe.mergeable))
                cand = ok[(self.proto.pieces.char_lengths()[ok] > 1) & (self.types[ok] != USER_DEFINED)]
                scores = self.proto.score_array[cand].astype(np.float64)
                if np.isfinite(scores).all():  # in numpy: opening Mistral's model for an encode took 20 ms more
                    self._merge_order = cand[np.lexsort((cand, -scores))].tolist()
                else:  # NaN keeps the order Python's sort gives it
                    key = self.proto.scores
                    self._merge_order = sorted(cand.tolist(), key=lambda i: (-key[i], i))
        return self._merge_order

    @property
    def n_merges(self) -> int:  # type: ignore[override]
        return len(self._merge_ids())

    def _allowed(self, step: int | None):
        if step is None or self.bpe is None or step >= self.n_merges:
            return None
        k = max(0, int(step))
        hit = self._allowed_memo.get(k)
        if hit is None:
            if len(self._allowed_memo) >= 6:
                del self._allowed_memo[next(iter(self._allowed_memo))]
            hit = self._allowed_memo[k] = frozenset(self._merge_ids()[:k])
        return hit

    def merge_of(self, token_id: int) -> tuple[int, int] | None:
        """The two pieces a BPE piece is taken to merge from: the split whose halves are both
        pieces and come earliest on the timeline (sentencepiece keeps no merge list)."""
        if self.bpe is None:
            return None
        if self._rank_of is None:
            self._rank_of = {i: r for r, i in enumerate(self._merge_ids())}
        rank = self._rank_of
        if token_id not in rank:
            return None
        piece = self.proto.pieces[token_id]
        best = None
        for k in range(1, len(piece)):
            left, right = self._normal.get(piece[:k]), self._normal.get(piece[k:])
            if left is None or right is None:
                continue
            key = max(rank.get(left, -1), rank.get(right, -1))
            if key < rank[token_id] and (best is None or key < best[0]):
                best = (key, (left, right))
        return best[1] if best else None

    def merge_list(self, **_: object) -> Sequence[LoadedMerge]:
        """The merges in timeline order, each row worked out when first read (`ScoreMerges`)."""
        return ScoreMerges(self._merge_ids(), self._bytes_table().__getitem__, self.merge_of)

    # -- explaining --------------------------------------------------------------------------------

    def explain(self, word: str, *, step: int | None = None) -> list[ExplainStep]:
        """BPE: the symbols `word` starts as, then one entry per merge that fires (the whole
        segmentation after it). Unigram: one entry, the best segmentation."""
        if self.bpe is None:
            return [ExplainStep(None, None, None, tuple(self.encode_ids(word)))]
        norm = self.normalize(word)
        allowed = self._allowed(step)
        steps, _ = self.bpe.trace(norm, allowed)
        symbols = self.bpe.initial(norm)
        to_id = self.piece_to_id
        if self._rank_of is None:
            self._rank_of = {i: r for r, i in enumerate(self._merge_ids())}
        out = [ExplainStep(None, None, None, tuple(to_id(norm[a:b]) for a, b in symbols))]
        for a, m, b in steps:
            k = next(j for j, (x, _) in enumerate(symbols) if x == a)
            symbols[k : k + 2] = [(a, b)]
            new = to_id(norm[a:b])
            out.append(ExplainStep(self._rank_of.get(new), (to_id(norm[a:m]), to_id(norm[m:b])), new,
                                   tuple(to_id(norm[x:y]) for x, y in symbols)))
        return out

    def unreachable(self, token_id: int) -> Reason | None:
        """Why encoding the piece's own text does not give it back (`text_reason`), or None."""
        return text_reason(self, token_id)

    def lattice_view(self) -> LatticeView | None:
        """What explains a Unigram model's words (`tokviz.core.explain.unigram`); None
        for a BPE model."""
        if self.lattice is None:
            return None
        from tokviz.core.algorithm.records import LatticeView

        cm = self.normalizer.charsmap
        return LatticeView(self.lattice, self.proto.scores, self.unk_id, self.normalize,
                           lambda text: cm is not None and any(cm.single.get(c, c) != c for c in text))
