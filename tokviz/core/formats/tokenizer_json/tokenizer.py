"""`HfTokenizer`: a Hugging Face ``tokenizer.json`` run by tokviz's own code, with spans.

The pipeline is tokenizers' own: cut out added tokens, normalize (keeping each character's span
in the input), pre-tokenize into words, run the model (BPE or WordPiece) on each word, then the
post-processor's special tokens (BOS, CLS/SEP). ``encode(text).ids`` equals tokenizers'
``Tokenizer.encode(text).ids``; `encode_ordinary` leaves out added tokens and the post-processor.
Components tokviz cannot run are named in an `UnsupportedComponent` error.
What this leaves out: the components themselves (``hf_normalizers``, ``hf_pretokenizers``,
``hf_models``, ``hf_decoders``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from operator import itemgetter
from pathlib import Path

import regex

from tokviz.core.algorithm.defaults import TokenizerDefaults
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.encoding import Encoding, LazyEncoding, allowed_specials, offsets_of, uncovered
from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.tiktoken import RANK_SLACK
from tokviz.core.formats.tokenizer_json.added import (
    AddedMatcher,
    AddedPatterns,
    PieceCache,
    append_shifted,
    literal_inside,
    literal_test,
    split_added,
)
from tokviz.core.formats.tokenizer_json.components import build_normalizer, build_pre_tokenizer, contains
from tokviz.core.formats.tokenizer_json.decoders import (
    ByteLevelDecoder,
    Decoder,
    PostProcessor,
    build_decoder,
    build_post_processor,
)
from tokviz.core.formats.tokenizer_json.dropout import HfDropout
from tokviz.core.formats.tokenizer_json.explaining import HfExplaining
from tokviz.core.formats.tokenizer_json.markers import (
    MARKER,
    cut_tokens,
    marker_cuts,
    marker_cuts_exact,
    marker_pieces,
    model_word_ids,
    uses_marker,
)
from tokviz.core.formats.tokenizer_json.models import HfBpeModel, WordPieceModel, build_model
from tokviz.core.formats.tokenizer_json.normalizers import Normalizer, NormStr
from tokviz.core.formats.tokenizer_json.pretokenizers import (
    CHAR_BYTE,
    ByteLevelNormalizer,
    ByteLevelPre,
    PreTokenizer,
    to_byte_chars,
)
from tokviz.core.formats.tokenizer_json.word_ids import WordIds, byte_word_ids
from tokviz.core.io.checks import is_count
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes
from tokviz.core.special_tokens import AddedToken
from tokviz.core.text.surrogates import surrogate_safe
from tokviz.core.text.token_text import byte_char_spans, check_ids

_BYTE_TOKEN = regex.compile(r"<0x([0-9A-F]{2})>")
_END = itemgetter(1)


def _added_id(value: object) -> int:
    """An added token's id: a whole number in range (``1e400``, ``3.5`` or ``true`` are refused)."""
    if not is_count(value):
        raise ModelFormatError(f"an added token's id must be a whole number from 0, not {value!r}")
    return value


