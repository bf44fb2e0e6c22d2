"""BPE training: known answers, tie-breaking, overlapping pairs, budgets, special tokens, stages."""

from __future__ import annotations

import dataclasses

import pytest

from tokviz.core import (
    BpeTrainer,
    CorpusError,
    MergeStep,
    SettingsError,
    SplitError,
    Timeline,
    Training,
    TrainSettings,
    merge_budget,
    parse_word_counts,
    train,
)
from tokviz.core.bpe.reference import oracle_split

LOW_TEXT = "low low low low low lower lower lowest"
LOW_TABLE = "low 5\nlower 2\nlowest 1\n"


def named_merges(timeline: Timeline) -> list[tuple[str, str, int]]:
    """The merges as (left text, right text, count)."""
    vocab = timeline.token_bytes()
    return [(vocab[a].decode(), vocab[b].decode(), s.count) for s in timeline.steps for a, b in [s.pair]]


# -- known answers ----------------------------------------------------------------------------


@pytest.mark.parametrize("units", ["bytes", "chars"])
@pytest.mark.parametrize("source", ["text", "table"])
def test_known_answer_low_lower_lowest(units, source):
    s = TrainSettings(units=units, split="whitespace", end_of_word="_", word_counts=source == "table")
    if source == "table":
        timeline = train(s, table=parse_word_counts(LOW_TABLE))
    else:
        timeline = train(s, texts=[LOW_TEXT])
    assert named_merges(timeline) == [
        ("l", "o", 8),
        ("lo", "w", 8),
        ("low", "_", 5),
        ("low", "e", 3),
        ("lowe", "r", 2),
        ("lower", "_", 2),
    ]
    assert timeline.finished
    if units == "chars":
        assert timeline.base.symbols == ("_", "e", "l", "o", "r", "s", "t", "w")
        assert timeline.vocab_size == 8 + 6 + 1  # base + merges + [UNK]
    # low_ x5, lower_ x2, lowe s t _ x1
    assert timeline.steps[-1].length == 5 + 2 + 4
    assert timeline.corpus_length == 5 * 4 + 2 * 6 + 7


def test_known_answer_minbpe():
    timeline = train(TrainSettings(units="bytes", split="none", merges=3), texts=["aaabdaaabac"])
    assert [s.pair for s in timeline.steps] == [(97, 97), (256, 97), (257, 98)]
    assert [s.id for s in timeline.steps] == [256, 257, 258]
    assert [s.token for s in timeline.steps] == [b"aa", b"aaa", b"aaab"]
    tok = timeline.tokenizer()
    assert tok.encode("aaabdaaabac").ids == [258, 100, 258, 97, 99]
    assert tok.decode([258, 100, 258, 97, 99]) == "aaabdaaabac"


def test_known_answer_word_table_chars():
    table = parse_word_counts("the 50\nun 20\nable 25\nunable 12\n")
    timeline = train(TrainSettings(units="chars", word_counts=True, min_count=2), table=table)
    assert named_merges(timeline) == [
        ("t", "h", 50),
        ("th", "e", 50),
        ("a", "b", 37),
        ("ab", "l", 37),
        ("abl", "e", 37),
        ("u", "n", 32),
        ("un", "able", 12),
    ]
    assert timeline.finished
    assert timeline.base.symbols == tuple("abehlntu")
    assert [s.id for s in timeline.steps] == list(range(8, 15))
    assert timeline.unk_id == 15


# -- tie-breaking -----------------------------------------------------------------------------


def test_tie_goes_to_first_occurrence_not_smallest_ids():
    # (c, d) and (a, b) both occur twice; (c, d) occurs first.
    timeline = train(TrainSettings(split="whitespace"), texts=["cd ab cd ab"])
    assert [s.token for s in timeline.steps] == [b"cd", b"ab"]


def test_tie_prefers_earlier_chunk_over_earlier_position():
    # (a, b) first occurs at position 1 of chunk 0; (c, d) at position 0 of chunk 1.
    timeline = train(TrainSettings(split="whitespace"), texts=["xab cd cd ab"])
    assert [s.token for s in timeline.steps] == [b"ab", b"cd"]


def test_tie_within_a_chunk_goes_to_leftmost_pair():
    timeline = train(TrainSettings(split="whitespace", units="chars"), texts=["yzab yzab"])
    assert named_merges(timeline)[0] == ("y", "z", 2)


def test_word_table_order_is_the_chunk_order():
    table = parse_word_counts("cd 3\nab 3\n")
    timeline = train(TrainSettings(word_counts=True), table=table)
    assert [(s.token, s.count) for s in timeline.steps] == [(b"cd", 3), (b"ab", 3)]
    table = parse_word_counts("ab 3\ncd 3\n")
    timeline = train(TrainSettings(word_counts=True), table=table)
    assert [(s.token, s.count) for s in timeline.steps] == [(b"ab", 3), (b"cd", 3)]


