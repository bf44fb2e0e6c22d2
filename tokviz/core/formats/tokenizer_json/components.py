"""Building a tokenizer.json pipeline's parts from their JSON, every kind tokviz runs in one place.

`build_normalizer` and `build_pre_tokenizer` handle ``Sequence`` themselves (so nested parts of
any kind work), the SentencePiece-era kinds (``Precompiled``, ``Nmt``, ``UnicodeScripts``,
``FixedLength``) and the ``ByteLevel`` normalizer, and hand the others to `normalizers` and
`pretokenizers`. A kind tokviz does not run is an `UnsupportedComponent` error naming it and
listing the ones it runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.tokenizer_json import normalizers as base_norm
from tokviz.core.formats.tokenizer_json import pretokenizers as base_pre
from tokviz.core.formats.tokenizer_json.normalizers import Normalizer, SequenceNormalizer, UnsupportedComponent
from tokviz.core.formats.tokenizer_json.precompiled import build_precompiled
from tokviz.core.formats.tokenizer_json.pretokenizers import PreTokenizer, SequencePre
from tokviz.core.formats.tokenizer_json.unicode_scripts import FixedLengthPre, UnicodeScriptsPre

NORMALIZERS = ("BertNormalizer", "Lowercase", "Strip", "StripAccents", "NFD", "NFKD", "NFC", "NFKC", "Replace",
               "Prepend", "Precompiled", "Nmt", "ByteLevel", "Sequence")
PRE_TOKENIZERS = ("ByteLevel", "BertPreTokenizer", "Whitespace", "WhitespaceSplit", "Metaspace", "Split",
                  "Punctuation", "Digits", "CharDelimiterSplit", "UnicodeScripts", "FixedLength", "Sequence")


def _kind(d: object, what: str) -> str:
    if not isinstance(d, Mapping):
        raise ModelFormatError(f"a {what} must be a JSON object, got {type(d).__name__}")
    t = d.get("type")
    return t if isinstance(t, str) else repr(t)


def build_normalizer(d: Mapping | None) -> Normalizer | None:
    """The normalizer of a tokenizer.json ``normalizer`` entry (None for none)."""
    if d is None:
        return None
    t = _kind(d, "normalizer")
    if t == "Sequence":
        parts = d.get("normalizers", [])
        if not isinstance(parts, list):
            raise ModelFormatError("Sequence normalizer: 'normalizers' must be a list")
        return SequenceNormalizer([n for n in map(build_normalizer, parts) if n])
    if t in ("Precompiled", "Nmt"):
        return build_precompiled(d)
    if t == "ByteLevel":
        return base_pre.ByteLevelNormalizer()
    if t not in NORMALIZERS:
        raise UnsupportedComponent(f"unsupported normalizer {t!r}; tokviz runs {', '.join(NORMALIZERS)}")
    return base_norm.build_normalizer(d)


def build_pre_tokenizer(d: Mapping | None) -> PreTokenizer | None:
    """The pre-tokenizer of a tokenizer.json ``pre_tokenizer`` entry (None for none)."""
    if d is None:
        return None
    t = _kind(d, "pre-tokenizer")
    if t == "Sequence":
        parts = d.get("pretokenizers", [])
        if not isinstance(parts, list):
            raise ModelFormatError("Sequence pre-tokenizer: 'pretokenizers' must be a list")
        return SequencePre([p for p in map(build_pre_tokenizer, parts) if p])
    if t == "UnicodeScripts":
        return UnicodeScriptsPre()  # type: ignore[return-value]
    if t == "FixedLength":
        n = d.get("length", 5)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ModelFormatError("FixedLength pre-tokenizer: length must be a whole number >= 1")
        return FixedLengthPre(n)  # type: ignore[return-value]
    if t not in PRE_TOKENIZERS:
        raise UnsupportedComponent(f"unsupported pre-tokenizer {t!r}; tokviz runs {', '.join(PRE_TOKENIZERS)}")
    return base_pre.build_pre_tokenizer(d)


def contains(component, kinds: tuple[type, ...]) -> bool:
    """True when `component` or a part of it (a Sequence's, at any depth) is one of `kinds`."""
    if isinstance(component, kinds):
        return True
    parts = getattr(component, "parts", None)
    return bool(parts) and any(contains(p, kinds) for p in parts)
