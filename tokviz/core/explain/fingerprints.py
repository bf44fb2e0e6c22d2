"""A tokenizer's pre-tokenizer fingerprint: which family its split and normalizer belong to, and
warnings for the known-bad ones.

As llama.cpp's converter does (``chkhsh``: a fixed check text, a hash of what comes out), the
tokenizer cuts `CHECK_TEXT` and the chunks are hashed; the family is the one whose own regexes
cut the text the same way (`split_families`), so the answer comes from behaviour, and also from
the regex text when the tokenizer shows it. Splits that are no regex are named by their marks:
SentencePiece's ``▁`` words, BERT's words and punctuation. For a byte-level BPE vocabulary the
split it was made with is read from its tokens (`vocab_origin`) and held against the
tokenizer's own split (a GGUF file's declared ``tokenizer.ggml.pre`` included).

Known-bad: Mistral tokenizer.json files converted with Llama 3's regex (the one transformers
replaces with ``fix_mistral_regex=True``): the warning says what the wrong regex changes,
worked out by cutting the check text with both.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .split_families import CHECK_TEXT, behaviour_name, family_named, family_of_pre_type, split_families
from .vocab_origin import VocabOrigin, vocab_origin

MARK = "\u2581"  # SentencePiece's word mark
MISTRAL_CONTROL = ("[INST]", "[/INST]")  # control tokens only Mistral vocabularies hold


@dataclass(frozen=True)
class Fingerprint:
    """What `fingerprint` found: `check_hash` (16 hex digits of the sha256 of the chunks of
    `CHECK_TEXT`), the `family` by behaviour, the family whose regexes the tokenizer shows
    (`by_pattern`), the declared llama.cpp pre-tokenizer, the vocabulary's origin, warnings."""

    check_hash: str
    family: str | None
    by_pattern: str | None = None
    declared_pre: str | None = None
    origin: VocabOrigin | None = None
    warnings: tuple[str, ...] = ()

    def describe(self) -> list[str]:
        """Lines for a summary: the family and hash, the vocabulary's origin, each warning."""
        family = self.family or "no known family"
        lines = [f"Pre-tokenizer: {family} (check hash {self.check_hash})"]
        if self.by_pattern is not None and self.by_pattern not in family:
            lines.append(f"Its regex is {self.by_pattern}'s")
        if self.origin is not None:
            lines.append(self.origin.describe()[0].upper() + self.origin.describe()[1:])
        lines += [f"Warning: {w}" for w in self.warnings]
        return lines


def observed_chunks(tok, text: str) -> list[str]:
    """The chunks `tok`'s normalizer and pre-tokenizer make of `text`, as text (a tokenizer.json's
    before ByteLevel's byte characters)."""
    return list(tok.text_chunks(text))


def check_hash(chunks: list[str]) -> str:
    """16 hex digits of the sha256 of `chunks` (each chunk's UTF-8, ended by a NUL)."""
    return hashlib.sha256("".join(c + "\0" for c in chunks).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _split_regexes(tok) -> tuple[str, ...] | None:
    regexes = tok.split_regexes  # a tokenizer.json's pre-tokenizer
    if regexes is None and tok.pattern:  # tiktoken-style: one pattern
        regexes = (tok.pattern,)
    return regexes


def _named_split(chunks: list[str], tok) -> str | None:
    """A family for splits that are no regex: SentencePiece words, BERT's."""
    if any(MARK in c for c in chunks):
        prefix = chunks[0].startswith(MARK)
        return "SentencePiece words (" + ("▁ prefix: Llama 2, Mistral v0.1" if prefix else "no ▁ prefix: Gemma") + ")"
    if chunks and not any(c.isspace() or " " in c for c in chunks) and all(len(c) == 1 for c in chunks if
                                                                            not c.isalnum() and c.isascii()):
        lowered = "".join(chunks) == "".join(chunks).lower() and CHECK_TEXT != CHECK_TEXT.lower()
        return "BERT words and punctuation" + (" (lowercased)" if lowered else "")
    return None


def _changes(wrong: str, right: str, n: int = 3) -> list[str]:
    """How family `wrong` cuts words of the check text that family `right` cuts otherwise, one
    example of each kind (digits, letters, other): ``"'2024' -> 202|4 (Mistral Tekken: 2|0|2|4)"``."""
    a, b = family_named(wrong), family_named(right)
    seen: dict[str, str] = {}
    for word in CHECK_TEXT.split():
        cut_a, cut_b = a.chunks(word), b.chunks(word)
        if cut_a != cut_b:
            kind = "digits" if any(c.isdigit() for c in word) else "letters" if word.isalpha() else "other"
            seen.setdefault(kind, f"{word!r} -> {'|'.join(cut_a)} ({right}: {'|'.join(cut_b)})")
    return list(seen.values())[:n]


def _holds(tok, tokens: tuple[str, ...]) -> bool:
    specials = tok.special_tokens or {}
    return all(t in specials for t in tokens)


def fingerprint(tok, *, vocabulary: bool = True) -> Fingerprint:
    """The fingerprint of any loaded tokenizer (anything with ``chunks``); `vocabulary`: also
    read the vocabulary's origin (a tenth of a second for a byte-level BPE vocabulary)."""
    chunks = observed_chunks(tok, CHECK_TEXT)
    family = behaviour_name(chunks) or _named_split(chunks, tok)
    regexes = _split_regexes(tok)
    by_pattern = None
    if regexes:
        by_pattern = next((f.name for f in split_families() if f.matches(tuple(regexes))), None)
    pre = tok.declared_pre
    warnings = []
    if pre is not None:
        declared = family_of_pre_type(pre)
        if declared is not None and family is not None and declared.name not in family:
            warnings.append(f"the file declares the pre-tokenizer {pre!r} ({declared.name}) but splits as {family}")
    origin = None
    if vocabulary and behaviour_name(chunks) is not None or vocabulary and pre is not None:
        origin = vocab_origin(tok, lambda t: observed_chunks(tok, t))
        if origin is not None and origin.mismatch:
            what = f"the declared pre-tokenizer {pre!r}" if pre is not None else "its split"
            warnings.append(f"{what} does not fit the vocabulary: {1 - origin.own_share:.1%} of its tokens cannot "
                            f"be formed (the vocabulary was made with a {' / '.join(origin.origin)} split)")
    if family is not None and family.startswith("Llama 3") and _holds(tok, MISTRAL_CONTROL):
        changes = "; ".join(_changes("Llama 3", "Mistral Tekken"))
        warnings.append("Mistral vocabulary with Llama 3's split regex, the broken one transformers replaces "
                        f"with Mistral Tekken's (fix_mistral_regex=True): ids differ from Mistral's, e.g. {changes}")
    return Fingerprint(check_hash(chunks), family, by_pattern, pre, origin, tuple(warnings))
