"""The ids path of a tokenizer.json whose pre-tokenizer can cut plain strings (GPT-2's
ByteLevel, DeepSeek's Splits + ByteLevel, BERT's) or that has none but is cut at its ``▁``
markers (Mistral's): words as strings, never `NormStr` pieces, and each word's ids kept (by the
word before ByteLevel's mapping), so a word seen before costs one dict lookup.

A byte-level BPE model's new words are merged straight from their UTF-8 bytes (`byte_word_ids`).
ByteLevel turns each byte of a word into one character (`to_byte_chars`); the model would then
look up each character and rank each pair by its two-character string, one short string made and
hashed per byte and per pair. From the bytes, the id of each byte and the rank of each pair of
bytes come from tables of 256 and 256 x 256 entries (C-level indexing of small ints), and the
shared pair-rank loop merges from there: the same ids.

What this leaves out: the normalizer and the added tokens' patterns (given by the caller) and
the model (`models`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from operator import getitem

from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.formats.tokenizer_json.added import AddedMatcher, split_added
from tokviz.core.formats.tokenizer_json.models import HfBpeModel
from tokviz.core.formats.tokenizer_json.pretokenizers import BYTE_CHAR, PreTokenizer, to_byte_chars

_CACHE_SIZE = 200_000  # words per step limit before the cache starts over
_LIMITS = 6  # step limits that keep a cache


class WordIds:
    """``ids(text, limit)``: the model's ids of `text`'s words, cached per word and step limit."""

    def __init__(self, split_texts: Callable[[list[str]], list[str] | None],
                 model_ids: Callable[[str, int], list[int]], word_map: Callable[[str], str] | None = None) -> None:
        self._split = split_texts
        self._model_ids = model_ids
        self._map = word_map  # applied to a word before the model (the cache is keyed by the word)
        self._caches: dict[int, dict[str, list[int]]] = {}  # (lists the model made: never handed out)

    @classmethod
    def of(cls, pre_tokenizer: PreTokenizer | None, model_ids: Callable[[str, int], list[int]],
           unmapped_ids: Callable[[str, int], list[int]] | None = None) -> WordIds | None:
        """The shortcut for this pre-tokenizer, or None when it has none. `unmapped_ids`: the
        model's ids of a word before the pre-tokenizer's `word_map`, when it can take it so."""
        if pre_tokenizer is None or pre_tokenizer.split_unmapped([]) is None:
            return None
        if unmapped_ids is not None or pre_tokenizer.word_map is None:
            return cls(pre_tokenizer.split_unmapped, unmapped_ids or model_ids)
        return cls(pre_tokenizer.split_unmapped, model_ids, pre_tokenizer.word_map)

    def text_ids(self, text: str, limit: int, raw_added: AddedMatcher | None, norm_added: AddedMatcher | None,
                 normalize: Callable[[str], str]) -> list[int]:
        """The ids of `text`: its added tokens (`raw_added` matched in the text, `norm_added` in
        the normalized text between those) and the words of the rest."""
        out: list[int] = []
        for a, b, added in split_added(text, raw_added):
            if added is not None:
                out.append(added)
                continue
            norm = normalize(text[a:b])
            for x, y, n_added in split_added(norm, norm_added):
                if n_added is not None:
                    out.append(n_added)
                else:
                    out.extend(self.ids(norm[x:y], limit))
        return out

    def ids(self, text: str, limit: int) -> list[int]:
        """The ids of normalized `text` (no added token inside)."""
        cache = self._caches.get(limit)
        if cache is None:
            if len(self._caches) >= _LIMITS:
                del self._caches[next(iter(self._caches))]
            cache = self._caches[limit] = {}
        words = self._split([text])
        hits = list(map(cache.get, words))  # type: ignore[arg-type]
        if None in hits:  # words not seen before: the model's ids, kept
            for k in [k for k, hit in enumerate(hits) if hit is None]:
                word = words[k]  # type: ignore[index]
                hit = cache.get(word)  # (a word twice in the text)
                if hit is None:
                    if len(cache) >= _CACHE_SIZE:
                        cache.clear()
                    # a tuple, not the list: the cyclic collector stops tracking a tuple of ints, and
                    # its passes over a cache of lists took a tenth of line-by-line encoding
                    hit = cache[word] = tuple(self._model_ids(word if self._map is None else self._map(word), limit))
                hits[k] = hit
        return list(chain.from_iterable(hits))


def byte_word_ids(model, pre_tokenizer: PreTokenizer | None = None) -> Callable[[str, int], list[int]] | None:
    """``ids(word, limit)``: ``model.tokenize_ids(to_byte_chars(word), limit)`` made from the
    word's bytes, for a BPE `model` (and a `pre_tokenizer` whose words it sees as byte-level
    characters, when given); None otherwise, when a byte's character is not a token of its own,
    or when words take a prefix or suffix."""
    if pre_tokenizer is not None and pre_tokenizer.word_map is not to_byte_chars:
        return None
    if not isinstance(model, HfBpeModel) or model.prefix or model.suffix:
        return None
    vocab = model.vocab
    byte_ids = [vocab.get(BYTE_CHAR[b]) for b in range(256)]
    if None in byte_ids:
        return None
    ranks = model.pair_rank_rows([BYTE_CHAR[b] for b in range(256)])
    merge, row, byte_id = model.pair_merges.merge, ranks.__getitem__, byte_ids.__getitem__
    whole = model.ignore_merges

    def ids(word: str, limit: int = INF_RANK) -> list[int]:
        if whole and limit == INF_RANK:  # a word that is a token is that token, merges or not
            tid = vocab.get(to_byte_chars(word))
            if tid is not None:
                return [tid]
        data = word.encode()
        return merge(list(map(byte_id, data)), limit, ranks=list(map(getitem, map(row, data), data[1:])))

    return ids
