"""Hugging Face models: BPE (byte-level, or characters with byte fallback) and WordPiece
(Unigram and WordLevel: `tokviz.core.pretrained.hf.unigram`).

A model turns one pre-tokenized word into ``(id, start, end)`` tokens, `start`/`end` being
character positions in the word. BPE follows tokenizers' ``merge_word`` + ``merge_all``: start
from the word's characters (unknown ones become ``<0xNN>`` byte tokens with byte fallback, else
the unknown token, fused when ``fuse_unk``), then join the adjacent pair with the lowest merge
rank, leftmost first. Only merges with rank < `limit` are used (the merge timeline's step).
WordPiece is greedy longest-match-first with the ``##`` continuation prefix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate, repeat
from operator import add

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.checks import is_count
from tokviz.core.pretrained.common import INF_RANK

from .normalizers import UnsupportedComponent

_SHIFT = 32
_POS_BITS = 32  # a heap entry of the long-word loop: rank << _POS_BITS | position
_POS_MASK = (1 << _POS_BITS) - 1
_CACHE_SIZE = 200_000
Token = tuple[int, int, int]  # (id, start char, end char) in the word


class HfBpeModel:
    """BPE over a vocabulary and an ordered merge list (pair merges, not byte ranks)."""

    kind = "BPE"

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: Sequence[tuple[str, str]],
        *,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
    ) -> None:
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix or None
        self.suffix = end_of_word_suffix or None
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        self.merge_pairs: list[tuple[int, int]] = []  # rank -> (left, right)
        self.merge_ids: list[int] = []  # rank -> new id
        pair_rank: dict[int, int] = {}
        plen = len(self.prefix or "")
        for rank, (a, b) in enumerate(merges):
            try:
                ia, ib = self.vocab[a], self.vocab[b]
                new = self.vocab[a + b[plen:]]
            except KeyError as exc:
                raise ModelFormatError(f"merge {rank} ({a!r} {b!r}) uses a token not in the vocabulary: {exc}") from None
            pair_rank[(ia << _SHIFT) | ib] = rank  # a repeated pair keeps its last rank (as HF)
            self.merge_pairs.append((ia, ib))
            self.merge_ids.append(new)
        self._rank = pair_rank
        # the ranks of pairs of one-character tokens by their two characters, so a word's first
        # pairs are ranked in one C-level pass (not with a prefix, or when two one-character
        # strings share an id)
        singles = [i for t, i in self.vocab.items() if len(t) == 1]
        self._char_pairs: dict[str, int] | None = None
        if plen == 0 and not self.suffix and len(set(singles)) == len(singles):
            self._char_pairs = {a + b: pair_rank[(self.vocab[a] << _SHIFT) | self.vocab[b]]
                                for a, b in merges if len(a) == 1 and len(b) == 1}
        self._bytes_ids: list[int] | None = None
        if byte_fallback:
            ids = [self.vocab.get(f"<0x{b:02X}>") for b in range(256)]
            self._bytes_ids = ids if None not in ids else None
        self._caches: dict[int, dict[str, tuple[Token, ...]]] = {}
        self._n_chars: list[int] | None = None  # id -> length of its string (made on first use)

    @property
    def n_merges(self) -> int:
        return len(self.merge_pairs)

    def _symbols(self, word: str) -> list[Token]:
        """tokenizers' ``merge_word`` before merging: one symbol per character."""
        vocab = self.vocab
        out: list[Token] = []
        unk: Token | None = None
        last = len(word) - 1
        for i, c in enumerate(word):
            s = c
            if i and self.prefix:
                s = self.prefix + s
            if i == last and self.suffix:
                s = s + self.suffix
            tid = vocab.get(s)
            if tid is not None:
                if unk is not None:
                    out.append(unk)
                    unk = None
                out.append((tid, i, i + 1))
                continue
            if self.byte_fallback:
                codes = [vocab.get(f"<0x{b:02X}>") for b in s.encode("utf-8")]
                if None not in codes:
                    out.extend((t, i, i + 1) for t in codes)  # type: ignore[misc]
                    continue
            if self.unk_token is not None:
                unk_id = vocab.get(self.unk_token)
                if unk_id is None:
                    raise ModelFormatError(f"the unknown token {self.unk_token!r} is not in the vocabulary")
                if unk is not None and self.fuse_unk:
                    unk = (unk[0], unk[1], i + 1)
                else:
                    if unk is not None:
                        out.append(unk)
                    unk = (unk_id, i, i + 1)
        if unk is not None:
            out.append(unk)
        return out

    def _start(self, word: str) -> tuple[list[int], list[int], list[int]]:
        """`_symbols` as (ids, starts, ends)."""
        syms = self._symbols(word)
        return [t[0] for t in syms], [t[1] for t in syms], [t[2] for t in syms]

    def _merge(self, ids: list[int], starts: list[int], ends: list[int], limit: int) -> list[Token]:
        """Join the lowest-ranked adjacent pair, leftmost first, while its rank < `limit`."""
        if len(ids) > 64:
            return self._merge_heap(ids, starts, ends, limit)
        firsts = list(range(len(ids)))  # the first symbol of each part
        ids = self._merge_ids(ids, limit, firsts)
        lasts = [k - 1 for k in firsts[1:]] + [len(starts) - 1]
        return list(zip(ids, map(starts.__getitem__, firsts), map(ends.__getitem__, lasts)))

    def _merge_ids(self, ids: list[int], limit: int, firsts: list[int] | None = None) -> list[int]:
        """`_merge` on ids alone (`ids` is changed), keeping `firsts` (the position of each part's
        first symbol) in step when given. A pair ranked `limit` or more stops the loop when it
        is the lowest, so ranks need no masking."""
        if len(ids) < 2:
            return ids
        rank_get = self._rank.get
        return self._merge_ranked(ids, [rank_get((a << _SHIFT) | b, INF_RANK) for a, b in zip(ids, ids[1:])],
                                  limit, firsts)

    def _merge_ranked(self, ids: list[int], ranks: list[int], limit: int, firsts: list[int] | None = None) -> list[int]:
        """`_merge_ids` given the ranks of the adjacent pairs (`INF_RANK` for none)."""
        rank_get, new_of, big = self._rank.get, self.merge_ids, INF_RANK
        while ranks:
            m = min(ranks)
            if m >= limit:
                break
            i = ranks.index(m)
            ids[i] = new_of[m]
            del ids[i + 1], ranks[i]
            if firsts is not None:
                del firsts[i + 1]
            if i < len(ranks):
                ranks[i] = rank_get((ids[i] << _SHIFT) | ids[i + 1], big)
            if i:
                ranks[i - 1] = rank_get((ids[i - 1] << _SHIFT) | ids[i], big)
        return ids

    def _simple_tokens(self, word: str, limit: int) -> list[Token] | None:
        """The tokens of a word whose every character is a token, with no prefix or suffix (most
        words): merged on ids alone, each token's span from its string's length. None otherwise."""
        if self.prefix or self.suffix:
            return None
        ids = list(map(self.vocab.get, word))
        if None in ids:
            return None
        if len(ids) > 64:
            return self._merge_heap(ids, list(range(len(ids))), list(range(1, len(ids) + 1)), limit)  # type: ignore[arg-type]
        ids = self._merge_ids(ids, limit)  # type: ignore[arg-type]
        if self._n_chars is None:
            n_chars = [0] * (max(self.vocab.values(), default=-1) + 1)
            for s, i in self.vocab.items():
                n_chars[i] = len(s)
            self._n_chars = n_chars
        ends = list(accumulate(map(self._n_chars.__getitem__, ids)))
        return list(zip(ids, [0, *ends[:-1]], ends))

    def _merge_heap(self, ids: list[int], starts: list[int], ends: list[int], limit: int) -> list[Token]:
        import heapq

        rank_of, new_of = self._rank, self.merge_ids
        n = len(ids)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        heap = []
        for i in range(n - 1):
            r = rank_of.get((ids[i] << _SHIFT) | ids[i + 1])
            if r is not None and r < limit:
                heap.append(r << _POS_BITS | i)  # one int orders as (rank, position) and compares faster
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            e = pop(heap)
            r, p = e >> _POS_BITS, e & _POS_MASK
            q = nxt[p]
            if not alive[p] or q >= n or rank_of.get((ids[p] << _SHIFT) | ids[q]) != r:
                continue
            ids[p] = new_of[r]
            ends[p] = ends[q]
            alive[q] = False
            after = nxt[q]
            nxt[p] = after
            if after < n:
                prv[after] = p
                k = rank_of.get((ids[p] << _SHIFT) | ids[after])
                if k is not None and k < limit:
                    push(heap, k << _POS_BITS | p)
            o = prv[p]
            if o >= 0:
                k = rank_of.get((ids[o] << _SHIFT) | ids[p])
                if k is not None and k < limit:
                    push(heap, k << _POS_BITS | o)
        return [(ids[i], starts[i], ends[i]) for i in range(n) if alive[i]]

    def tokenize(self, word: str, limit: int = INF_RANK) -> tuple[Token, ...]:
        """Tokens of one word using merges with rank < `limit` (cached per word and limit)."""
        cache = self._caches.get(limit)
        if cache is None:
            if len(self._caches) >= 6:
                del self._caches[next(iter(self._caches))]
            cache = self._caches[limit] = {}
        hit = cache.get(word)
        if hit is not None:
            return hit
        if not word:
            return ()
        if self.ignore_merges and limit == INF_RANK and word in self.vocab:
            out: tuple[Token, ...] = ((self.vocab[word], 0, len(word)),)
        else:
            simple = self._simple_tokens(word, limit)
            out = tuple(simple if simple is not None else self._merge(*self._start(word), limit))
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        cache[word] = out
        return out

    def tokenize_ids(self, word: str, limit: int = INF_RANK) -> list[int]:
        """The ids of ``tokenize(word, limit)``, made without spans and not cached (the ids path
        keeps them itself)."""
        vocab = self.vocab
        if self.ignore_merges and limit == INF_RANK and word in vocab:
            return [vocab[word]]
        pairs = self._char_pairs
        if pairs is not None:
            ids = list(map(vocab.get, word))
            if None not in ids and len(ids) <= 64:
                return self._merge_ranked(ids, list(map(pairs.get, map(add, word, word[1:]), repeat(INF_RANK))), limit)  # type: ignore[arg-type]
        plain = not self.prefix and not self.suffix
        ids = list(map(vocab.get, word)) if plain else [None]
        if None in ids and plain and self._bytes_ids is not None:  # every byte has its token
            byte_ids = self._bytes_ids
            ids = [i for c, t in zip(word, ids) for i in ((t,) if t is not None else map(byte_ids.__getitem__, c.encode()))]
        if None in ids:  # unknown characters, a prefix or suffix
            ids = [t[0] for t in self._symbols(word)]
        if len(ids) <= 64:
            return self._merge_ids(ids, limit)  # type: ignore[arg-type]
        return [t[0] for t in self.tokenize(word, limit)]

    def trace(self, word: str, limit: int = INF_RANK) -> list[tuple[int, tuple[int, int], int, tuple[int, ...]]]:
        """``(rank, pair, new id, ids after)`` for each merge that fires on `word`, in order."""
        ids = [t[0] for t in self._symbols(word)]
        out = []
        while len(ids) > 1:
            best, at = limit, -1
            for i in range(len(ids) - 1):
                r = self._rank.get((ids[i] << _SHIFT) | ids[i + 1])
                if r is not None and r < best:
                    best, at = r, i
            if at < 0:
                break
            pair = (ids[at], ids[at + 1])
            ids[at : at + 2] = [self.merge_ids[best]]
            out.append((best, pair, self.merge_ids[best], tuple(ids)))
        return out

    def start_ids(self, word: str) -> tuple[int, ...]:
        return tuple(t[0] for t in self._symbols(word))


