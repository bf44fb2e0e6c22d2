"""`RankBpeTokenizer`: tiktoken's byte-pair encoding, reimplemented so every token can be explained.

tiktoken's rule (its ``_byte_pair_merge``): a chunk whose bytes are a token is that token;
otherwise start from single bytes and repeatedly join the adjacent pair whose *concatenated bytes*
have the lowest rank, leftmost first, until no adjacent concatenation is a token. This is not
always what replaying a merge list gives: any two neighbours whose bytes form a token may join.

The merge timeline of a loaded encoding is its multi-byte tokens in rank order; step k allows only
the first k of them (single bytes are always there). A token's merge is the pair that tiktoken's
own rule produces on the token's bytes with only lower ranks allowed; a token for which that rule
ends in more than two parts has no merge (tiktoken still produces it for a chunk equal to it).

The id path (`encode_ids`) works on ints and bytes only, caches each distinct chunk, splits
with `fastsplit` (ASCII patterns on Python's `re` where the text allows), merges many new chunks
at once (`tokviz.core.bpe.byte_ranks.mergers`) and runs big texts in two processes when the caller allows two
(``processes``: `tokviz.core.processes.parallel`; `tokviz.core.processes.halves`).
What this leaves out: the merge loops (`tokviz.core.bpe.byte_ranks`), reading files (`tokviz.core.formats`),
vocabulary views and glitch tokens (`vocab_view`, `explain`), the merge timeline and the joins
inside a word (`rank_explain`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import chain, compress, filterfalse, islice, repeat
from operator import is_not, not_

import regex

from tokviz.core.algorithm.defaults import TokenizerDefaults
from tokviz.core.algorithm.records import LoadedMerge
from tokviz.core.bpe.byte_ranks.mergers import Mergers
from tokviz.core.bpe.byte_ranks.one_chunk import bpe_parts
from tokviz.core.bpe.dropout.sampled import ByteRankDropout
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.bpe.ranked.explaining import RankBpeExplaining
from tokviz.core.bpe.ranked.id_spans import SpanTable
from tokviz.core.bpe.ranked.ids_vocab import ids_vocab
from tokviz.core.bpe.ranked.json_output import RankBpeJson
from tokviz.core.encoding import Encoding, LazyEncoding, allowed_specials, ids_with_specials, offsets_of, uncovered
from tokviz.core.errors import ModelFormatError
from tokviz.core.processes import halves
from tokviz.core.processes.parallel import usable
from tokviz.core.text.fastsplit import FastSplitter, cut_points, other_scripts
from tokviz.core.text.split import split_specials
from tokviz.core.text.surrogates import surrogate_safe
from tokviz.core.text.token_text import byte_char_spans, check_ids, python_pattern
from tokviz.core.text.unicode_tables import PinnedPattern

_CACHE_LIMITS = 6  # how many step limits keep a chunk cache
_CACHE_SIZE = 500_000  # entries per chunk cache before it is cleared
_BATCH_MIN = 256  # fewer new chunks than this are merged one by one (numpy costs more than it saves)
_BATCH_NEW = 32_768  # new chunks merged in one `byte_ranks` call (bounds its arrays)
_HELD_CHUNKS = 1 << 18  # chunks of the runs waiting for their new chunks' batch (bounds memory)
# A text of mostly ASCII letters brings few new chunks: in one process it takes 1.12-1.15x
# tiktoken's time up to a million and a half characters, in two 1.0x of its time for 1.3x its CPU;
# it is cut in two from here on (a text of other scripts from `halves.PARALLEL_MIN_CHARS`: two
# processes take 1.27x tiktoken's time on a megabyte of udhr2 where one takes 1.67x)
HALVES_MIN_LATIN = 2_000_000


@surrogate_safe
class RankBpeTokenizer(ByteRankDropout, RankBpeExplaining, RankBpeJson, TokenizerDefaults):
    """tiktoken-compatible BPE from ``{token bytes: rank}``, a split pattern and special tokens.

    Ids are ranks, as in tiktoken. ``RankBpeTokenizer(ranks, pattern=GPT4_SPLIT_PATTERN)``.
    """

    kind = "tiktoken"
    source: str | None = None  # the file it was loaded from

    ids_by_merge_rank = False  # the Tokenizer protocol's capabilities (tokviz.core.algorithm.protocol)
    takes_processes = one_off_paths = True  # share_cache=, encode_ids_text, write_json_once (`json_output`)
    ranks_merges = True  # merge k forms merge_ranks[k], worked out on demand
    spells_text_bytes = True  # each chunk's UTF-8 merged into tokens: the text's bytes, less any unmatched text

    def __init__(
        self,
        mergeable_ranks: Mapping[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        name: str = "tiktoken",
    ) -> None:
        self.name = name
        self.pattern = pattern
        self.special_tokens = dict(special_tokens or {})
        enc = dict(mergeable_ranks)
        vocab = ids_vocab(enc, self.special_tokens, name)
        self._enc = enc
        self._vocab = vocab
        self._special_ids = frozenset(self.special_tokens.values())
        self._merge_ranks_list: list[int] | None = None  # made on first use (not needed to encode)
        try:
            self._regex = PinnedPattern(python_pattern(pattern))
        except (regex.error, OverflowError, RecursionError) as exc:
            raise ModelFormatError(f"{name}: invalid split pattern {pattern!r}: {exc}") from None
        self._split = FastSplitter(pattern, self._regex)
        self._caches: dict[int, dict[str, tuple[int, ...]]] = {}
        self._merges: list[LoadedMerge] | None = None
        self._mergers = Mergers(enc, vocab, INF_RANK)  # the batch merge loops, each made on first use
        self._spans: SpanTable | None = None  # spans from ids (made on first use)

    @classmethod
    def from_token_list(cls, tokens: Sequence[bytes], ranks: Sequence[int], **kw) -> RankBpeTokenizer:
        if len(tokens) != len(ranks):
            raise ModelFormatError("tokens and ranks differ in length")
        ranks_map = dict(zip(tokens, ranks))
        if len(ranks_map) != len(tokens):
            raise ModelFormatError(f"{kw.get('name', 'tiktoken')}: a token appears twice")
        return cls(ranks_map, **kw)

    def __repr__(self) -> str:
        return f"<RankBpeTokenizer {self.name!r} n_vocab={self.n_vocab}>"

    # -- vocabulary -------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return len(self._vocab)

    @property
    def n_merges(self) -> int:
        return len(self._merge_ranks)

    @property
    def _merge_ranks(self) -> list[int]:
        if self._merge_ranks_list is None:
            single = {self._enc[bytes([b])] for b in range(256)}
            self._merge_ranks_list = list(filterfalse(single.__contains__, sorted(self._enc.values())))
        return self._merge_ranks_list

    @property
    def merge_ranks(self) -> list[int]:
        """Ranks (= ids) of the tokens made by a merge, ascending: the merge timeline's order."""
        return self._merge_ranks

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """``{token bytes: rank}`` (a copy), as tiktoken's `_mergeable_ranks`."""
        return dict(self._enc)

    def token_bytes(self, token_id: int) -> bytes:
        check_ids([token_id], self._vocab)
        return self._vocab[token_id]  # type: ignore[return-value]

    def vocab(self) -> list[bytes | None]:
        """Bytes of every id (None for unused ids); special tokens as their UTF-8 text."""
        return list(self._vocab)

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_ids

    def chunks(self, text: str) -> list[str]:
        """The pre-tokenizer chunks of `text` (what BPE runs on, one at a time)."""
        return self._split.findall(text)

    def _threshold(self, step: int | None) -> int:
        """Tokens with rank below this may be formed at `step` (None: all merges)."""
        if step is None:
            return INF_RANK
        k = max(0, min(int(step), len(self._merge_ranks)))
        return self._merge_ranks[k] if k < len(self._merge_ranks) else INF_RANK

    def _index_of_rank(self, rank: int) -> int:
        return bisect_left(self._merge_ranks, rank)

    # -- encoding ---------------------------------------------------------------------------

    def _encode_piece(self, piece: bytes, thr: int) -> tuple[int, ...]:
        enc = self._enc
        r = enc.get(piece)
        if r is not None and (r < thr or len(piece) == 1):
            return (r,)
        b = bpe_parts(enc, piece, thr)
        return tuple([enc[piece[b[i] : b[i + 1]]] for i in range(len(b) - 1)])

    def _cache(self, thr: int) -> dict[str, tuple[int, ...]]:
        cache = self._caches.get(thr)
        if cache is None:
            if len(self._caches) >= _CACHE_LIMITS:
                del self._caches[next(iter(self._caches))]
            cache = self._caches[thr] = {}
        return cache

    def _chunk_ids(self, chunk: str, thr: int, cache: dict) -> tuple[int, ...]:
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        ids = cache[chunk] = self._encode_piece(chunk.encode("utf-8"), thr)
        return ids

    def encode_ids(
        self,
        text: str,
        *,
        step: int | None = None,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = (),
        share_cache: bool = True,
        processes: int = 1,
    ) -> list[int]:
        """The ids of `encode` with the same special-token arguments; by default those of
        `encode_ordinary` (= tiktoken's `encode_ordinary`). The fast path: no spans, no token
        bytes; given two `processes`, texts of a million characters or more are encoded in two
        where forking is safe (`halves`), the forked half's new chunks sent back to the cache
        unless `share_cache` is False (a one-off encode: the command line)."""
        thr = self._threshold(step)
        return ids_with_specials(text, self.special_tokens,
                                 lambda part: self._text_ids(part, thr, share_cache, processes),
                                 allowed_special=allowed_special, disallowed_special=disallowed_special)

    def _half_cut(self, text: str, processes: int) -> int | None:
        """Ready the merge loop for `text` (`Mergers.prepare`: every path that encodes a text goes
        through here first), then say where a big text is cut in two for two processes (`halves`:
        between two chunks, near the middle), the shared tables built first (once here, not in
        both processes, numpy's import too); None for a short text, a pattern without the fast
        splitter, one process allowed, or no fork possible here."""
        self._mergers.prepare(text)
        if len(text) < halves.PARALLEL_MIN_CHARS or self._split.ascii is None or usable(processes) < 2:
            return None
        if len(text) < HALVES_MIN_LATIN and not other_scripts(text):
            return None
        cut = cut_points(text, len(text) // 2)[1]
        if not 0 < cut < len(text):
            return None
        self._split.warm_up(text)
        self._mergers.before_fork()
        return cut

    def _text_ids(self, text: str, thr: int, share_cache: bool = True, processes: int = 1) -> list[int]:
        cache = self._cache(thr)
        cut = self._half_cut(text, processes)
        if cut is None:
            return self._ids(text, thr, cache)
        mark = [0]

        def encode(part: str) -> list[int]:
            mark[0] = len(cache)
            return self._ids(part, thr, cache)

        return halves.run_halves(
            encode,
            lambda: dict(islice(cache.items(), mark[0], None)) if share_cache else {},
            cache.update,
            text,
            cut,
        )

    def _ids(self, text: str, thr: int, cache: dict[str, tuple[int, ...]]) -> list[int]:
        """Chunk by chunk through the cache: the new chunks of some runs are encoded first (many
        at once by `byte_ranks`), then each run's ids are gathered in C (``map`` over the cache,
        ``chain``), no Python loop per chunk."""
        compiled = self._mergers.loaded if thr >= INF_RANK else None
        if compiled is not None:  # chunks looked up and merged in compiled calls, a few lists of them a text
            return compiled.lists_ids(self._split.chunk_lists(text), lambda chunks: self._listed(chunks, thr, cache))
        out: list[int] = []
        extend = out.extend
        lookup = cache.__getitem__
        for runs in self._cached_runs(text, cache, lambda new: self._encode_new(new, thr, cache)):
            for run in runs:
                extend(chain.from_iterable(map(lookup, run)))
        return out

    def _listed(self, chunks: Sequence[str], thr: int, cache: dict[str, tuple[int, ...]]) -> list[int]:
        """The ids of `chunks` through `cache` (the compiled calls' way out: a long chunk)."""
        new = set(chunks).difference(cache)
        if len(cache) + len(new) > _CACHE_SIZE:
            cache.clear()
            new = set(chunks)
        self._encode_new(new, thr, cache)
        return list(chain.from_iterable(map(cache.__getitem__, chunks)))

    def _cached_runs(self, text: str, known: dict, add: Callable[[Collection[str]], None]) -> Iterator[list[list[str]]]:
        """The runs of chunks of `text` (`FastSplitter.chunk_lists`), a few at a time, each group
        once ``add(new)`` has put its chunks not in `known` there (cleared when it grows too big)."""
        runs: list[list[str]] = []
        new: set[str] = set()
        held = 0  # chunks in `runs`
        for chunks in chain(self._split.chunk_lists(text), [None]):
            if chunks is not None:
                runs.append(chunks)
                held += len(chunks)
                new.update(set(chunks).difference(known))
                if len(new) < _BATCH_NEW and held < _HELD_CHUNKS:
                    continue
            if len(known) + len(new) > _CACHE_SIZE:  # bounded memory: start over
                known.clear()
                new = set(chain.from_iterable(runs))
            add(new)
            yield runs
            runs, new, held = [], set(), 0

    def encode_ids_text(self, text: str, *, step: int | None = None, allowed_special: Collection[str] | str = (),
                        disallowed_special: Collection[str] | str = (), processes: int = 1) -> str:
        """``ids_text(encode_ids(text, ...))``, the ids as decimal numbers separated by spaces, for
        a one-off encode (the command line): each distinct chunk's ids are written once and the
        runs joined from those texts, a big text's halves each in its own process given two
        `processes` (`halves`)."""
        thr = self._threshold(step)
        specials = {s: str(i) for s, i in self.special_tokens.items()}
        pieces = ids_with_specials(text, specials, lambda part: self._texts(part, thr, processes),  # type: ignore[arg-type]
                                   allowed_special=allowed_special, disallowed_special=disallowed_special)
        return " ".join(pieces)  # type: ignore[arg-type]

    def _texts(self, text: str, thr: int, processes: int) -> list[str]:
        """Non-empty texts of the ids of `text` (joined by spaces: its `ids_text`)."""
        cut = self._half_cut(text, processes)
        if cut is None:
            return self._texts_here(text, thr)
        return halves.run_halves(lambda part: self._texts_here(part, thr), dict, lambda d: None, text, cut, ids=False)

    def _texts_here(self, text: str, thr: int) -> list[str]:
        """`_texts` in this process: each run joined from the texts of its chunks."""
        compiled = self._mergers.loaded if thr >= INF_RANK else None
        if compiled is not None:
            joined = compiled.lists_text(self._split.chunk_lists(text), lambda chunks: self._listed(chunks, thr, {}))
            return [joined] if joined else []
        texts: dict[str, str] = {}  # chunk -> its ids as text (this call's own cache)
        lookup = texts.__getitem__

        def add(new: Collection[str]) -> None:
            (names, ranks), (others, ids) = self._encoded(new, thr, as_text=True)
            texts.update(zip(names, map(str, ranks)))
            texts.update(zip(others, ids))

        out = [" ".join(map(lookup, run)) for runs in self._cached_runs(text, texts, add) for run in runs]
        return [" ".join(filter(None, out))] if any(out) else []

    def _encode_new(self, chunks: Collection[str], thr: int, cache: dict[str, tuple[int, ...]]) -> None:
        """Put the ids of `chunks` in the cache (`_encoded`)."""
        (names, ranks), (others, ids) = self._encoded(chunks, thr)
        cache.update(zip(names, zip(ranks)))  # zip(x): 1-tuples
        cache.update(zip(others, ids))

    def _encoded(self, chunks: Collection[str], thr: int, *,
                 as_text: bool = False) -> tuple[tuple[list[str], list[int]], tuple[list[str], list]]:
        """The ids of `chunks`: ``((chunks that are one token, their ids), (the other chunks, their
        id tuples))`` (with `as_text`, each tuple as its ids separated by spaces); many at once
        through `byte_ranks` (`Mergers`)."""
        if len(chunks) < _BATCH_MIN or self._mergers.one_by_one:
            names = list(chunks)
            ids = [self._encode_piece(c.encode("utf-8"), thr) for c in names]
            if len(chunks) >= _BATCH_MIN:
                self._mergers.merged_one_by_one(len(chunks))
            return ([], []), (names, [" ".join(map(str, t)) for t in ids] if as_text else ids)
        names = list(chunks)
        pieces = list(map(str.encode, names))  # UTF-8
        ranks = list(map(self._enc.get, pieces))
        if thr >= INF_RANK:  # a chunk that is a token is that token (every single byte is one)
            whole = list(map(is_not, ranks, repeat(None)))
        else:
            whole = [r is not None and (r < thr or len(b) == 1) for r, b in zip(ranks, pieces)]
        one = list(compress(names, whole)), list(compress(ranks, whole))
        rest = list(map(not_, whole))
        names, pieces = list(compress(names, rest)), list(compress(pieces, rest))
        return one, (names, self._mergers.merge_all(pieces, thr, as_text=as_text) if pieces else [])

    def warm_up(self) -> None:
        """Build now the tables the first encode of a long text would build (the spans from ids,
        the batch merger, the splitter's), so that a window pays for them while idle."""
        self._span_table().warm_up()
        self._split.warm_up()
        self._mergers.warm_up()

    def prepare_for(self, text: str) -> None:
        """Load now what encoding `text` will need (the splitter's tables, and the compiled merge
        loop when `text` repays it), so that forked children encoding it inherit them."""
        self._split.warm_up()
        self._mergers.prepare(text)

    def _encode_text(self, text: str, offset: int, thr: int, out: Encoding, processes: int = 1) -> None:
        self._add_text(text, offset, self._text_ids(text, thr, processes=processes), thr, out)

    def _add_text(self, text: str, offset: int, ids: list[int], thr: int, out: Encoding) -> None:
        """Tokens and spans of `text`'s `ids` derived from them when the tokens cover the text
        (every known pattern does); chunk by chunk otherwise (a pattern that leaves text out)."""
        spans = self._span_table().spans(ids, offset, len(text))
        if spans is not None:
            out.ids.extend(ids)
            out.tokens.extend(map(self._vocab.__getitem__, ids))  # type: ignore[arg-type]
            out.spans.extend(spans)
            return
        self._encode_chunks(text, offset, thr, out)

    def _span_table(self) -> SpanTable:
        if self._spans is None:  # once (a worker thread may race here: both build the same table)
            self._spans = SpanTable(self._vocab)
        return self._spans

    def _encode_chunks(self, text: str, offset: int, thr: int, out: Encoding) -> None:
        cache = self._cache(thr)
        vocab = self._vocab
        chunk_spans = []
        for m in self._regex.finditer(text):
            a, b = m.span()
            if a == b:
                continue
            chunk_spans.append((a, b))
            chunk = m.group()
            t = cache.get(chunk)
            if t is None:
                t = self._chunk_ids(chunk, thr, cache)
            out.ids.extend(t)
            toks = [vocab[i] for i in t]
            out.tokens.extend(toks)
            out.spans.extend(byte_char_spans(chunk, map(len, toks), offset + a))
        out.dropped.extend((offset + x, offset + y) for x, y in uncovered(chunk_spans, len(text)))

    def encode(
        self,
        text: str,
        *,
        step: int | None = None,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = "all",
        share_cache: bool = True,
        processes: int = 1,
    ) -> Encoding:
        """Encode `text` (tiktoken's `encode` rules for special tokens) with ids, bytes, spans.
        The ids come from the ids path (`share_cache`, `processes`: as in `encode_ids`); bytes and
        spans are derived from them when first read."""
        thr = self._threshold(step)
        allowed = allowed_specials(text, self.special_tokens, allowed_special, disallowed_special)
        parts = split_specials(text, tuple(allowed))  # (start, end, is special)
        ids: list[int] = []
        ends: list[int] = []  # where each part's ids end
        for a, b, is_special in parts:
            if is_special:
                ids.append(self.special_tokens[text[a:b]])
            else:
                ids.extend(self._text_ids(text[a:b], thr, share_cache, processes))
            ends.append(len(ids))
        return LazyEncoding(ids, lambda: self._from_ids(text, ids, parts, ends, thr),
                            columns=lambda: self._columns(ids, parts, ends))

    def _columns(self, ids: list[int], parts: list[tuple[int, int, bool]], ends: list[int]):
        """`LazyEncoding`'s JSON columns of `ids` (see `_from_ids`), or None when tokens leave text out."""
        cols = self._span_table().parts_columns(ids, parts, ends)
        vocab = self._vocab
        return None if cols is None else (ids, ids, {i: vocab[i].hex() for i in set(ids)}, *cols)  # type: ignore[union-attr]

    def _from_ids(self, text: str, ids: list[int], parts: list[tuple[int, int, bool]], ends: list[int],
                  thr: int) -> Encoding:
        """The full `Encoding` of `ids`, the ids of `parts` of `text` (ending at `ends`)."""
        out = Encoding([], [], [], [], [], [])
        vocab = self._vocab
        k = 0
        for (a, b, is_special), e in zip(parts, ends):
            if is_special:
                out.special.append(len(out.ids))
                out.ids.append(ids[k])
                out.tokens.append(vocab[ids[k]])  # type: ignore[arg-type]
                out.spans.append((a, b))
            else:
                self._add_text(text[a:b], a, ids[k:e], thr, out)
            k = e
        return out

    def encode_ordinary(self, text: str, *, step: int | None = None, processes: int = 1) -> Encoding:
        """Encode `text` treating special-token strings as plain text (`processes`: as in `encode_ids`)."""
        out = Encoding([], [], [], [], [], [])
        self._encode_text(text, 0, self._threshold(step), out, processes)
        return out

    # -- decoding ---------------------------------------------------------------------------

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        check_ids(ids, self._vocab)
        vocab = self._vocab
        return [vocab[i] for i in ids]  # type: ignore[misc]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.decode_tokens_bytes(ids))

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        return offsets_of(self.decode_tokens_bytes(ids))
