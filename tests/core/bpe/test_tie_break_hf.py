"""Tie-break ``hf``: the trainer makes exactly the merges of Hugging Face tokenizers' BpeTrainer.

HF is fed the same chunks: the whole text through `train_from_iterator`, with the pre-tokenizer
tokviz exports for the split (a ``Split`` on the Oniguruma form of the pattern, then
``ByteLevel(use_regex=False)``), the ByteLevel alphabet as initial alphabet, no special tokens,
``min_frequency`` = tokviz's min count. Compared: the merge list (as byte pairs), the vocabulary
(bytes and ids), encodings at every step, and the exported tokenizer.json. ``TOKVIZ_FULL_PARITY=1``
adds the big run (gutenberg30 at 32k). Skips without ``tokenizers`` or the shared corpora.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter

import pytest

from tokviz.core import SettingsError, Training, TrainSettings, load_timeline, save_timeline, train
from tokviz.core.bpe.replay import decision_at
from tokviz.core.bpe.trainer import HF_BYTE_ORDER

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers  # noqa: E402

from tokviz.core.formats.tokenizer_json.pretokenizers import CHAR_BYTE  # noqa: E402
from tokviz.core.saved.tokenizer_export import export_tokenizer_json, rust_pattern  # noqa: E402

FULL = bool(os.environ.get("TOKVIZ_FULL_PARITY"))


# -- the reference: tokenizers' BpeTrainer on the same chunks -----------------------------------


def hf_pre_tokenizer(split: str, units: str = "bytes"):
    parts = [pre_tokenizers.Split(Regex(rust_pattern(split, oniguruma=True)), behavior="removed", invert=True)]
    if units == "bytes":
        parts.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False))
    return pre_tokenizers.Sequence(parts)


def hf_train(text: str, split: str, n_merges: int, *, units: str = "bytes", min_count: int = 2) -> Tokenizer:
    """A tokenizers BPE trained like tokviz's hf mode, with at most `n_merges` merges."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = hf_pre_tokenizer(split, units)
    alphabet = pre_tokenizers.ByteLevel.alphabet() if units == "bytes" else []
    n_base = 256 if units == "bytes" else len({c for piece, _ in tok.pre_tokenizer.pre_tokenize_str(text) for c in piece})
    trainer = trainers.BpeTrainer(vocab_size=n_base + n_merges, min_frequency=min_count, show_progress=False,
                                  initial_alphabet=alphabet, special_tokens=[])
    tok.train_from_iterator([text], trainer)
    return tok


def hf_model(tok: Tokenizer) -> tuple[dict[str, int], list[tuple[str, str]]]:
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return model["vocab"], merges


def to_bytes(s: str, units: str = "bytes") -> bytes:
    return bytes(CHAR_BYTE[c] for c in s) if units == "bytes" else s.encode("utf-8")


def tokviz_merges(timeline) -> list[tuple[bytes, bytes]]:
    vocab = timeline.token_bytes()
    return [(vocab[a], vocab[b]) for a, b in timeline.merges()]


def assert_parity(text: str, split: str, n_merges: int, *, units: str = "bytes", min_count: int = 2):
    tok = hf_train(text, split, n_merges, units=units, min_count=min_count)
    vocab, merges = hf_model(tok)
    timeline = train(TrainSettings(units=units, split=split, merges=n_merges, min_count=min_count,
                                   tie_break="hf"), texts=[text])
    theirs = [(to_bytes(a, units), to_bytes(b, units)) for a, b in merges]
    ours = tokviz_merges(timeline)
    first_diff = next((i for i, (x, y) in enumerate(zip(ours, theirs)) if x != y), None)
    assert first_diff is None, f"merge {first_diff} differs: tokviz {ours[first_diff]}, HF {theirs[first_diff]}"
    assert len(ours) == len(theirs)
    # the vocabulary: the same tokens, and merged tokens have the same ids (bases: HF's order)
    assert len(vocab) == timeline.base_size + len(merges)  # no merge reused an id
    tb = timeline.token_bytes()[: timeline.base_size + timeline.n_merges]  # not [UNK] or specials
    assert {to_bytes(s, units): i for s, i in vocab.items()} == {
        t: (HF_BYTE_ORDER[i] if units == "bytes" and i < 256 else i) for i, t in enumerate(tb)
    }
    return timeline, tok


