"""Mistral's ``tekken.json`` (mistral-common's `Tekkenizer`): tiktoken-style byte ranks with a
separate id space for special tokens. Gives a `RankedVocab`.

The file is JSON: ``vocab`` lists ``{"rank", "token_bytes" (base64), "token_str"}`` in rank order,
``config`` holds the split ``pattern``, ``default_vocab_size`` and ``default_num_special_tokens``,
and newer files list their ``special_tokens`` (``{"rank", "token_str", "is_control"}``; older ones
use mistral-common's twenty built-in ones, `BUILT_IN_SPECIALS`). The N special tokens take ids
0..N-1 (ids no listed one takes are ``<SPECIAL_i>``); the token of rank r has id N + r, and only the
first ``default_vocab_size - N`` ranks are used. Shifting every rank by N keeps their order, so
tiktoken's rule joins the same pairs and the shifted ranks are the ids: no new encoder.

What this leaves out: the image and audio sections and the instruct formatting (mistral-common's
`InstructTokenizer`, which adds BOS and the ``[INST]`` tokens by id). The encoder adds no BOS: its
ids are those of ``Tekkenizer.encode(text, bos=False, eos=False)``.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping, Sequence

from tokviz.core.errors import ModelFormatError

from .descriptions import RankedVocab
from .tiktoken import RANK_SLACK

# mistral-common's special tokens for files that list none (its ``DEPRECATED_SPECIAL_TOKENS``)
BUILT_IN_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
    "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)
FILLER = "<SPECIAL_{}>"  # the name of a special id the file leaves unnamed


def is_tekken(d: object) -> bool:
    """Whether the parsed JSON `d` is a tekken file: a ``config`` with a ``pattern`` and a
    ``vocab`` list (a ``tokenizer.json`` has a ``model`` object instead)."""
    return (isinstance(d, dict) and isinstance(d.get("config"), dict) and "pattern" in d["config"]
            and isinstance(d.get("vocab"), list))


def read_tekken(d: Mapping, *, source: str, name: str) -> RankedVocab:
    """The `RankedVocab` of a parsed tekken file `d`: ordinary ranks shifted past the special
    tokens, which take ids 0..N-1. `ModelFormatError` names what is wrong."""
    config = d["config"]
    pattern = config.get("pattern")
    if not isinstance(pattern, str):
        raise ModelFormatError(f"{source}: tekken config 'pattern' must be a string")
    size = _count(config, "default_vocab_size", source)
    n_special = _count(config, "default_num_special_tokens", source)
    specials = _special_names(d.get("special_tokens"), n_special, source)
    n_ordinary = size - n_special
    vocab = d["vocab"]
    if not 0 <= n_ordinary <= len(vocab):
        raise ModelFormatError(
            f"{source}: default_vocab_size {size:,} minus {n_special:,} special tokens needs "
            f"{n_ordinary:,} ordinary tokens, but the vocab lists {len(vocab):,}")
    ranks = _shifted_ranks(vocab, n_ordinary, n_special, source)
    return RankedVocab(ranks, pattern, {s: i for i, s in enumerate(specials)}, name, source)


def _count(config: Mapping, key: str, source: str) -> int:
    value = config.get(key)
    if type(value) is not int or value < 0:
        raise ModelFormatError(f"{source}: tekken config {key!r} must be a whole number >= 0, not {value!r}")
    return value


def _special_names(listed: object, n_special: int, source: str) -> list[str]:
    """The names of special ids 0..n_special-1: the file's list (else the built-in one), then
    fillers. Bounded: a file cannot ask for more fillers than a tiktoken file may leave gaps."""
    if listed is None:
        names = list(BUILT_IN_SPECIALS)
    elif isinstance(listed, list):
        names = [_special_name(entry, i, source) for i, entry in enumerate(listed)]
    else:
        raise ModelFormatError(f"{source}: tekken 'special_tokens' must be a list")
    if len(names) > n_special:
        raise ModelFormatError(f"{source}: {len(names):,} special tokens listed, but "
                               f"default_num_special_tokens is {n_special:,}")
    if n_special - len(names) > RANK_SLACK:
        raise ModelFormatError(f"{source}: default_num_special_tokens {n_special:,} is far beyond the "
                               f"{len(names):,} special tokens the file names")
    names += [FILLER.format(i) for i in range(len(names), n_special)]
    if len(set(names)) != len(names):
        raise ModelFormatError(f"{source}: a special token appears twice")
    return names


def _special_name(entry: object, i: int, source: str) -> str:
    if not (isinstance(entry, dict) and isinstance(entry.get("token_str"), str)):
        raise ModelFormatError(f"{source}: special token {i} is not an object with a 'token_str' string")
    if entry.get("rank") != i or type(entry.get("rank")) is not int:
        raise ModelFormatError(f"{source}: special token {i} has rank {entry.get('rank')!r}; "
                               f"tekken special tokens are listed in id order")
    return entry["token_str"]


def _shifted_ranks(vocab: Sequence, n: int, shift: int, source: str) -> dict[bytes, int]:
    """``{token bytes: rank + shift}`` for the first `n` entries of the vocab list, each of which
    must carry its own index as rank and strict base64 bytes."""
    ranks: dict[bytes, int] = {}
    b64 = binascii.a2b_base64
    for i in range(n):
        entry = vocab[i]
        try:
            if entry["rank"] != i or type(entry["rank"]) is not int:
                raise ModelFormatError(f"{source}: vocab entry {i} has rank {entry['rank']!r}; "
                                       f"tekken ranks run 0, 1, 2, ... in list order")
            token = b64(entry["token_bytes"], strict_mode=True)
        except (TypeError, KeyError, binascii.Error, ValueError):
            raise ModelFormatError(f"{source}: vocab entry {i} is not "
                                   f"{{'rank': {i}, 'token_bytes': base64}}: {str(entry)[:60]}") from None
        ranks[token] = i + shift
    if len(ranks) != n:
        raise ModelFormatError(f"{source}: a token appears twice in the vocab")
    return ranks
