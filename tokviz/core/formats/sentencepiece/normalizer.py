"""SentencePiece's normalizer (``normalizer.cc``), with each output character's source position.

At each position of the input: a user-defined symbol is copied as it is (the longest one that
starts there); else the longest key of the precompiled charsmap is replaced (`CharsMap.longest`);
else the character is copied. Around that, the spec's whitespace rules: with
``remove_extra_whitespaces`` leading spaces are dropped, a piece's leading spaces are dropped
when the output so far ends in a space (so runs collapse to one) and trailing spaces are removed;
``add_dummy_prefix`` puts one space in front (behind with ``treat_whitespace_as_suffix``);
``escape_whitespaces`` writes spaces as ``▁`` (U+2581).

`SpNormalizer.normalize` returns the text and, with ``aligned=True``, ``n2o``: for each output
character the input position of the piece it came from, plus one last entry, so output
characters ``[a, b)`` come from input characters ``[n2o[a], n2o[b])`` (sentencepiece's
``norm_to_orig``, counted in characters).

What this leaves out: the models (`tokviz.core.formats.sentencepiece.unigram`, ``.bpe``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import regex

from tokviz.core.formats.sentencepiece.charsmap import CharsMap
from tokviz.core.formats.sentencepiece.proto import NormalizerSpec

SPACE_SYMBOL = "\u2581"
_RUNS = re.compile("  +")  # runs of spaces; `re` and this spelling: twice as fast as `regex` and " {2,}"
_FEW = 8  # up to this many context-free characters are replaced one by one (each a C scan of the text)
LONG_TEXT = 1 << 16  # characters from which `SpNormalizer.present` reads code points in numpy
PRESENT_BLOCK = 1 << 20  # characters it reads at a time (their code points: 4 MB)


class SpNormalizer:
    """``SpNormalizer(spec, user_defined=..., whitespace_suffix=...)``; ``normalize(text)``."""

    def __init__(self, spec: NormalizerSpec, *, user_defined: Sequence[str] = (),
                 whitespace_suffix: bool = False) -> None:
        self.spec = spec
        self.charsmap = CharsMap(spec.precompiled_charsmap) if spec.precompiled_charsmap else None
        self.suffix = whitespace_suffix
        ud = sorted({s for s in user_defined if s}, key=len, reverse=True)
        self._ud = regex.compile("|".join(regex.escape(s) for s in ud)) if ud else None
        firsts = {s[0] for s in ud}
        hot = set(self.charsmap.single) | self.charsmap.continuing if self.charsmap else set()
        self._ud_first = firsts
        self._hot = frozenset(hot | firsts)
        self._continuing = self.charsmap.continuing if self.charsmap else set()
        # a key or symbol can only start at one of these: the rest of the characters a match can
        # take part in only continue one (most of those a multilingual text holds: vowel signs)
        self._can_start = frozenset(firsts | (set(self.charsmap.single) | self.charsmap.starters
                                              if self.charsmap else set()))
        self._hot_mask: np.ndarray | None = None  # `_hot` by code point, made for the first long text
        self._classes: dict[frozenset[str], re.Pattern] = {}
        # ASCII text without a character that can start or continue a match only meets the
        # whitespace rules: `_plain` (for the usual spec: extra spaces removed, spaces escaped)
        ascii_hot = sorted(c for c in self._hot if c.isascii())
        self._ascii_hot = re.compile("[" + "".join(re.escape(c) for c in ascii_hot) + "]") if ascii_hot else None
        self._fast = bool(spec.remove_extra_whitespaces and spec.escape_whitespaces)
        self._free = self._context_free(ud)
        self._free_keys = frozenset(self._free)
        self._free_classes: dict[frozenset[str], re.Pattern] = {}

    def _context_free(self, ud: Sequence[str]) -> dict[str, str]:
        """The one-character keys whose replacement depends on nothing around them: no longer key
        starts or continues with them, nor holds them, nor any user-defined symbol; and whose
        replacement can neither start nor continue a match, nor hold two spaces (its characters
        then meet the whitespace rules as the piece would). Replacing them all first, then
        normalizing, is normalizing. Deleted characters are left out: their neighbours would
        meet (``e``, a deleted control, a combining accent would compose), and a text of them
        alone still gets the dummy prefix when spaces are kept."""
        cm = self.charsmap
        if cm is None:
            return {}
        ud_chars = set("".join(ud))
        block = cm.continuing | cm.starters | ud_chars
        no_out = self._hot | cm.starters | ud_chars
        return {c: r for c, r in cm.single.items()
                if r and c not in block and "  " not in r and no_out.isdisjoint(r)}

    def _class(self, chars: frozenset[str], memo: dict) -> re.Pattern:
        """A character class of `chars` (a few: a class of every one of the charsmap's thousands
        of characters scans text far more slowly), memoized."""
        pattern = memo.get(chars)
        if pattern is None:
            if len(memo) >= 256:
                memo.clear()
            pattern = memo[chars] = re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]")
        return pattern

    def present(self, text: str, *, long: int = LONG_TEXT, block: int = PRESENT_BLOCK) -> frozenset[str]:
        """The characters of `text` that can start or continue a match: the set of its characters,
        or from `long` characters on, a mark by code point in numpy, `block` characters at a time
        (a megabyte in a third of the time)."""
        hot = self._hot
        if not hot or hot.isdisjoint(text):
            return frozenset()
        if len(text) < long:
            return frozenset(hot.intersection(set(text)))
        if self._hot_mask is None:
            mask = np.zeros(0x110000, dtype=bool)
            mask[[ord(c) for c in hot]] = True
            self._hot_mask = mask
        seen = np.zeros(0x110000, dtype=bool)
        for a in range(0, len(text), block):
            seen[np.frombuffer(text[a:a + block].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)] = True
        return frozenset(map(chr, np.flatnonzero(seen & self._hot_mask).tolist()))

    def _hot_class(self, text: str, present: frozenset[str] | None = None) -> re.Pattern | None:
        """A character class of the characters of `text` that can start or continue a match
        (`present`: those characters when known)."""
        if present is None:
            present = self.present(text)
        return self._class(present, self._classes) if present else None

    # -- the pieces: (text, input start, input end) -------------------------------------------------

    def _pieces(self, text: str, present: frozenset[str] | None = None) -> list[tuple[str, int, int, bool]]:
        """The normalized pieces of `text` in order: ``(piece, start, end, raw)``; a raw piece is
        an unmapped stretch of the input (each of its characters a piece of its own)."""
        out: list[tuple[str, int, int, bool]] = []
        hot = self._hot_class(text, present)
        if hot is None:
            return [(text, 0, len(text), True)] if text else []
        cm, ud, cont, can_start = self.charsmap, self._ud, self._continuing, self._can_start
        pos = 0
        for m in hot.finditer(text):
            q = m.start()
            starts = (q - 1, q) if text[q] in cont and q > 0 else (q,)
            for p in starts:
                if p < pos or text[p] not in can_start:
                    continue
                hit = None
                if ud is not None and text[p] in self._ud_first:
                    u = ud.match(text, p)
                    if u is not None:
                        hit = (u.group(), u.end() - p)
                if hit is None and cm is not None:
                    found = cm.longest(text, p)
                    if found is not None:
                        hit = (found[1], found[0])
                if hit is None:
                    continue
                if p > pos:
                    out.append((text[pos:p], pos, p, True))
                out.append((hit[0], p, p + hit[1], False))
                pos = p + hit[1]
        if pos < len(text):
            out.append((text[pos:], pos, len(text), True))
        return out

    # -- whitespace rules ---------------------------------------------------------------------------

    def normalize(self, text: str, *, aligned: bool = False) -> tuple[str, list[int] | None]:
        """The normalized text and (with `aligned`) the output-to-input map ``n2o``."""
        spec = self.spec
        present = None
        if not aligned:
            if self._fast and text.isascii() and not (self._ascii_hot and self._ascii_hot.search(text)):
                return self._plain(text), None
            # most lines of non-ASCII text hold no character a match takes part in (a curly quote is no key)
            present = self.present(text)
            free = present & self._free_keys
            if free:  # replaced first (`_context_free`): a few by `str.replace`, many in one pass
                table = self._free
                if len(free) <= _FEW:
                    for c in free:
                        text = text.replace(c, table[c])
                else:
                    text = self._class(free, self._free_classes).sub(lambda m: table[m.group()], text)
                present = present - free
            if not present:  # only the whitespace rules left
                if self._fast and SPACE_SYMBOL not in text:  # (a ▁ of the text would count as a space at its end)
                    return self._plain(text), None
                if not spec.remove_extra_whitespaces and text:
                    return self._as_is(text), None
        pieces = self._pieces(text, present)
        if not aligned and self._fast:
            out = self._joined(pieces)
            if out is not None:
                return out, None
        remove = spec.remove_extra_whitespaces
        k = consumed = 0
        if remove:  # "ignores heading space": pieces that are exactly one space
            while k < len(pieces):
                piece, a, b, raw = pieces[k]
                if raw:
                    s = piece.lstrip(" ")
                    if s:
                        pieces[k] = (s, b - len(s), b, True)
                        consumed = b - len(s)
                        break
                elif piece != " ":
                    break
                consumed = b
                k += 1
        if k == len(pieces):  # empty, or only spaces
            return "", ([len(text)] if aligned else None)
        parts: list[str] = []
        n2o: list[int] = []
        if spec.add_dummy_prefix and not self.suffix:
            parts.append(" ")
            n2o.append(consumed)
        prev_space = remove
        for piece, a, b, raw in pieces[k:]:
            s = piece
            if remove and prev_space:
                s = s.lstrip(" ")
                a = b - len(s) if raw else a
            if s:
                if raw and remove and "  " in s:
                    if aligned:
                        n2o.extend(a + i for i, c in enumerate(s) if c != " " or i == 0 or s[i - 1] != " ")
                    s = _RUNS.sub(" ", s)
                elif aligned:
                    n2o.extend(range(a, a + len(s)) if raw else [a] * len(s))
                parts.append(s)
                if remove:
                    prev_space = s.endswith(" ")
            consumed = b
        out = "".join(parts)
        space = " "
        if spec.escape_whitespaces:
            out = out.replace(" ", SPACE_SYMBOL)
            space = SPACE_SYMBOL
        if remove and out.endswith(space):
            n = len(out.rstrip(space))
            out = out[:n]
            if aligned:
                consumed = n2o[n]
                del n2o[n:]
        if spec.add_dummy_prefix and self.suffix:
            out += space
            if aligned:
                n2o.append(consumed)
        if aligned:
            n2o.append(consumed)
        return out, (n2o if aligned else None)

    def _joined(self, pieces: list[tuple[str, int, int, bool]]) -> str | None:
        """`normalize` of `pieces` for the usual spec (`_plain`'s), the whitespace rules applied to
        the joined text at once rather than piece by piece (a third of a megabyte's normalizing);
        None where the two can differ: a mapped piece holding two spaces (a piece's own spaces are
        kept), a ``▁`` (one at the end would count as a space), nothing but spaces."""
        if any("  " in piece for piece, _, _, raw in pieces if not raw):
            return None
        text = "".join([piece for piece, _, _, _ in pieces])
        if SPACE_SYMBOL in text or not text.strip(" "):
            return None
        return self._plain(text)

    def _as_is(self, text: str) -> str:
        """`normalize` of a text the charsmap leaves as it is (not empty), for a spec that keeps
        every space (Llama's and Mistral's): the spaces escaped, the dummy prefix (or suffix) added."""
        spec = self.spec
        space = SPACE_SYMBOL if spec.escape_whitespaces else " "
        out = text.replace(" ", SPACE_SYMBOL) if spec.escape_whitespaces else text
        if spec.add_dummy_prefix:
            return out + space if self.suffix else space + out
        return out

    def _plain(self, text: str) -> str:
        """`normalize` of text the charsmap leaves as it is, for a spec that removes extra spaces
        and escapes them: words joined by one ``▁``, the dummy prefix (or suffix) added."""
        text = text.strip(" ")
        if not text:
            return ""
        if "  " in text:
            text = _RUNS.sub(" ", text)
        out = text.replace(" ", SPACE_SYMBOL)  # 2.2x as fast as joining the words, lines or megabytes
        if self.spec.add_dummy_prefix:
            return out + SPACE_SYMBOL if self.suffix else SPACE_SYMBOL + out
        return out