def test_chunk_order_follows_the_texts_in_order():
    timeline = train(TrainSettings(split="whitespace"), texts=["cd ab", "ab cd"])
    assert [s.token for s in timeline.steps] == [b"cd", b"ab"]
    timeline = train(TrainSettings(split="whitespace"), texts=["ab cd", "cd ab"])
    assert [s.token for s in timeline.steps] == [b"ab", b"cd"]


def test_candidates_rank_by_count_then_first_occurrence():
    timeline = train(TrainSettings(split="none", merges=1, min_count=1), texts=["aaabdaaabac"])
    (step,) = timeline.steps
    got = [(c.pair, c.count, c.first_chunk, c.first_offset) for c in step.candidates]
    assert got == [
        ((97, 97), 4, 0, 0),
        ((97, 98), 2, 0, 2),
        ((98, 100), 1, 0, 3),
        ((100, 97), 1, 0, 4),
        ((98, 97), 1, 0, 8),
    ]


def test_candidates_are_pairs_that_could_win():
    # with the default min count 2, pairs seen once are not candidates
    timeline = train(TrainSettings(split="none", merges=1), texts=["aaabdaaabac"])
    (step,) = timeline.steps
    assert [(c.pair, c.count) for c in step.candidates] == [((97, 97), 4), ((97, 98), 2)]


def test_candidate_offsets_count_base_symbols_and_chunks():
    # second merge: (ab, c) x2 first seen in chunk 1 ("xabc") at base offset 1
    timeline = train(TrainSettings(split="whitespace", merges=2), texts=["ab xabc abc"])
    first, second = timeline.steps
    assert (first.token, first.count) == (b"ab", 3)
    assert [(c.pair, c.count, c.first_chunk, c.first_offset) for c in second.candidates] == [
        ((256, 99), 2, 1, 1),
    ]


# -- overlapping runs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "count", "length", "ids"),
    [
        ("aaa", 2, 2, [256, 97]),  # "aaa" holds (a, a) twice; merge left to right
        ("aaaa", 3, 2, [256, 256]),
        ("aaaaa", 4, 3, [256, 256, 97]),
    ],
)
def test_overlapping_runs_count_naively_and_merge_left_to_right(text, count, length, ids):
    timeline = train(TrainSettings(split="none", merges=1), texts=[text])
    (step,) = timeline.steps
    assert (step.pair, step.count, step.length) == ((97, 97), count, length)
    assert timeline.tokenizer().encode(text).ids == ids


def test_overlapping_runs_weighted_by_chunk_count():
    timeline = train(TrainSettings(split="whitespace", merges=2), texts=["aaa aaa aaa"])
    assert [(s.pair, s.count, s.length) for s in timeline.steps] == [
        ((97, 97), 6, 6),
        ((256, 97), 3, 3),
    ]


def test_trainer_segments_after_overlapping_merge():
    trainer = BpeTrainer([list(b"aaaa"), list(b"aaa")], [1, 2], [bytes([i]) for i in range(256)])
    steps = list(trainer.steps(max_merges=1))
    assert steps[0].count == 3 + 2 * 2
    assert trainer.segments(0) == [256, 256]
    assert trainer.segments(1) == [256, 97]


# -- budgets and stopping ---------------------------------------------------------------------


TEXT = "the cat sat on the mat; the cat ate the rat. " * 20


def test_vocab_size_counts_base_merges_and_specials_bytes():
    s = TrainSettings(units="bytes", split="gpt4", vocab_size=270, special_tokens=("<|a|>", "<|b|>"))
    timeline = train(s, texts=[TEXT])
    assert timeline.n_merges == 270 - 256 - 2
    assert timeline.vocab_size == 270
    assert len(timeline.token_bytes()) == 270
    assert timeline.special_ids == {"<|a|>": 268, "<|b|>": 269}
    assert timeline.unk_id is None


def test_vocab_size_counts_unk_for_chars():
    s = TrainSettings(units="chars", split="gpt4", vocab_size=30, special_tokens=("<|a|>",))
    timeline = train(s, texts=[TEXT])
    base = len(set(TEXT))
    assert timeline.base_size == base
    assert timeline.n_merges == 30 - base - 2
    assert timeline.vocab_size == 30
    assert timeline.unk_id == base + timeline.n_merges
    assert timeline.special_ids == {"<|a|>": 29}
    assert timeline.token_bytes()[timeline.unk_id] == b"[UNK]"
    assert timeline.token_bytes()[29] == b"<|a|>"


