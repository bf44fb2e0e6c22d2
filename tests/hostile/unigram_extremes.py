"""Small Unigram models with scores at the edges of floating point, for the kernel tests.

Models are made at test time: tokenizer.json dicts (`hf_json`, double scores: -1e308, denormals,
+-DBL_MAX, equal scores, repeated pieces) and SentencePiece ``.model`` bytes (`sp_bytes`, float32
scores: -FLT_MAX, sums that overflow to -inf, denormals, scores near the reset threshold,
user-defined and unused pieces). `check_hf` and `check_sp` encode a text with tokviz's compiled
and plain Viterbis and with the reference library and assert the three ids agree;
`check_trainer_lattices` runs the Unigram trainer's compiled kernels on lattices with extreme scores
(log-probabilities: -inf, -DBL_MAX, denormals) against the numpy path.

Run as a module (``python -m tests.hostile.unigram_extremes N``), it checks N hypothesis-generated
models of each kind: `tests/hostile/test_kernel_inputs.py` runs it in a child process with
``NUMBA_BOUNDSCHECK=1`` (numba reads it before compiling, so it cannot be switched on in-process).
"""

from __future__ import annotations

import json
import random
import struct
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.jit_switch import jit_off

FLT_MAX = float(np.finfo(np.float32).max)
DBL_MAX = sys.float_info.max
F64_EXTREMES = [-1e308, -DBL_MAX, DBL_MAX, 1e308, 5e-324, -5e-324, 0.0, -0.0, -1.0, -1e5, -9e307]
F32_EXTREMES = [-FLT_MAX, FLT_MAX, -3e38, -1.7e38, 1.7e38, -1e-45, 1e-45, 0.0, -0.0, -1.0,
                -100000.0, -99999.99, -100000.01, 1e5, -5e4]
ALPHABET = "ab\u00e9\U0001d51e"  # one-, two- and four-byte characters (the last beyond the BMP)


def as_f32(x: float) -> float:
    """`x` rounded to float32 (overflow gives an infinity, as a cast in C does)."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def hf_json(vocab: list[tuple[str, float]], *, unk_id: int | None = 0) -> dict:
    """A tokenizer.json with only a Unigram model: the whole text is one word."""
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "Unigram", "unk_id": unk_id, "vocab": [list(v) for v in vocab], "byte_fallback": False}}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _field(num: int, value) -> bytes:
    if isinstance(value, float):
        return _varint(num << 3 | 5) + struct.pack("<f", as_f32(value))
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    data = value.encode("utf-8")
    return _varint(num << 3 | 2) + _varint(len(data)) + data


SP_TYPES = {"normal": 1, "unknown": 2, "user": 4, "unused": 5}


def sp_bytes(pieces: list[tuple[str, float, str]]) -> bytes:
    """A Unigram ``.model``: `pieces` are (piece, score, type name); identity normalization, spaces
    kept (as ``▁``), no dummy prefix. Scores are stored as float32 (-1e39 becomes -inf)."""
    out = bytearray()
    for piece, score, kind in pieces:
        msg = _field(1, piece) + _field(2, float(score)) + _field(3, SP_TYPES[kind])
        out += _varint(1 << 3 | 2) + _varint(len(msg)) + msg
    trainer = _field(3, 1)  # model_type UNIGRAM
    out += _varint(2 << 3 | 2) + _varint(len(trainer)) + trainer
    norm = _field(1, "identity") + _field(3, 0) + _field(4, 0)  # no dummy prefix, spaces kept
    out += _varint(3 << 3 | 2) + _varint(len(norm)) + norm
    return bytes(out)


def tokviz_ids(load, text: str) -> tuple[list[int], list[int]]:
    """(compiled ids, plain ids) of `text` with the tokenizer `load()` makes."""
    tok = load()
    tok.warm_up()  # the compiled Viterbi loaded now, whatever the text's length
    fast = tok.encode(text).ids
    with jit_off():
        plain = load().encode(text).ids
    return fast, plain


def check_hf(vocab: list[tuple[str, float]], text: str) -> list[int]:
    """tokenizers' ids of `text`, asserted equal to tokviz's on both paths."""
    import tokenizers

    from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

    d = hf_json(vocab)
    ref = tokenizers.Tokenizer.from_str(json.dumps(d)).encode(text).ids
    fast, plain = tokviz_ids(lambda: HfTokenizer.from_json(d), text)
    assert fast == plain == ref, (vocab, text, fast, plain, ref)
    return ref


def check_sp(pieces: list[tuple[str, float, str]], text: str) -> list[int]:
    """sentencepiece's ids of `text`, asserted equal to tokviz's on both paths."""
    import sentencepiece

    from tokviz.core.formats.sentencepiece.proto import parse_model_proto
    from tokviz.core.formats.sentencepiece.tokenizer import SentencePieceTokenizer

    data = sp_bytes(pieces)
    ref = sentencepiece.SentencePieceProcessor(model_proto=data).encode(text)
    fast, plain = tokviz_ids(lambda: SentencePieceTokenizer(parse_model_proto(data)), text)
    assert fast == plain == ref, (pieces, text, fast, plain, ref)
    return ref


def check_trainer_lattices(words: list[str], pieces: list[str], scores: list[float]) -> None:
    """The trainer's compiled Viterbi counts and alternatives equal the numpy path's, for `scores`
    that may be -inf (dead pieces) or huge."""
    from tokviz.core.unigram.compiled import load_kernels, make_lattices
    from tokviz.core.unigram.lattice import Lattices

    kernels = load_kernels()
    assert kernels is not None, "numba is off here"
    index = {p: i for i, p in enumerate(pieces)}
    rows = [(k, i, j, index[w[i:j]]) for k, w in enumerate(words)
            for i in range(len(w)) for j in range(i + 1, len(w) + 1) if w[i:j] in index]
    lat, start, end, piece = (np.array(c, dtype=np.int64) for c in zip(*rows))
    lengths = np.array([len(w) for w in words])
    plain = Lattices(lengths, lat, start, end, piece)
    fast = make_lattices(kernels, lengths, lat, start, end, piece)
    q = np.array(scores)
    logp = np.full(len(pieces), -1.0)
    weights = np.ones(len(words))
    whole = [(k, 0, len(w)) for k, w in enumerate(words) if len(w) > 1]
    args = (*(np.array(c) for c in zip(*whole)), q) if whole else None
    got = []
    for lattices in (fast, plain):
        with np.errstate(over="ignore", invalid="ignore"):  # the numpy path's sums of huge scores
            freq = lattices.log_z_and_freq(logp, q, weights, len(pieces))[1]
            alternatives = lattices.alternatives(*args) if args else ()
        got.append((freq.tolist(), sorted(zip(*(r.tolist() for r in alternatives)))))
    assert got[0] == got[1], (words, pieces, scores, got)


# -- strategies ------------------------------------------------------------------------------------

_piece = st.text(alphabet=ALPHABET, min_size=1, max_size=4)
f64_scores = st.one_of(st.sampled_from(F64_EXTREMES), st.floats(allow_nan=False, allow_infinity=False))
f32_scores = st.one_of(st.sampled_from(F32_EXTREMES),
                       st.floats(width=32, allow_nan=False, allow_infinity=False))
texts = st.text(alphabet=ALPHABET + " ", min_size=1, max_size=24)


@st.composite
def hf_vocabs(draw) -> list[tuple[str, float]]:
    """``<unk>`` then up to 8 pieces (a piece may repeat: tokenizers keeps its last id)."""
    pieces = draw(st.lists(_piece, min_size=1, max_size=8))
    return [("<unk>", draw(f64_scores)), *((p, draw(f64_scores)) for p in pieces)]


@st.composite
def sp_pieces(draw) -> list[tuple[str, float, str]]:
    """``<unk>`` then up to 8 distinct pieces, mostly normal, some user-defined or unused."""
    pieces = draw(st.lists(st.text(alphabet=ALPHABET + "\u2581", min_size=1, max_size=4), min_size=1,
                           max_size=8, unique=True))
    kinds = st.sampled_from(["normal"] * 6 + ["user", "unused"])
    return [("<unk>", 0.0, "unknown"), *((p, draw(f32_scores), draw(kinds)) for p in pieces)]


@st.composite
def long_texts(draw) -> str:
    """60 to 600 words joined by ``▁``: enough segments for the plain path's batch and scan."""
    rng = draw(st.randoms(use_true_random=False))
    n = draw(st.integers(60, 600))
    return "\u2581".join("".join(rng.choice("ab\u00e9") for _ in range(rng.randint(1, 6))) for _ in range(n))


