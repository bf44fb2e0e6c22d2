"""Hand-made SentencePiece models for the rules a trained one rarely exercises, each checked against
the `sentencepiece` library: exact score ties and float32 rounding, user-defined, control and
unused pieces, byte fallback without an unknown piece, whitespace options; and bad files."""

from __future__ import annotations

import pytest

from tests.core.formats.sentencepiece.spm_helpers import model_bytes, write_model
from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.sentencepiece import SentencePieceTokenizer, parse_model_proto
from tokviz.core.loading import load_tokenizer
from tokviz.core.unigram.encoder.lattice import f32

spm = pytest.importorskip("sentencepiece")

BASE = [("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("</s>", 0.0, "control")]
CHARS = [(c, -5.0, "normal") for c in "▁abcdxyz"]


def _pair(tmp_path, pieces, **kw):
    path = write_model(tmp_path / "m.model", pieces, **kw)
    return SentencePieceTokenizer.from_file(path), spm.SentencePieceProcessor(model_file=str(path))


def _same(ours, ref, texts):
    for t in texts:
        assert ours.encode_ids(t) == ref.encode(t), t
        ids = ref.encode(t)
        assert ours.decode(ids) == ref.decode(ids), t


def test_exact_ties_keep_the_longest_last_piece(tmp_path):
    """"ab"+"c" and "a"+"bc" score the same: the path whose last piece starts first wins."""
    pieces = BASE + CHARS + [("ab", -7.0, "normal"), ("bc", -7.0, "normal"), ("▁ab", -6.0, "normal")]
    ours, ref = _pair(tmp_path, pieces, trainer={"model_type": 1})
    _same(ours, ref, ["abc", "ab abc", "xabcx", "abcabcabc", " a b c "])


def test_float32_rounding_decides_like_sentencepiece(tmp_path):
    """Scores whose sums tie in float32 but not in exact arithmetic (and the other way round)."""
    a, b = f32(-1.1), f32(-2.3)
    ab = f32(a + b)  # "ab" scores exactly what "a" + "b" add up to in float32
    pieces = BASE + [("▁", -0.5, "normal"), ("a", a, "normal"), ("b", b, "normal"), ("ab", ab, "normal"),
                     ("x", f32(-3.7), "normal"), ("xa", f32(-3.7 - 1.1), "normal"), ("bx", -6.0, "normal")]
    ours, ref = _pair(tmp_path, pieces, trainer={"model_type": 1})
    long = " ".join(["abxab", "xab", "abab"] * 3000)  # scores past 100000: sentencepiece resets them
    _same(ours, ref, ["ab", "xab", "abxab", "ab ab ab", long])


def test_user_defined_control_and_unused_pieces(tmp_path):
    pieces = BASE + CHARS + [("<mask>", 0.0, "user"), ("▁▁", 0.0, "user"), ("cd", -3.0, "unused"),
                             ("▁ab", -4.0, "normal"), ("ab", -6.0, "normal"), ("<sep>", 0.0, "control")]
    ours, ref = _pair(tmp_path, pieces, trainer={"model_type": 1}, normalizer={"name": "x", "add_dummy_prefix": True,
                                                                               "remove_extra_whitespaces": False})
    _same(ours, ref, ["ab<mask>cd", "<mask> ab", "  ab   cd", "<sep> ab", "<s>x</s>", "e f", "<mask><mask>"])
    assert ref.decode([1, 13, 2]) == ours.decode([1, 13, 2])  # control pieces vanish
    assert ours.decode([0]) == " \u2047 "  # <unk> shows as the model's unk_surface


def test_byte_fallback_without_unknown_piece_and_bpe_scores(tmp_path):
    bytes_ = [(f"<0x{b:02X}>", 0.0, "byte") for b in range(256)]
    merges = [("ab", -1.0, "normal"), ("abc", -2.0, "normal"), ("bc", -0.5, "normal"), ("▁a", -3.0, "normal"),
              ("xx", 0.0, "normal"), ("yy", -0.0, "normal"), ("▁x", -4.0, "unused"), ("▁xx", -1.5, "normal")]
    pieces = [("<s>", 0.0, "control")] + bytes_ + merges + [(c, -9.0, "normal") for c in "▁abcxy"]
    ours, ref = _pair(tmp_path, pieces, trainer={"model_type": 2, "byte_fallback": True})
    _same(ours, ref, ["abc", "aabc ab", "xxyy", "yyxx xx", "日本 abc é", "\x00", "▁x"])
    assert ours.decode([1 + 0xE6, 1 + 0x97]) == ref.decode([1 + 0xE6, 1 + 0x97])  # cut UTF-8: one U+FFFD per byte


@pytest.mark.parametrize("normalizer", [
    {"name": "identity", "add_dummy_prefix": False},
    {"name": "identity", "remove_extra_whitespaces": False},
    {"name": "identity", "escape_whitespaces": False},
])
@pytest.mark.parametrize("suffix", [False, True])
def test_whitespace_options(tmp_path, normalizer, suffix):
    pieces = BASE + CHARS + [(" ", -5.0, "normal"), ("ab▁", -4.0, "normal"), ("▁ab", -4.0, "normal"),
                             ("a b", -1.0, "normal")]
    ours, ref = _pair(tmp_path, pieces, trainer={"model_type": 1, "treat_whitespace_as_suffix": suffix},
                      normalizer=normalizer)
    _same(ours, ref, ["ab", " ab  ab ", "a b", "   ", "", "x\u2581ab", "ab▁"])


def test_unsupported_model_types(tmp_path):
    for kind in (3, 4, 9):
        path = write_model(tmp_path / f"t{kind}.model", BASE + CHARS, trainer={"model_type": kind})
        with pytest.raises(ModelFormatError, match="unsupported SentencePiece model type"):
            load_tokenizer(path)


@pytest.mark.parametrize("cut", [3, 0.3, 0.7, -3])
def test_truncated_files_are_one_clear_error(tmp_path, cut):
    data = model_bytes(BASE + CHARS, trainer={"model_type": 1})
    path = tmp_path / "t.model"
    path.write_bytes(data[: int(len(data) * cut) if isinstance(cut, float) else cut])
    with pytest.raises(ModelFormatError, match="truncated|SentencePiece"):
        load_tokenizer(path)


@pytest.mark.parametrize(("pieces", "trainer", "message"), [
    (CHARS, {}, "no unknown piece"),
    (BASE + CHARS + [("a", -1.0, "normal")], {}, "defined twice"),
    (BASE + [("<0x41>", 0.0, "byte")] + CHARS, {}, "byte_fallback is off"),
    (BASE + [("<0x41>", 0.0, "byte")] + CHARS, {"byte_fallback": True}, "256"),
    (BASE + [("ab", float("nan"), "normal")] + CHARS, {}, "NaN"),
])
def test_models_sentencepiece_refuses_are_refused(tmp_path, pieces, trainer, message):
    path = write_model(tmp_path / "bad.model", pieces, trainer={"model_type": 1, **trainer})
    with pytest.raises(Exception):  # noqa: B017 - the library refuses it too
        spm.SentencePieceProcessor(model_file=str(path))
    with pytest.raises(ModelFormatError, match=message):
        load_tokenizer(path)


def test_peeking_and_parsing_agree():
    data = model_bytes(BASE + CHARS, trainer={"model_type": 2, "byte_fallback": False})
    proto = parse_model_proto(data)
    assert proto.model_type == "bpe" and proto.pieces[:3] == ["<unk>", "<s>", "</s>"]
    assert proto.types[:3] == [2, 3, 3] and proto.scores[3] == -5.0