def test_vocab_size_equal_to_base_means_no_merges():
    timeline = train(TrainSettings(units="bytes", vocab_size=256), texts=[TEXT])
    assert timeline.n_merges == 0
    assert timeline.finished
    assert timeline.tokenizer().encode("the").ids == [116, 104, 101]


def test_merge_budget_by_count():
    timeline = train(TrainSettings(merges=5), texts=[TEXT])
    assert timeline.n_merges == 5
    assert [s.rank for s in timeline.steps] == [0, 1, 2, 3, 4]
    assert [s.id for s in timeline.steps] == [256, 257, 258, 259, 260]


@pytest.mark.parametrize(("units", "size", "least"), [("bytes", 100, 257), ("bytes", 256, 257), ("chars", 5, 9)])
def test_impossible_vocab_size(units, size, least):
    # bytes: 256 + 1 special; chars: 7 distinct characters of "abcabc xyz" + [UNK] + 1 special
    s = TrainSettings(units=units, vocab_size=size, special_tokens=("<s>",))
    with pytest.raises(SettingsError) as info:
        train(s, texts=["abcabc xyz"])
    assert str(info.value).endswith(f"choose a size of at least {least}")


def test_impossible_vocab_size_for_bytes_fails_before_reading():
    with pytest.raises(SettingsError, match="at least 256"):
        Training(TrainSettings(units="bytes", vocab_size=10))


def test_merge_budget_helper():
    assert merge_budget(TrainSettings(merges=7), 256) == 7
    assert merge_budget(TrainSettings(vocab_size=300, special_tokens=("a",)), 256) == 43
    assert merge_budget(TrainSettings(units="chars", vocab_size=30), 20) == 9
    assert merge_budget(TrainSettings(), 256) is None


def test_stops_when_best_count_below_min_count():
    # "abab cd": (a,b)=2, (b,a)=1, (c,d)=1
    timeline = train(TrainSettings(split="whitespace", min_count=2), texts=["abab cd"])
    assert [(s.token, s.count) for s in timeline.steps] == [(b"ab", 2)]
    assert timeline.finished
    timeline = train(TrainSettings(split="whitespace", min_count=1), texts=["abab cd"])
    assert [(s.token, s.count) for s in timeline.steps] == [(b"ab", 2), (b"abab", 1), (b"cd", 1)]
    timeline = train(TrainSettings(split="whitespace", min_count=3), texts=["abab cd"])
    assert timeline.steps == []
    assert timeline.finished


def test_default_min_count_is_two():
    assert TrainSettings().min_count == 2
    timeline = train(TrainSettings(split="none"), texts=["abcd"])
    assert timeline.steps == []


def test_min_count_one_merges_each_chunk_into_one_token():
    timeline = train(TrainSettings(split="whitespace", units="chars", min_count=1), texts=["hello world"])
    tok = timeline.tokenizer()
    assert [tok.token_bytes(i) for i in tok.encode("hello world").ids] == [b"hello", b"world"]
    assert timeline.steps[-1].length == 2


def test_budget_larger_than_possible_merges():
    timeline = train(TrainSettings(split="none", merges=100), texts=["abab"])
    assert [s.token for s in timeline.steps] == [b"ab"]
    assert timeline.finished


def test_empty_corpus_is_an_error():
    with pytest.raises(CorpusError, match="the corpus has no text to train on"):
        train(TrainSettings(split="whitespace"), texts=[" \n\t "])
    with pytest.raises(CorpusError, match="no text to train on"):
        train(TrainSettings(), texts=[])


# -- special tokens ---------------------------------------------------------------------------


def test_special_tokens_never_merge():
    text = "<|e|><|e|><|e|>x<|e|><|e|>"
    timeline = train(TrainSettings(split="none", special_tokens=("<|e|>",)), texts=[text])
    assert timeline.steps == []  # without the special token "<|" would merge at once
    assert timeline.n_chunks == 1
    plain = train(TrainSettings(split="none"), texts=[text])
    assert plain.steps[0].token == b"<|"


def test_special_tokens_split_the_corpus():
    # "ab<s>ab": the special token cuts the text, so (b, <) and (>, a) never count.
    s = TrainSettings(split="none", units="chars", special_tokens=("<s>",), min_count=1)
    timeline = train(s, texts=["ab<s>ab<s>ab"])
    assert timeline.base.symbols == ("a", "b")
    assert named_merges(timeline) == [("a", "b", 3)]
    assert all(b"<s>" not in t for t in timeline.token_bytes()[:-1])
    assert timeline.token_bytes()[-1] == b"<s>"


