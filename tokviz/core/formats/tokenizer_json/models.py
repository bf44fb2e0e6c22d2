"""Hugging Face models: BPE (byte-level, or characters with byte fallback), and `build_model`
(WordPiece: `tokviz.core.formats.tokenizer_json.wordpiece`; Unigram and WordLevel: `tokviz.core.formats.tokenizer_json.unigram`).

A model turns one pre-tokenized word into ``(id, start, end)`` tokens, `start`/`end` being
character positions in the word. BPE follows tokenizers' ``merge_word`` + ``merge_all``: start
from the word's characters (unknown ones become ``<0xNN>`` byte tokens with byte fallback, else
the unknown token, fused when ``fuse_unk``), then join the adjacent pair with the lowest merge
rank, leftmost first: the shared pair-rank loop (`tokviz.core.bpe.pair_merge`). Only merges with
rank < `limit` are used (the merge timeline's step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import add

from tokviz.core.algorithm.reach import Reason
from tokviz.core.bpe.pair_merge import INF_RANK, PairMerges, TraceStep, pair_key
from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.tokenizer_json.normalizers import UnsupportedComponent
from tokviz.core.formats.tokenizer_json.wordpiece import CACHE_SIZE, Token, WordPieceModel
from tokviz.core.io.checks import is_count


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
        dropout: float | None = None,
    ) -> None:
        self.vocab = dict(vocab)
        # the file's BPE-dropout rate: encoding stays deterministic (the model's own merges);
        # `encode_dropout` samples on request
        self.dropout = dropout
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
            pair_rank[pair_key(ia, ib)] = rank  # a repeated pair keeps its last rank (as HF)
            self.merge_pairs.append((ia, ib))
            self.merge_ids.append(new)
        self._pairs = PairMerges(pair_rank, self.merge_ids)
        # the ranks of pairs of one-character tokens by their two characters, so a word's first
        # pairs are ranked in one C-level pass (not with a prefix, or when two one-character
        # strings share an id)
        singles = [i for t, i in self.vocab.items() if len(t) == 1]
        self._char_pairs: dict[str, int] | None = None
        if plen == 0 and not self.suffix and len(set(singles)) == len(singles):
            self._char_pairs = {a + b: pair_rank[pair_key(self.vocab[a], self.vocab[b])]
                                for a, b in merges if len(a) == 1 and len(b) == 1}
        self._bytes_ids: list[int] | None = None
        if byte_fallback:
            ids = [self.vocab.get(f"<0x{b:02X}>") for b in range(256)]
            self._bytes_ids = ids if None not in ids else None
        self._caches: dict[int, dict[str, tuple[Token, ...]]] = {}

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
        """Join the lowest-ranked adjacent pair, leftmost first, while its rank < `limit`; each
        token spans from its first symbol's start to its last symbol's end."""
        firsts = list(range(len(ids)))  # the first symbol of each part
        ids = self._pairs.merge(ids, limit, firsts=firsts)
        lasts = [k - 1 for k in firsts[1:]] + [len(starts) - 1]
        return list(zip(ids, map(starts.__getitem__, firsts), map(ends.__getitem__, lasts)))

    def _simple_tokens(self, word: str, limit: int) -> list[Token] | None:
        """The tokens of a word whose every character is a token, with no prefix or suffix (most
        words): merged on ids alone, one symbol per character. None otherwise."""
        if self.prefix or self.suffix:
            return None
        ids = list(map(self.vocab.get, word))
        if None in ids:
            return None
        firsts = list(range(len(ids)))  # one symbol per character: a part's first symbol is its start
        ids = self._pairs.merge(ids, limit, firsts=firsts)  # type: ignore[arg-type]
        return list(zip(ids, firsts, [*firsts[1:], len(word)]))

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
        if len(cache) >= CACHE_SIZE:
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
            if None not in ids:
                return self._pairs.merge(ids, limit, ranks=list(map(pairs.get, map(add, word, word[1:]), repeat(INF_RANK))))  # type: ignore[arg-type]
        plain = not self.prefix and not self.suffix
        ids = list(map(vocab.get, word)) if plain else [None]
        if None in ids and plain and self._bytes_ids is not None:  # every byte has its token
            byte_ids = self._bytes_ids
            ids = [i for c, t in zip(word, ids) for i in ((t,) if t is not None else map(byte_ids.__getitem__, c.encode()))]
        if None in ids:  # unknown characters, a prefix or suffix
            ids = [t[0] for t in self._symbols(word)]
        return self._pairs.merge(ids, limit)  # type: ignore[arg-type]

    def trace(self, word: str, limit: int = INF_RANK) -> list[TraceStep]:
        """``(rank, pair, new id, ids after)`` for each merge that fires on `word`, in order."""
        return self._pairs.steps([t[0] for t in self._symbols(word)], limit)

    def start_ids(self, word: str) -> tuple[int, ...]:
        return tuple(t[0] for t in self._symbols(word))

    def start_tokens(self, word: str) -> list[Token]:
        """The ``(id, start, end)`` symbols `word` starts as, before any merge."""
        return self._symbols(word)

    def pair_rank_rows(self, chars: Sequence[str]) -> list[list[int]]:
        """``rows[a][b]``: the rank of the pair of one-character tokens ``chars[a]``, ``chars[b]``
        (`INF_RANK` where no merge joins them; every character a token). Read from the ranks by
        two characters when the model keeps them (a few thousand entries), else pair by pair."""
        index = {c: k for k, c in enumerate(chars)}
        if self._char_pairs is None:
            ids, get = [self.vocab[c] for c in chars], self._pairs.rank_of.get
            return [list(map(get, [pair_key(x, y) for y in ids], repeat(INF_RANK))) for x in ids]
        rows = [[INF_RANK] * len(chars) for _ in chars]
        for pair, rank in self._char_pairs.items():
            a, b = index.get(pair[0]), index.get(pair[1])
            if a is not None and b is not None:
                rows[a][b] = rank
        return rows

    @property
    def pair_merges(self) -> PairMerges:
        """The merge list as the pair-rank loops read it."""
        return self._pairs

    # -- what the pipeline asks of any model (`HfTokenizer`, `tokviz.core.explain.tokens`) --

    lists_merges = True  # joins pairs by merge rank: a merge list, a timeline of steps, traces
    continuation_mark = None  # its continuing-subword prefix stays part of a token's text
    whole_words = False
    lattice = None  # no piece lattice (a Unigram model's)

    def unreachable(self, tok, token_id: int) -> Reason | None:
        """Why token `token_id` is not what its own symbols merge into (``"merge"``), or (in the
        byte-level pipeline `tok`) what its text is cut into (``"split"``, ``"partial_utf8"``);
        None when it is reachable. Byte-fallback tokens are base symbols: reachable."""
        s = tok.token_text(token_id)
        if self.byte_fallback and len(s) == 6 and s.startswith("<0x"):
            return None
        got = [t[0] for t in self.tokenize(s)]
        if got != [token_id]:
            return "merge", tuple(got)
        if tok.byte_level:
            try:
                text = tok.token_bytes(token_id).decode("utf-8")
            except UnicodeDecodeError:
                return "partial_utf8", ()
            if len(tok.chunks(text)) > 1:
                return "split", tuple(tok.encode_ids(text))
        return None


def build_model(d: Mapping) -> HfBpeModel | WordPieceModel:
    """The model of a ``tokenizer.json`` (its ``"model"`` object); unknown kinds are a clear error."""
    t = d.get("type")
    if t in ("Unigram", "WordLevel") or (t is None and isinstance(d.get("vocab"), list)):
        from tokviz.core.formats.tokenizer_json.unigram import build_unigram, build_word_level

        return build_word_level(d) if t == "WordLevel" else build_unigram(d)
    for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
        if d.get(key) is not None and not isinstance(d.get(key), str):
            raise ModelFormatError(f"model.{key} must be text or null")
    if t in ("BPE", "WordPiece", None) and (
            not isinstance(d.get("vocab"), Mapping) or not all(isinstance(k, str) for k in d["vocab"])):
        raise ModelFormatError("model.vocab must map token strings to ids")
    if t == "BPE" or (t is None and "merges" in d):
        dropout = d.get("dropout")
        if dropout is not None and (isinstance(dropout, bool) or not isinstance(dropout, (int, float))
                                    or not 0.0 <= dropout <= 1.0):
            raise ModelFormatError(f"model.dropout must be a number from 0 to 1 or null, not {dropout!r}")
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
            dropout=None if dropout is None else float(dropout),
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