def many_segments_case(seed: int) -> tuple[list[tuple[str, float, str]], str]:
    """A model of 40 pieces with scores drawn from `F32_EXTREMES` and a text of 60 to 1,500 words,
    from `seed` (seed 2: a reset makes inf - inf = NaN, and NaN holds for the rest of the text)."""
    rng = random.Random(seed)
    pieces = sorted({"".join(rng.choice("ab\u00e9\u2581") for _ in range(rng.randint(1, 4))) for _ in range(40)})
    model = [("<unk>", 0.0, "unknown"),
             *((p, rng.choice(F32_EXTREMES + [rng.uniform(-20, 0)] * 3), "normal") for p in pieces)]
    n_words = rng.choice([60, 300, 1500])
    words = ["".join(rng.choice("ab\u00e9") for _ in range(rng.randint(1, 6))) for _ in range(n_words)]
    return model, "\u2581".join(words)


# the trainer's scores are log-probabilities: <= 0, -inf for a dead piece (sums of them never make NaN)
trainer_scores = st.one_of(st.sampled_from([-np.inf, -DBL_MAX, -1e308, -1e300, 0.0, -1.0, -5e-324]),
                           st.floats(max_value=0.0, allow_nan=False, allow_infinity=False))


def run(n: int) -> None:
    """Check `n` generated models of each kind (see the module docstring)."""
    options = settings(max_examples=n, deadline=None, database=None, derandomize=True,
                       suppress_health_check=list(HealthCheck))

    @options
    @given(vocab=hf_vocabs(), text=st.text(alphabet=ALPHABET, min_size=1, max_size=24))
    def hf(vocab, text):
        check_hf(vocab, text)

    @options
    @given(pieces=sp_pieces(), text=texts)
    def sp(pieces, text):
        check_sp(pieces, text)

    @options
    @given(pieces=sp_pieces(), text=long_texts())
    def sp_long(pieces, text):
        check_sp(pieces, text)

    @options
    @given(words=st.lists(st.text(alphabet="abc", min_size=1, max_size=8), min_size=1, max_size=6),
           extra=st.lists(st.text(alphabet="abc", min_size=2, max_size=4), max_size=8, unique=True),
           data=st.data())
    def trainer(words, extra, data):
        pieces = list(dict.fromkeys(["a", "b", "c", *extra]))
        check_trainer_lattices(words, pieces, [data.draw(trainer_scores) for _ in pieces])

    hf()
    sp()
    sp_long()
    trainer()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
    print("ok")
