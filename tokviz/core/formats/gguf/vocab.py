"""The tokenizer a GGUF file's metadata describes, as the description tokviz already encodes.

``tokenizer.ggml.model`` names llama.cpp's tokenizer kind:

- ``llama`` (SentencePiece-style BPE by piece score) and ``t5`` (Unigram) become a
  `SentencePieceModel` whose ``ModelProto`` is made from the tokens, scores and token types (the
  types are SentencePiece's: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte),
  with llama.cpp's defaults for what a ``.model`` file would hold: a space prefix
  (``tokenizer.ggml.add_space_prefix``), whitespace kept as is
  (``tokenizer.ggml.remove_extra_whitespaces``), byte fallback when there are byte tokens, and
  for ``t5`` the ``tokenizer.ggml.precompiled_charsmap``;
- ``gpt2`` (byte-level BPE: tokens and ``"a b"`` merges) becomes a `PipelineJson` equal to the
  ``tokenizer.json`` it came from: the split regexes of the declared pre-tokenizer type
  (`pre_types`) then ByteLevel, control and user-defined tokens as added tokens;
- ``bert`` (WordPiece) becomes a WordPiece `PipelineJson`: llama.cpp's converter writes word
  starts as ``▁word`` and continuations bare, undone here into BERT's ``word`` and ``##piece``.

Each carries a `Declared`: the pre-tokenizer name, the special ids and whether BOS/EOS/SEP are
added (llama.cpp's defaults per kind unless the file says). What this leaves out: parsing the
file (`metadata`), the other kinds llama.cpp knows (rwkv, plamo2, gemma4, ...): refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tokviz.core.errors import ModelFormatError
from tokviz.core.unigram.encoder.piece_table import PieceTable

from ..descriptions import Declared, PipelineJson, SentencePieceModel
from ..sentencepiece.proto import (
    BPE_MODEL,
    BYTE,
    CONTROL,
    NORMAL,
    UNIGRAM_MODEL,
    USER_DEFINED,
    ModelProto,
    NormalizerSpec,
    TrainerSpec,
)
from .metadata import ARRAY, STRING, TYPE_NAMES
from .pre_types import pre_type

KEY = "tokenizer.ggml."
MARK = "\u2581"  # SentencePiece's word mark
# llama.cpp's defaults per kind: special ids (None: none) and what is added to an encoded text
_DEFAULT_IDS = {"llama": {"bos": 1, "eos": 2, "unk": 0}, "bert": {"bos": 101, "unk": 100, "sep": 102, "pad": 0},
                "gpt2": {"bos": 11, "eos": 11}, "t5": {"eos": 1, "unk": 2, "pad": 0}}
_DEFAULT_ADDS = {"llama": (True, False, False), "bert": (True, False, True), "gpt2": (False, False, False),
                 "t5": (False, True, False)}
_ID_KEYS = {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id", "sep": "seperator_token_id",
            "pad": "padding_token_id", "mask": "mask_token_id", "eot": "eot_token_id", "eom": "eom_token_id"}
_INTEGER_TYPES = (0, 1, 2, 3, 4, 5, 10, 11)


class _Keys:
    """The file's ``tokenizer.ggml.*`` values, each read with the type it must have."""

    def __init__(self, kv: Mapping[str, tuple[int, Any]]) -> None:
        self.kv = kv

    def get(self, name: str, types: tuple[int, ...], what: str) -> Any:
        found = self.kv.get(KEY + name)
        if found is None:
            return None
        t, value = found
        if t not in types:
            raise ModelFormatError(f"GGUF key {KEY + name!r} is a {TYPE_NAMES[t]}, not {what}")
        return value

    def text(self, name: str) -> str | None:
        return self.get(name, (STRING,), "a string")

    def flag(self, name: str) -> bool | None:
        value = self.get(name, (7,), "a bool")
        return None if value is None else bool(value)

    def integer(self, name: str) -> int | None:
        return self.get(name, _INTEGER_TYPES, "an integer")

    def array(self, name: str, element_types: tuple[int, ...], what: str, n: int | None = None):
        found = self.kv.get(KEY + name)
        if found is None:
            return None
        t, value = found
        if t != ARRAY or not _is_array_of(value, element_types):
            raise ModelFormatError(f"GGUF key {KEY + name!r} is not an array of {what}")
        if n is not None and len(value) < n:
            raise ModelFormatError(f"GGUF key {KEY + name!r} has {len(value):,} values for {n:,} tokens")
        return value


def _is_array_of(value: Any, element_types: tuple[int, ...]) -> bool:
    if isinstance(value, list):
        return STRING in element_types
    kinds = {0: "u1", 1: "i1", 4: "u4", 5: "i4", 6: "f4"}
    return isinstance(value, np.ndarray) and any(value.dtype == np.dtype("<" + kinds[t]) for t in element_types
                                                 if t in kinds)