class WordPieceModel:
    """Greedy longest-match-first WordPiece (BERT)."""

    kind = "WordPiece"
    n_merges = 0

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.max_chars = max_input_chars_per_word
        if unk_token not in self.vocab:
            raise ModelFormatError(f"WordPiece: the unknown token {unk_token!r} is not in the vocabulary")
        self.unk_id = self.vocab[unk_token]
        self._cache: dict[str, tuple[Token, ...]] = {}
        self._longest = max(map(len, self.vocab), default=0)  # no longer piece can be a token
        # the longest piece a token can be from its first character: at a word's start, after it
        self._reach: tuple[dict[str, int], dict[str, int]] = ({}, {})
        plen = len(self.prefix)
        for t in self.vocab:
            for reach, piece in ((self._reach[0], t), (self._reach[1], t[plen:] if t.startswith(self.prefix) else "")):
                if piece and len(piece) > reach.get(piece[0], 0):
                    reach[piece[0]] = len(piece)

    def tokenize_ids(self, word: str, limit: int = INF_RANK) -> list[int]:
        """The ids of `tokenize` made without spans and not cached (the ids path keeps them):
        each piece looked up from the longest a token beginning with its character can be."""
        n = len(word)
        if n > self.max_chars:
            return [self.unk_id]
        get = self.vocab.get
        whole = get(word) if word else None
        if whole is not None:
            return [whole]
        out: list[int] = []
        start, head, prefix = 0, self._reach[0], ""
        while start < n:
            end = min(n, start + head.get(word[start], 0))
            while end > start:
                tid = get(prefix + word[start:end])
                if tid is not None:
                    break
                end -= 1
            else:
                return [self.unk_id]
            out.append(tid)
            start, head, prefix = end, self._reach[1], self.prefix
        return out

    def tokenize(self, word: str, limit: int = INF_RANK) -> tuple[Token, ...]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        n = len(word)
        out: list[Token] = []
        if n > self.max_chars:
            out = [(self.unk_id, 0, n)]
        else:
            vocab, prefix = self.vocab, self.prefix
            start = 0
            longest = self._longest
            while start < n:
                end = min(n, start + longest)
                found = None
                while start < end:
                    sub = word[start:end] if start == 0 else prefix + word[start:end]
                    tid = vocab.get(sub)
                    if tid is not None:
                        found = (tid, start, end)
                        break
                    end -= 1
                if found is None:
                    out = [(self.unk_id, 0, n)]
                    break
                out.append(found)
                start = end
        result = tuple(out)
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[word] = result
        return result