# -- parity on corpora slices -----------------------------------------------------------------

CASES = [  # (corpus, characters, split, merges)
    ("taylorswift.txt", 120_000, "gpt2", 1500),
    ("taylorswift.txt", 120_000, "gpt4", 600),
    ("taylorswift.txt", 120_000, "whitespace", 1000),
    ("tinyshakespeare.txt", 150_000, "gpt4", 1500),
    ("tinyshakespeare.txt", 150_000, "o200k", 300),
    ("udhr2_all.txt", 150_000, "gpt2", 1200),
    ("udhr2_all.txt", 100_000, "gpt4", 1500),
    ("gutenberg30.txt", 150_000, "gpt4", 2000),
    ("gutenberg30.txt", 100_000, "gpt2", 800),
    ("taylorswift.txt", 15_000, "none", 400),
    ("udhr2_all.txt", 12_000, "none", 300),
]


@pytest.mark.parametrize(("corpus", "n_chars", "split", "n_merges"), CASES)
def test_merges_and_vocab_equal_hf(corpus_text, corpus, n_chars, split, n_merges):
    timeline, _ = assert_parity(corpus_text(corpus, n_chars), split, n_merges)
    assert timeline.n_merges == n_merges


def test_character_units_and_min_count_equal_hf(corpus_text):
    """Characters: HF's alphabet is the corpus's characters by code point, like tokviz's; the
    run stops where no pair reaches min_frequency = min count."""
    text = corpus_text("udhr2_all.txt", 60_000)
    assert_parity(text, "gpt4", 800, units="chars")
    timeline, _ = assert_parity(text[:8000], "gpt4", 5000, min_count=5)
    assert timeline.n_merges < 5000 and timeline.steps[-1].count >= 5


def test_chains_of_repeats_equal_hf_and_never_reuse_an_id():
    """Runs like ``aaaa`` (overlapping pairs, merged left to right) on random corpora: HF counts
    and merges them as tokviz does, and no merge ever spells an existing token (HF would give it
    that token's id; `assert_parity` checks every id is new)."""
    rng = random.Random(7)
    for _ in range(60):
        words = ["".join(rng.choice("ab") for _ in range(rng.randint(2, 9))) for _ in range(rng.randint(2, 8))]
        text = " ".join(w for w in words for _ in range(rng.randint(1, 4)))
        assert_parity(text, "whitespace", 40, min_count=1)


# -- known answers ----------------------------------------------------------------------------


def test_known_answer_where_first_occurrence_and_hf_differ():
    """minbpe's example: after ``aa``, the pairs (aa, a) and (a, b) both occur twice. The first
    occurrence picks (aa, a); HF picks (a, b): 'a' is HF id 64, 'aa' 256."""
    text = "aaabdaaabac"
    first = train(TrainSettings(split="none", merges=3), texts=[text])
    hf = train(TrainSettings(split="none", merges=3, tie_break="hf"), texts=[text])
    assert first.merges() == [(97, 97), (256, 97), (257, 98)]
    assert hf.merges() == [(97, 97), (97, 98), (256, 257)]
    assert [s.count for s in hf.steps] == [4, 2, 2]  # HF never reports counts; tokviz does
    assert hf.tokenizer().encode_ordinary(text).ids == [258, 100, 258, 97, 99]
    _, merges = hf_model(hf_train(text, "none", 3, min_count=1))
    assert merges == [("a", "a"), ("a", "b"), ("aa", "ab")]
    d = decision_at(hf, 2)
    assert d.candidates[0].pair == (97, 98) and d.candidates[0].count == 2
    assert "Hugging Face" in d.candidates[0].reason
    assert any(c.pair == (256, 97) and "Hugging Face" in c.reason for c in d.candidates[1:])


def test_step_counts_are_the_pair_counts_at_that_step(corpus_text):
    """The timeline's count of merge r is the (weighted, overlapping) count of its pair in the
    corpus segmented with the first r merges."""
    text = corpus_text("taylorswift.txt", 20_000)
    timeline = train(TrainSettings(split="gpt2", merges=200, tie_break="hf"), texts=[text])
    tok = timeline.tokenizer()
    chunks = Counter(tok.chunks(text))
    for r in (0, 1, 17, 99, 199):
        pairs: Counter = Counter()
        for chunk, n in chunks.items():
            ids = tok.encode_chunk(chunk, step=r, cached=False)[0]
            for p in zip(ids, ids[1:]):
                pairs[p] += n
        assert timeline.steps[r].count == pairs[timeline.steps[r].pair]
        assert timeline.steps[r].count == max(pairs.values())