def _declared(kind: str, keys: _Keys, n: int, pre: str | None) -> Declared:
    ids: dict[str, int] = {}
    for role, default in _DEFAULT_IDS[kind].items():
        if 0 <= default < n:
            ids[role] = default
    for role, key in _ID_KEYS.items():
        value = keys.integer(key)
        if value is not None and 0 <= value < n:  # llama.cpp keeps its default for an id out of range
            ids[role] = int(value)
    add_bos, add_eos, add_sep = _DEFAULT_ADDS[kind]
    known = pre_type(pre) if kind == "gpt2" else None
    add_bos = add_bos or (known is not None and known.adds_bos)
    add_bos = _or(keys.flag("add_bos_token"), add_bos)
    add_eos = _or(keys.flag("add_eos_token"), add_eos)
    add_sep = _or(keys.flag("add_sep_token"), add_sep)
    if kind == "bert":  # llama.cpp's WordPiece adds [CLS] (its BOS) and [SEP] whatever the flags say
        add_bos, add_eos, add_sep = True, False, True
    for flag, role in ((add_bos, "bos"), (add_eos, "eos"), (add_sep, "sep")):
        if flag and role not in ids:
            raise ModelFormatError(f"GGUF file adds a {role.upper()} token but has no {KEY + _ID_KEYS[role]}")
    return Declared(pre=pre, special_ids=ids, add_bos=add_bos, add_eos=add_eos, add_sep=add_sep,
                    origin=f"GGUF {kind}")


def _or(value: bool | None, default: bool) -> bool:
    return default if value is None else value


def _tokens(keys: _Keys) -> list[str]:
    tokens = keys.array("tokens", (STRING,), "strings")
    if tokens is None:
        raise ModelFormatError(f"GGUF file has no tokenizer vocabulary ({KEY}tokens)")
    if not tokens:
        raise ModelFormatError(f"GGUF file has an empty tokenizer vocabulary ({KEY}tokens)")
    seen: dict[str, int] = {}
    for i, t in enumerate(tokens):
        j = seen.setdefault(t, i)
        if j != i:
            raise ModelFormatError(f"GGUF vocabulary holds {t!r} twice (ids {j} and {i})")
    return tokens


def _types(keys: _Keys, n: int) -> np.ndarray:
    types = keys.array("token_type", (5,), "int32 values", n)
    if types is None:
        return np.full(n, NORMAL, dtype=np.int64)
    types = types[:n].astype(np.int64)
    types[(types < NORMAL) | (types > BYTE)] = NORMAL  # llama.cpp: undefined, treated as normal text
    return types


def _scores(keys: _Keys, n: int) -> np.ndarray:
    scores = keys.array("scores", (6, 5), "float32 or int32 values", n)
    if scores is None:
        return np.zeros(n, dtype=np.float32)
    return scores[:n].astype(np.float32)


def _spm(kind: str, keys: _Keys, name: str, source: str) -> SentencePieceModel:
    tokens = _tokens(keys)
    n = len(tokens)
    types, scores = _types(keys, n), _scores(keys, n)
    declared = _declared(kind, keys, n, keys.text("pre"))
    ids = declared.special_ids
    trainer = TrainerSpec(model_type=BPE_MODEL if kind == "llama" else UNIGRAM_MODEL, vocab_size=n,
                          byte_fallback=bool((types == BYTE).any()),
                          treat_whitespace_as_suffix=False, unk_id=ids.get("unk", -1), bos_id=ids.get("bos", -1),
                          eos_id=ids.get("eos", -1), pad_id=ids.get("pad", -1))
    normalizer = NormalizerSpec(name="identity", add_dummy_prefix=_or(keys.flag("add_space_prefix"), True),
                                remove_extra_whitespaces=_or(keys.flag("remove_extra_whitespaces"), False),
                                escape_whitespaces=True)
    if kind == "t5":
        charsmap = keys.array("precompiled_charsmap", (0, 1), "bytes")
        if charsmap is not None:
            normalizer.precompiled_charsmap = charsmap.astype(np.uint8).tobytes()
            normalizer.name = "nmt_nfkc"
    proto = ModelProto(PieceTable.from_strings(tokens), scores, types, trainer, normalizer)
    return SentencePieceModel(proto, name, source, declared=declared)


def _added_tokens(tokens: list[str], types: np.ndarray) -> list[dict[str, Any]]:
    """Control and user-defined tokens, matched in the text before the model runs (llama.cpp
    matches user-defined ones always, control ones as special tokens)."""
    out = []
    for i in np.flatnonzero((types == CONTROL) | (types == USER_DEFINED)).tolist():
        out.append({"id": i, "content": tokens[i], "single_word": False, "lstrip": False, "rstrip": False,
                    "normalized": False, "special": bool(types[i] == CONTROL)})
    return out