@surrogate_safe
class HfTokenizer(HfDropout, HfExplaining, TokenizerDefaults):
    """A tokenizer.json pipeline. ``HfTokenizer.from_file("tokenizer.json")``."""

    kind = "hf"
    writes_token_text = True  # token_text(): the vocabulary's strings
    ids_by_merge_rank = takes_processes = one_off_paths = ranks_merges = False  # the protocol's capabilities
    source: str | None = None  # the file it was loaded from

    def __init__(
        self,
        model: HfBpeModel | WordPieceModel,
        *,
        normalizer: Normalizer | None = None,
        pre_tokenizer: PreTokenizer | None = None,
        post_processor: PostProcessor | None = None,
        decoder: Decoder | None = None,
        added_tokens: Sequence[AddedToken] = (),
        name: str = "tokenizer.json",
    ) -> None:
        self.model = model
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.decoder = decoder
        self.added = list(added_tokens)
        self.name = name
        self.special_tokens = {t.content: t.id for t in self.added}
        self._all_specials = frozenset(self.special_tokens)  # one object: its hash is kept
        self._special_ids = frozenset(t.id for t in self.added if t.special) | frozenset(
            (post_processor.before + post_processor.after) if post_processor else ()
        )
        # (its parts hold no bound method of self: a frozen cycle (`gc.freeze`) would never be freed)
        self._patterns = AddedPatterns(self.added, normalizer.text if normalizer is not None else None)
        self._pieces = PieceCache()
        self._added_ids = {t.id: t for t in self.added}
        ids = [*model.vocab.values(), *(t.id for t in self.added)]
        if any(not is_count(i) for i in ids):
            raise ModelFormatError("a token id is negative or not a whole number")
        size = max(ids, default=-1) + 1
        if size > len(ids) + RANK_SLACK:  # tables are sized by the largest id: bound it by the file
            raise ModelFormatError(f"token id {size - 1:,} is far beyond the {len(ids):,} tokens the file holds")
        strings: list[str | None] = [None] * size
        for s, i in model.vocab.items():
            strings[i] = s
        for t in self.added:
            strings[t.id] = t.content
        self._strings = strings
        self._byte_level = (contains(pre_tokenizer, (ByteLevelPre,)) or contains(decoder, (ByteLevelDecoder,))
                            or contains(normalizer, (ByteLevelNormalizer,)))
        self._marker = MARKER if uses_marker(decoder) else None
        self._unk_id = model.vocab.get(model.unk_token) if model.unk_token else None
        self._vocab_bytes: list[bytes | None] | None = None
        self._cut_marker = marker_cuts_exact(model, strings)
        self._merge_of: dict[int, tuple[int, int]] | None = None
        model_ids = partial(model_word_ids, model, self._cut_marker, kept=True)
        if not self._cut_marker or pre_tokenizer is None or pre_tokenizer.word_map is not None:
            model_ids = model.tokenize_ids  # (words with no ▁ to cut at inside: pieces cut at ▁, byte-level)
        if pre_tokenizer is None and self._cut_marker:  # (Mistral) the text's pieces between ▁ cuts
            self._word_ids: WordIds | None = WordIds(marker_pieces, model_ids)
        else:
            self._word_ids = WordIds.of(pre_tokenizer, model_ids, byte_word_ids(model, pre_tokenizer))
        pre = pre_tokenizer
        self._plain_byte_level = (
            normalizer is None and isinstance(pre, ByteLevelPre) and pre.use_regex
            and not pre.add_prefix_space and model.lists_merges
        )

    def _normalize_text(self, text: str) -> str:
        return text if self.normalizer is None else self.normalizer.text(text)

    @property
    def byte_level(self) -> bool:
        """True when tokens are GPT-2's byte-level characters (ByteLevel pre-tokenizer or decoder)."""
        return self._byte_level

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "HfTokenizer":
        path = Path(path)
        data = read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError)
        d = parse_json(data, str(path), ModelFormatError, what="tokenizer.json")
        try:
            return cls.from_json(d, name=path.parent.name or path.name)
        except ModelFormatError as exc:
            raise type(exc)(f"{path}: {exc}") from None

    @classmethod
    def from_json(cls, d: object, *, name: str = "tokenizer.json") -> "HfTokenizer":
        if not isinstance(d, Mapping) or not isinstance(d.get("model"), Mapping):
            raise ModelFormatError("not a tokenizer.json (no 'model' object)")
        try:
            return cls(
                build_model(d["model"]),
                normalizer=build_normalizer(d.get("normalizer")),
                pre_tokenizer=build_pre_tokenizer(d.get("pre_tokenizer")),
                post_processor=build_post_processor(d.get("post_processor")),
                decoder=build_decoder(d.get("decoder")),
                added_tokens=[
                    AddedToken(_added_id(t["id"]), str(t["content"]), bool(t.get("special", False)),
                               bool(t.get("normalized", not t.get("special", False))),
                               bool(t.get("lstrip")), bool(t.get("rstrip")), bool(t.get("single_word")))
                    for t in d.get("added_tokens") or []
                ],
                name=name,
            )
        except ModelFormatError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelFormatError(f"malformed tokenizer.json ({type(exc).__name__}: {exc})") from None

    def __repr__(self) -> str:
        return f"<HfTokenizer {self.name!r} {self.model.kind} n_vocab={self.n_vocab}>"

    # -- vocabulary -------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return len(self._strings)

    @property
    def unk_id(self) -> int | None:
        """The id the model gives what it does not know (``[UNK]``), or None when it has none."""
        return self._unk_id

    @property
    def n_merges(self) -> int:
        return self.model.n_merges

    def token_text(self, token_id: int) -> str:
        """The token as the vocabulary writes it (``Ġhello``, ``▁hello``, ``##ing``, ``<0xE4>``)."""
        check_ids([token_id], self._strings)
        return self._strings[token_id]  # type: ignore[return-value]

    def _surface(self, i: int) -> bytes | None:
        s = self._strings[i]
        if s is None:
            return None
        if i in self._added_ids:
            return s.encode("utf-8")
        if self.model.byte_fallback:
            m = _BYTE_TOKEN.fullmatch(s)
            if m:
                return bytes([int(m.group(1), 16)])
        if self._byte_level:
            try:
                return bytes(CHAR_BYTE[c] for c in s)
            except KeyError:
                pass
        if self._marker:
            s = s.replace(self._marker, " ")
        mark = self.model.continuation_mark
        if mark and s.startswith(mark):
            s = s[len(mark):]
        return s.encode("utf-8")

    def _bytes_table(self) -> list[bytes | None]:
        if self._vocab_bytes is None:
            self._vocab_bytes = [self._surface(i) for i in range(len(self._strings))]
        return self._vocab_bytes

    def vocab(self) -> list[bytes | None]:
        """Each id's text as bytes (byte-level and ``<0xNN>`` tokens as their bytes, ``▁`` as a
        space, ``##`` dropped); None for unused ids."""
        return list(self._bytes_table())

    def token_bytes(self, token_id: int) -> bytes:
        check_ids([token_id], self._strings)
        return self._bytes_table()[token_id]  # type: ignore[return-value]

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_ids

    def _limit(self, step: int | None) -> int:
        if step is None:
            return INF_RANK
        return max(0, min(int(step), self.n_merges)) if self.n_merges else INF_RANK

    # -- the pipeline -----------------------------------------------------------------------

    def _words(self, ns: NormStr, norm_added: AddedMatcher | None, as_text=None,
               reference: bool = False) -> list[tuple[NormStr, int | None]]:
        """Normalize one piece of text and cut it into model words (or normalized added tokens)."""
        if self.normalizer is not None:
            ns = self.normalizer.as_reference(ns) if reference else self.normalizer(ns)
        out: list[tuple[NormStr, int | None]] = []
        spans = ns.spans
        in_input = None if as_text is None or spans is None else (
            lambda a, b, tid: as_text(spans[a][0], spans[b - 1][1], tid))  # normalized -> input positions
        for a, b, added in split_added(ns.text, norm_added, in_input):
            piece = ns.slice(a, b)
            if added is not None:
                out.append((piece, added))
                continue
            words = self.pre_tokenizer([piece]) if self.pre_tokenizer is not None else ([piece] if piece.text else [])
            out.extend((w, None) for w in words)
        return out

    def _model_tokens(self, word: str, limit: int):
        """The model's tokens of one word (cut at its ``▁`` markers first when that is exact)."""
        cuts = marker_cuts(word) if self._cut_marker else None
        return self.model.tokenize(word, limit) if cuts is None else cut_tokens(self.model.tokenize, word, cuts, limit)

    def _model_ids(self, word: str, limit: int, *, kept: bool = False) -> list[int]:
        """The ids of `_model_tokens` (`model_word_ids`)."""
        return model_word_ids(self.model, self._cut_marker, word, limit, kept=kept)

    def _ids(self, text: str, *, limit: int, allowed: Collection[str], post: bool) -> list[int]:
        """The ids of `_run` (not aligned): through `WordIds` when the pre-tokenizer cuts strings."""
        if self._word_ids is None:
            return self._run(text, limit=limit, allowed=allowed, post=post, aligned=False).ids
        ids = self._word_ids.text_ids(text, limit, self._patterns.get(allowed, False),
                                      self._patterns.get(allowed, True), self._normalize_text)
        pp = self.post_processor
        return [*pp.before, *ids, *pp.after] if post and pp is not None else ids

    def _run(self, text: str, *, limit: int, allowed: Collection[str], post: bool, aligned: bool,
             literal: Sequence[tuple[int, int]] = (), reference: bool = False) -> Encoding:
        out = Encoding([], [], [], [], [], [])
        raw_added = self._patterns.get(allowed, False)
        norm_added = self._patterns.get(allowed, True)
        as_text = literal_test(literal, self._special_ids)
        vocab = self._bytes_table() if aligned else None
        covered: list[tuple[int, int]] = []
        pieces = split_added(text, raw_added, as_text)
        for a, b, added in pieces:
            if added is not None:
                self._push_special(out, added, (a, b), vocab)
            elif not aligned:
                for word, w_added in self._words(NormStr.of(text[a:b], a, aligned=False), norm_added):
                    if w_added is not None:
                        self._push_special(out, w_added, (a, a), None)
                    else:
                        out.ids.extend(self._model_ids(word.text, limit))
            elif len(pieces) == 1 or reference:  # one text: nothing to reuse
                self._encode_piece(text, a, b, limit, norm_added, as_text, out, covered, reference=reference)
            else:  # text between added tokens (a chat's messages): edits re-encode only their piece
                key = (text[a:b], a == 0, limit, norm_added.key if norm_added else None, literal_inside(literal, a, b))
                hit = self._pieces.get(key)
                if hit is None:
                    piece, cov = Encoding([], [], [], [], [], []), []
                    self._encode_piece(text[a:b], 0, b - a, limit, norm_added, literal_test(key[4], self._special_ids),
                                       piece, cov, first=a == 0)
                    hit = self._pieces.put(key, piece, cov)
                append_shifted(out, covered, *hit, a)
        if post and self.post_processor is not None:
            pp = self.post_processor
            n = len(text)
            if pp.before:
                head = Encoding([], [], [], [], [], [])
                for tid in pp.before:
                    self._push_special(head, tid, (0, 0), vocab)
                shift = len(pp.before)
                out.ids[:0] = head.ids
                out.tokens[:0] = head.tokens
                out.spans[:0] = head.spans
                out.special[:] = list(range(shift)) + [i + shift for i in out.special]
                out.unknown[:] = [i + shift for i in out.unknown]
            for tid in pp.after:
                self._push_special(out, tid, (n, n), vocab)
        if aligned:
            covered.extend(out.spans[i] for i in out.special)
            out.dropped.extend(uncovered(sorted(covered), len(text)))
        return out

    def _encode_piece(self, text: str, a: int, b: int, limit: int, norm_added, as_text, out: Encoding,
                      covered: list, *, first: bool | None = None, reference: bool = False) -> None:
        """Encode ``text[a:b]`` (no raw added token inside) onto `out`; `first`: whether the piece
        starts the input (Metaspace's "first" scheme) when `a` alone does not say it; `reference`:
        spans as tokenizers' offsets (its alignments, a token from its first character's start to
        its last one's end) rather than each token over all the input its characters came from."""
        vocab = self._bytes_table()
        if self._plain_byte_level and norm_added is None:
            self._byte_level_spans(text[a:b], a, limit, out, covered)
            return
        ns = NormStr.of(text[a:b], a)
        if first is not None:
            ns.first = first
        for word, w_added in self._words(ns, norm_added, as_text, reference):
            if w_added is not None:
                sp = word.spans
                self._push_special(out, w_added, (sp[0][0], sp[-1][1]) if sp else (a, a), vocab)
                continue
            spans = word.spans
            toks = self._model_tokens(word.text, limit)
            ids = [t[0] for t in toks]
            new = [((sub[0][0], sub[-1][1]) if reference else (min(sub)[0], max(map(_END, sub)))) if sub else (a, a)
                   for sub in [spans[s:e] for _, s, e in toks]]  # type: ignore[index]
            unk = self._unk_id
            if unk is not None and unk in ids:
                base = len(out.ids)
                out.unknown.extend(base + k for k, t in enumerate(ids) if t == unk)
            out.ids.extend(ids)
            out.tokens.extend(map(vocab.__getitem__, ids))  # type: ignore[arg-type]
            out.spans.extend(new)
            covered.extend(new)

    def _byte_level_spans(self, seg: str, offset: int, limit: int, out: Encoding, covered: list) -> None:
        """GPT-2 style (no normalizer, ByteLevel split): spans straight from byte lengths."""
        pre = self.pre_tokenizer
        vocab = self._bytes_table()
        for m in pre.regex.finditer(seg):  # type: ignore[union-attr]
            word = m.group()
            toks = self._model_tokens(to_byte_chars(word), limit)
            spans = byte_char_spans(word, [e - s for _, s, e in toks], offset + m.start())
            out.ids.extend(t[0] for t in toks)
            out.tokens.extend(vocab[t[0]] for t in toks)  # type: ignore[misc]
            out.spans.extend(spans)
            covered.extend(spans)

    def _push_special(self, out: Encoding, tid: int, span: tuple[int, int], vocab) -> None:
        out.special.append(len(out.ids))
        out.ids.append(tid)
        if vocab is not None:
            out.tokens.append(vocab[tid] or b"")
            out.spans.append(span)

    def chunks(self, text: str) -> list[str]:
        """The words the model sees (normalized and pre-tokenized, e.g. ``Ġhello``)."""
        return [w.text for w, added in self._words(NormStr.of(text, aligned=False), None) if added is None]

    def text_chunks(self, text: str) -> list[str]:
        """The words of `chunks` as text: normalized and split, before ByteLevel turns each byte
        into a character (``" hello"``, not ``"Ġhello"``)."""
        norm = self.normalizer.text(text) if self.normalizer is not None else text
        if self.pre_tokenizer is None:
            return [norm] if norm else []
        words = self.pre_tokenizer.split_unmapped([norm])
        return words if words is not None else self.chunks(text)

    @property
    def split_regexes(self) -> tuple[str, ...] | None:
        """The regexes the pre-tokenizer splits with in turn, or None when it splits otherwise."""
        return self.pre_tokenizer.split_regexes if self.pre_tokenizer is not None else None

    # -- the grid ---------------------------------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        step: int | None = None,
        add_special_tokens: bool = True,
        allowed_special: Collection[str] | str = "all",
        disallowed_special: Collection[str] | str = (),
        literal_spans: Sequence[tuple[int, int]] = (),
    ) -> Encoding:
        """Encode like tokenizers' ``encode(text)``: added tokens in the text are recognised
        (those in `allowed_special`; "all" by default) and the post-processor adds its special
        tokens when `add_special_tokens`. Special tokens lying inside one of the character ranges
        `literal_spans` are ordinary text (a chat message a user typed, inside a template's own
        control tokens). Nothing is encoded before a field is read: the ids alone by the ids path
        when they are read first, else everything at once."""
        if allowed_special == "all":  # then nothing is disallowed
            allowed: Collection[str] = self._all_specials
        else:
            allowed = allowed_specials(text, self.special_tokens, allowed_special, disallowed_special)
        limit = self._limit(step)
        if literal_spans:  # the ids path does not keep normalized added tokens as text
            return self._run(text, limit=limit, allowed=allowed, post=add_special_tokens, aligned=True,
                             literal=literal_spans)
        return LazyEncoding(
            lambda: self._ids(text, limit=limit, allowed=allowed, post=add_special_tokens),
            lambda: self._run(text, limit=limit, allowed=allowed, post=add_special_tokens, aligned=True))

    def encode_as_reference(self, text: str, *, step: int | None = None, add_special_tokens: bool = True,
                            allowed: Collection[str] | None = None) -> Encoding:
        """`encode` (all added tokens recognised, or those in `allowed`) with tokenizers' own
        alignments for spans: the offsets `tokviz.core.formats.offsets` reports start from them."""
        return self._run(text, limit=self._limit(step), allowed=self._all_specials if allowed is None else allowed,
                         post=add_special_tokens, aligned=True, reference=True)

    def encode_ordinary(self, text: str, *, step: int | None = None) -> Encoding:
        """Encode `text` alone: added-token strings as plain text, no BOS/CLS/SEP."""
        return self._run(text, limit=self._limit(step), allowed=(), post=False, aligned=True)

    def encode_ids(self, text: str, *, step: int | None = None, add_special_tokens: bool = False,
                   allowed_special: Collection[str] | str | None = None,
                   disallowed_special: Collection[str] | str = ()) -> list[int]:
        """Ids only (the fast path). By default those of `encode_ordinary`; with
        ``add_special_tokens=True`` those of `encode` (= tokenizers' ``encode(text).ids``). Given
        `allowed_special` / `disallowed_special`, the added tokens are recognised as `encode`
        does with them."""
        if allowed_special is None:
            allowed = self._all_specials if add_special_tokens else ()
        else:
            allowed = allowed_specials(text, self.special_tokens, allowed_special, disallowed_special)
        return self._ids(text, limit=self._limit(step), allowed=allowed, post=add_special_tokens)

    def _token_strings(self, ids: Sequence[int], skip_special_tokens: bool) -> list[str]:
        check_ids(ids, self._strings)
        special = {t.id for t in self.added if t.special}
        return [self._strings[i] for i in ids if not (skip_special_tokens and i in special)]  # type: ignore[misc]

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False, errors: str = "replace") -> str:
        """tokenizers' ``decode(ids, skip_special_tokens=...)`` (special tokens kept by default).
        Partial UTF-8 becomes U+FFFD as tokenizers does it; other `errors` handlers apply to
        `decode_bytes`."""
        if errors != "replace":
            return self.decode_bytes(ids, skip_special_tokens=skip_special_tokens).decode("utf-8", errors=errors)
        toks = self._token_strings(ids, skip_special_tokens)
        if self.decoder is None:
            return " ".join(toks)
        return "".join(self.decoder(toks, False))

    def decode_bytes(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> bytes:
        """`decode` without turning partial UTF-8 into U+FFFD."""
        toks = self._token_strings(ids, skip_special_tokens)
        text = " ".join(toks) if self.decoder is None else "".join(self.decoder(toks, True))
        return text.encode("utf-8", "surrogateescape")

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        check_ids(ids, self._strings)
        vocab = self._bytes_table()
        return [vocab[i] for i in ids]  # type: ignore[misc]

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        return offsets_of(self.decode_tokens_bytes(ids))