# -- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"units": "words"}, SettingsError, "unknown units 'words'; choose bytes or chars"),
        ({"split": "regex:("}, SplitError, "invalid split regex"),
        ({"vocab_size": 300, "merges": 3}, SettingsError, "not both"),
        ({"vocab_size": 0}, SettingsError, "vocabulary size must be positive"),
        ({"merges": -1}, SettingsError, "cannot be negative"),
        ({"min_count": 0}, SettingsError, "minimum count must be at least 1"),
        ({"end_of_word": ""}, SettingsError, "end-of-word marker cannot be empty"),
        ({"special_tokens": ("",)}, SettingsError, "special token cannot be empty"),
        ({"special_tokens": ("<s>", "<s>")}, SettingsError, "must be distinct"),
        ({"tie_break": "last"}, SettingsError, "unknown tie-break 'last'"),
    ],
)
def test_invalid_settings(kwargs, error, message):
    with pytest.raises(error, match=message):
        TrainSettings(**kwargs).validate()
    with pytest.raises(error, match=message):
        Training(TrainSettings(**kwargs), texts=["abc"])


def test_settings_json_round_trip():
    s = TrainSettings(units="chars", split="regex:\\w+", end_of_word="</w>", vocab_size=99,
                      min_count=3, special_tokens=("<s>", "</s>"), word_counts=True)
    assert TrainSettings.from_json(s.to_json()) == s
    with pytest.raises(SettingsError, match="unknown settings: colour"):
        TrainSettings.from_json({**s.to_json(), "colour": "red"})


# -- stages and records -----------------------------------------------------------------------


def test_training_is_a_generator_of_frozen_merge_steps():
    training = Training(TrainSettings(split="gpt4", merges=10), texts=[TEXT])
    timeline = training.prepare()
    assert timeline.steps == []
    assert timeline.corpus_length == len(TEXT.encode())
    assert timeline.n_chunks == len(set(oracle_split(TEXT, "gpt4"))) == 11
    steps = training.steps()
    first = next(steps)
    assert isinstance(first, MergeStep)
    assert timeline.steps == [first]
    assert not timeline.finished
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.count = 0  # type: ignore[misc]
    rest = list(steps)
    assert len(rest) == 9
    assert timeline.finished
    assert timeline.steps == [first, *rest]


def test_stopping_early_leaves_an_unfinished_timeline():
    training = Training(TrainSettings(split="gpt4"), texts=[TEXT])
    for step in training.steps():
        if step.rank == 2:
            break
    assert training.timeline is not None
    assert training.timeline.n_merges == 3
    assert not training.timeline.finished


def test_merge_step_records_are_consistent():
    timeline = train(TrainSettings(split="gpt4", merges=40), texts=[TEXT])
    vocab = timeline.token_bytes()
    previous_length = timeline.corpus_length
    for rank, s in enumerate(timeline.steps):
        assert s.rank == rank
        assert s.id == 256 + rank
        assert s.token == vocab[s.pair[0]] + vocab[s.pair[1]] == vocab[s.id]
        assert max(s.pair) < s.id
        assert s.candidates[0].pair == s.pair and s.candidates[0].count == s.count
        assert [c.count for c in s.candidates] == sorted((c.count for c in s.candidates), reverse=True)
        assert 0 < previous_length - s.length <= s.count
        previous_length = s.length
    assert [timeline.length_at(k) for k in (0, 1, 40, 99)] == [
        timeline.corpus_length, timeline.steps[0].length, timeline.steps[-1].length, timeline.steps[-1].length,
    ]
    assert timeline.merges(3) == [s.pair for s in timeline.steps[:3]]
    assert timeline.merges() == [s.pair for s in timeline.steps]
    assert timeline.merges(-5) == []


def test_multibyte_characters_as_chars_units():
    timeline = train(TrainSettings(units="chars", split="none", min_count=2), texts=["日本日本語"])
    assert timeline.base.symbols == ("日", "本", "語")
    assert named_merges(timeline) == [("日", "本", 2)]
    assert timeline.steps[0].token == "日本".encode()


def test_chars_base_is_sorted_and_independent_of_corpus_order():
    a = train(TrainSettings(units="chars", split="gpt4", merges=0), texts=["zebra apple 😀 ß"])
    b = train(TrainSettings(units="chars", split="gpt4", merges=0), texts=["ß 😀 apple zebra"])
    assert a.base.symbols == b.base.symbols == tuple(sorted(set("zebra apple 😀 ß")))
    assert a.tokenizer().encode("ab").ids == [a.base.symbols.index("a"), a.base.symbols.index("b")]
    with_marker = train(TrainSettings(units="chars", split="whitespace", end_of_word="</w>", merges=0), texts=["ba"])
    assert with_marker.base.symbols == ("</w>", "a", "b")


def test_end_of_word_marker_with_bytes_units_is_its_utf8():
    timeline = train(TrainSettings(units="bytes", split="whitespace", end_of_word="</w>", merges=6),
                     texts=["ab ab"])
    assert timeline.corpus_length == 2 * 6
    assert timeline.steps[-1].token == b"ab</w>"