def build_model(d: Mapping) -> HfBpeModel | WordPieceModel:
    """The model of a ``tokenizer.json`` (its ``"model"`` object); unknown kinds are a clear error."""
    t = d.get("type")
    if t in ("Unigram", "WordLevel") or (t is None and isinstance(d.get("vocab"), list)):
        from .unigram import build_unigram, build_word_level

        return build_word_level(d) if t == "WordLevel" else build_unigram(d)
    for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
        if d.get(key) is not None and not isinstance(d.get(key), str):
            raise ModelFormatError(f"model.{key} must be text or null")
    if t in ("BPE", "WordPiece", None) and (
            not isinstance(d.get("vocab"), Mapping) or not all(isinstance(k, str) for k in d["vocab"])):
        raise ModelFormatError("model.vocab must map token strings to ids")
    if t == "BPE" or (t is None and "merges" in d):
        if d.get("dropout") not in (None, 0, 0.0):
            raise UnsupportedComponent("BPE with dropout (random segmentation) cannot give stable ids")
        merges = []
        for i, m in enumerate(d.get("merges", [])):
            if isinstance(m, str):
                parts = m.split(" ")
                if len(parts) != 2:
                    raise ModelFormatError(f"merge {i} {m!r} is not 'left right'")
                merges.append((parts[0], parts[1]))
            elif isinstance(m, list) and len(m) == 2:
                merges.append((str(m[0]), str(m[1])))
            else:
                raise ModelFormatError(f"merge {i} {m!r} is not 'left right' or [left, right]")
        return HfBpeModel(
            d["vocab"], merges,
            unk_token=d.get("unk_token"),
            continuing_subword_prefix=d.get("continuing_subword_prefix"),
            end_of_word_suffix=d.get("end_of_word_suffix"),
            fuse_unk=bool(d.get("fuse_unk", False)),
            byte_fallback=bool(d.get("byte_fallback", False)),
            ignore_merges=bool(d.get("ignore_merges", False)),
        )
    if t == "WordPiece" or (t is None and "max_input_chars_per_word" in d):
        limit = d.get("max_input_chars_per_word", 100)
        if not is_count(limit):
            raise ModelFormatError("model.max_input_chars_per_word must be a whole number >= 0")
        return WordPieceModel(
            d["vocab"],
            unk_token=d.get("unk_token") if d.get("unk_token") is not None else "[UNK]",
            continuing_subword_prefix=d.get("continuing_subword_prefix") if d.get("continuing_subword_prefix") is not None else "##",
            max_input_chars_per_word=limit,
        )
    raise UnsupportedComponent(f"unsupported model {t!r}; tokviz runs BPE, WordPiece, Unigram and WordLevel models")
