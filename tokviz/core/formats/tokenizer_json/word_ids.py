"""The ids path of a tokenizer.json whose pre-tokenizer can cut plain strings (GPT-2's
ByteLevel, DeepSeek's Splits + ByteLevel, BERT's) or that has none but is cut at its ``▁``
markers (Mistral's): words as strings, never `NormStr` pieces, and each word's ids kept (by the
word before ByteLevel's mapping), so a word seen before costs one dict lookup.

What this leaves out: the normalizer and the added tokens' patterns (given by the caller) and
the model (`models`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain

from tokviz.core.formats.tokenizer_json.added import AddedMatcher, split_added
from tokviz.core.formats.tokenizer_json.pretokenizers import PreTokenizer

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
    def of(cls, pre_tokenizer: PreTokenizer | None, model_ids: Callable[[str, int], list[int]]) -> "WordIds | None":
        """The shortcut for this pre-tokenizer, or None when it has none."""
        if pre_tokenizer is None or pre_tokenizer.split_unmapped([]) is None:
            return None
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
                    hit = cache[word] = self._model_ids(word if self._map is None else self._map(word), limit)
                hits[k] = hit
        return list(chain.from_iterable(hits))