# -- encoding and export ----------------------------------------------------------------------


def test_encoding_at_every_step_equals_hf_and_the_export_loads(corpus_text, tmp_path):
    train_text = corpus_text("tinyshakespeare.txt", 60_000)
    probe = corpus_text("tinyshakespeare.txt", 80_000)[60_000:] + " héllo 👋 wörld\r\n\t  12345 don't"
    timeline, tok = assert_parity(train_text, "gpt4", 500)
    vocab, merges = hf_model(tok)
    ours = timeline.tokenizer()
    to_hf_id = {i: (HF_BYTE_ORDER[i] if i < 256 else i) for i in range(timeline.vocab_size)}
    for k in (0, 1, 50, 257, 500):
        ref = Tokenizer(models.BPE(vocab={s: i for s, i in vocab.items() if i < 256 + k}, merges=merges[:k]))
        ref.pre_tokenizer = hf_pre_tokenizer("gpt4")
        ids = ours.encode_ordinary(probe, step=k).ids
        assert [to_hf_id[i] for i in ids] == ref.encode(probe).ids
    assert [to_hf_id[i] for i in ours.encode_ordinary(probe).ids] == tok.encode(probe).ids
    export_tokenizer_json(timeline, tmp_path / "tokenizer.json")
    exported = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert exported.encode(probe).ids == ours.encode_ordinary(probe).ids


# -- settings and files -----------------------------------------------------------------------


def test_settings_refuse_an_end_of_word_marker_and_round_trip(tmp_path):
    with pytest.raises(SettingsError, match="tie-break hf has no end-of-word marker"):
        TrainSettings(end_of_word="</w>", tie_break="hf").validate()
    with pytest.raises(SettingsError, match="unknown tie-break 'x'; choose first, hf"):
        TrainSettings(tie_break="x").validate()
    s = TrainSettings(split="none", merges=3, tie_break="hf", special_tokens=("<s>",))
    assert TrainSettings.from_json(s.to_json()) == s
    timeline = Training(s, texts=["aaabdaaabac<s>aaab"]).run()
    save_timeline(timeline, tmp_path / "m.json")
    loaded = load_timeline(tmp_path / "m.json")
    assert loaded.settings.tie_break == "hf"
    assert loaded.merges() == timeline.merges() == [(97, 97), (97, 98), (256, 257)]
    assert loaded.special_ids == {"<s>": 259}


def test_cli_tie_break_flag(tmp_path, monkeypatch, capsys):
    from tokviz.app.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("aaabdaaabac")
    base = ["train", "a.txt", "--split", "none", "--merges", "3", "--quiet"]
    assert main([*base, "-o", "hf.json", "--tie-break", "hf"]) == 0
    assert main([*base, "-o", "first.json"]) == 0
    assert load_timeline(tmp_path / "hf.json").merges() == [(97, 97), (97, 98), (256, 257)]
    assert load_timeline(tmp_path / "first.json").settings.tie_break == "first"
    capsys.readouterr()
    for extra, message in [
        (["--end-of-word", "_"], "tokviz: tie-break hf has no end-of-word marker"),
        (["--algorithm", "unigram"], "tokviz train: --tie-break applies to bpe, "),
    ]:
        assert main([*base, "-o", "bad.json", "--tie-break", "hf", *extra]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "bad.json").exists()


# -- the big run ------------------------------------------------------------------------------


@pytest.mark.skipif(not FULL, reason="exhaustive parity: set TOKVIZ_FULL_PARITY=1")
def test_gutenberg30_at_32k_equals_hf(corpus_text):
    """All 31,744 merges of gutenberg30 (31.8 MB, gpt2 split) at vocabulary 32,000."""
    timeline, _ = assert_parity(corpus_text("gutenberg30.txt"), "gpt2", 32_000 - 256)
    assert timeline.n_merges == 31_744
