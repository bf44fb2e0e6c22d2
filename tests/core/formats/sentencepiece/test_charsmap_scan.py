"""The charsmap's keys read level by level in numpy (`charsmap_scan`) equal the node-by-node walk
(`CharsMap.walk`), on sentencepiece's own charsmaps and on tries with labels, offsets and leaf
flags changed at random (ones that still pass sentencepiece's checks)."""

from __future__ import annotations

import io
import random
import struct

import pytest

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.sentencepiece.charsmap import CharsMap
from tokviz.core.formats.sentencepiece.charsmap_scan import MAX_LEVELS
from tokviz.core.formats.sentencepiece.proto import parse_model_proto

spm = pytest.importorskip("sentencepiece")

RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf")


def charsmap_of(rule: str) -> bytes:
    """The precompiled charsmap sentencepiece's trainer writes for `rule`."""
    rng = random.Random(0)
    words = ["low", "lower", "newest", "widest", "café", "Ｈｅｌｌｏ", "ﬁne"]
    lines = [" ".join(rng.choice(words) for _ in range(8)) for _ in range(200)]
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=30,
                                   hard_vocab_limit=False, model_type="unigram", normalization_rule_name=rule,
                                   minloglevel=2, num_threads=1)
    return parse_model_proto(out.getvalue()).normalizer.precompiled_charsmap


@pytest.fixture(scope="module")
def charsmaps() -> dict[str, bytes]:
    return {rule: charsmap_of(rule) for rule in RULES}


def facts(cm: CharsMap) -> tuple:
    return cm.single, cm.continuing, cm.max_chars, cm.starters


@pytest.mark.parametrize("rule", RULES)
def test_sentencepieces_charsmaps_read_the_same_both_ways(charsmaps, rule):
    cm = CharsMap(charsmaps[rule])
    assert facts(cm) == cm.walk()
    assert len(cm.single) > 1000 and cm.max_chars >= 2 and cm.starters  # the test reads real keys
    assert cm.single["ﬁ"] == "fi" and "\u0301" in cm.continuing  # e + combining acute -> é


def _pack(units: list[int], strings: bytes) -> bytes:
    return struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + strings


@pytest.mark.parametrize("seed", range(2))
def test_changed_tries_read_the_same_both_ways(charsmaps, seed):
    blob = charsmaps["nmt_nfkc"]
    (size,) = struct.unpack_from("<I", blob)
    units = list(struct.unpack_from(f"<{size // 4}I", blob, 4))
    strings = blob[4 + size:]
    nodes = [i for i, u in enumerate(units) if not u >> 31]
    rng = random.Random(seed)
    read = 0
    for _ in range(30):
        u = list(units)
        for _ in range(rng.randint(1, 8)):
            i = rng.choice(nodes)
            kind = rng.randrange(3)
            if kind == 0:
                u[i] = (u[i] & ~0xFF) | rng.randrange(256)  # another label
            elif kind == 1:
                u[i] = (u[i] & 0x3FF) | (rng.randrange(len(u)) << 10)  # children elsewhere
            else:
                u[i] ^= 1 << 8  # a leaf more or less
        try:
            cm = CharsMap(_pack(u, strings))
        except ModelFormatError:
            continue  # refused before any reading (sentencepiece's checks)
        assert facts(cm) == cm.walk()
        read += 1
    assert read >= 5


def test_a_trie_deeper_than_the_levels_read_takes_the_walk():
    """A chain of ``MAX_LEVELS + 1`` ``a`` nodes ending in a key: read by `walk`, as long as it is."""
    n = MAX_LEVELS + 1
    # node k at unit 256 * k, its children at 256 * (k + 1): child ``a`` at unit 256 * (k + 1) ^ 97
    units = [0] * (256 * (n + 2))
    units[0] = 256 << 10  # the root: children from unit 256
    for k in range(n):
        at = (256 * (k + 1)) ^ ord("a")
        leaf = k == n - 1
        units[at] = ord("a") | (leaf << 8) | ((at ^ (256 * (k + 2))) << 10)
    units[256 * (n + 1)] = 0x80000000  # the key's value: the replacement at offset 0
    cm = CharsMap(_pack(units, b"b\0"))
    assert cm.max_chars == n and cm.continuing == {"a"} and cm.starters == {"a"} and cm.single == {}
    assert cm.longest("a" * n, 0) == (n, "b")