def _post_processor(declared: Declared, tokens: list[str], *, last: str) -> dict[str, Any] | None:
    """A TemplateProcessing adding BOS and the `last` role's token (EOS, or BERT's SEP) where the
    file says so; None when it adds neither."""
    ids = declared.special_ids
    lead = [ids["bos"]] if declared.add_bos else []
    tail = [ids[last]] if (declared.add_sep if last == "sep" else declared.add_eos) else []
    if not lead and not tail:
        return None

    def special(i: int, type_id: int) -> dict[str, Any]:
        return {"SpecialToken": {"id": tokens[i], "type_id": type_id}}

    single = [special(i, 0) for i in lead] + [{"Sequence": {"id": "A", "type_id": 0}}] + [special(i, 0) for i in tail]
    pair = single + [{"Sequence": {"id": "B", "type_id": 1}}] + [special(i, 1) for i in tail]
    specials = {tokens[i]: {"id": tokens[i], "ids": [i], "tokens": [tokens[i]]} for i in lead + tail}
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials}


def _merges(keys: _Keys) -> list[list[str]]:
    merges = keys.array("merges", (STRING,), "strings")
    if merges is None:
        raise ModelFormatError(f"GGUF gpt2 tokenizer has no merges ({KEY}merges)")
    out = []
    for k, m in enumerate(merges):
        cut = m.find(" ", 1)  # as llama.cpp: a merge's first part may be a space
        if cut < 0:
            raise ModelFormatError(f"GGUF merge {k} ({m[:40]!r}) is not two tokens joined by a space")
        out.append([m[:cut], m[cut + 1 :]])
    return out


def _byte_level(keys: _Keys, name: str, source: str) -> PipelineJson:
    tokens = _tokens(keys)
    n = len(tokens)
    types = _types(keys, n)
    pre = keys.text("pre")
    kind = pre_type(pre)
    if kind is None:
        raise ModelFormatError(f"GGUF file declares the pre-tokenizer {pre!r}, which llama.cpp does not know")
    if not kind.supported:
        raise ModelFormatError(f"GGUF pre-tokenizer {kind.name!r}: llama.cpp splits its text with code of its "
                               f"own, which tokviz does not reproduce")
    declared = _declared("gpt2", keys, n, pre)
    splits = [{"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": False}
              for r in kind.regexes]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    data = {
        "version": "1.0",
        "added_tokens": _added_tokens(tokens, types),
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [*splits, byte_level]},
        "post_processor": _post_processor(declared, tokens, last="eos")
        or {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": kind.ignore_merges, "vocab": {t: i for i, t in enumerate(tokens)},
                  "merges": _merges(keys)},
    }
    return PipelineJson(data, name, source, declared=declared)


def _word_piece(keys: _Keys, name: str, source: str) -> PipelineJson:
    phantom = _tokens(keys)
    n = len(phantom)
    types = _types(keys, n)
    kept = (types == CONTROL).tolist()  # the converter leaves control tokens (and, once, any "[...]") as they are
    tokens = [t if keep or (t.startswith("[") and t.endswith("]")) else t[1:] if t.startswith(MARK) else "##" + t
              for t, keep in zip(phantom, kept)]
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if vocab.setdefault(t, i) != i:
            raise ModelFormatError(f"GGUF WordPiece vocabulary holds {t!r} twice (ids {vocab[t]} and {i})")
    declared = _declared("bert", keys, n, keys.text("pre"))
    unk = declared.special_ids.get("unk")
    lowercase = _or(keys.flag("normalizer.lowercase"), True)
    data = {
        "version": "1.0",
        "added_tokens": _added_tokens(tokens, types),
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": _or(keys.flag("normalizer.strip_accents"), lowercase), "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": _post_processor(declared, tokens, last="sep"),
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": tokens[unk] if unk is not None else "[UNK]",
                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
    }
    return PipelineJson(data, name, source, declared=declared)


def gguf_description(kv: Mapping[str, tuple[int, Any]], *, name: str, source: str) -> SentencePieceModel | PipelineJson:
    """The description of the tokenizer in a GGUF file's metadata `kv` (`metadata.parse_metadata`)."""
    keys = _Keys(kv)
    model = keys.text("model")
    if model is None:
        raise ModelFormatError(f"GGUF file holds no tokenizer ({KEY}model is missing)")
    if model in ("llama", "t5"):
        return _spm(model, keys, name, source)
    if model == "gpt2":
        return _byte_level(keys, name, source)
    if model == "bert":
        return _word_piece(keys, name, source)
    raise ModelFormatError(f"GGUF tokenizer model {model!r}; tokviz reads llama, gpt2, bert and t5")
