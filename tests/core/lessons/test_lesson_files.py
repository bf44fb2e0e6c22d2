"""Guided lessons, the core half: every lesson file parses; broken files give errors naming the file
and field; the numbers the lessons show are right (worked out by hand where small)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from tests.conftest import qt_modules_loaded, shared_file
from tokviz.core import TrainSettings, train
from tokviz.core.lessons.figure_kinds import FIGURE_FIELDS, compute_figure
from tokviz.core.lessons.figures import (
    FigureContext,
    cross_space,
    digits,
    glitch,
    neighbours,
    oov,
    pieces,
    scripts,
    spans_space,
    step_fields,
    unit_counts,
    utf8_table,
    vocab_curve,
)
from tokviz.core.lessons.files import (
    ACTIONS,
    PANELS,
    PRETRAINED,
    LessonError,
    builtin_lessons,
    caption_fields,
    find_lesson,
    format_caption,
    load_lesson_text,
    parse_lesson,
    pretrained_file,
)
from tokviz.core.registry import make_training
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings
from tokviz.engine.samples import SAMPLES_BY_KEY, sample

GOOD = {"format": "tokviz-lesson", "version": 1, "name": "tiny", "number": 99, "title": "Tiny",
        "corpus": {"text": "low lower lowest"}, "train": {"units": "chars", "split": "whitespace", "merges": 3},
        "panels": ["timeline"], "steps": [{"caption": "Merge {step}: {merge}", "actions": [{"do": "step", "to": 1}]}]}


@pytest.fixture(scope="module")
def lessons():
    return builtin_lessons()


def _text_of(lesson):
    c = lesson.corpus
    return sample(c.value).read() if c.kind == "sample" else c.read()


# -- the lesson files ---------------------------------------------------------------------------


def test_eighteen_lessons_in_course_order(lessons):
    assert [x.number for x in lessons] == list(range(1, 19))
    assert [x.name for x in lessons][:4] == ["chars-words-subwords", "out-of-vocabulary", "bpe-steps", "vocab-size"]
    assert [x.name for x in lessons][12:] == ["wordpiece", "unigram", "superbpe", "boundless", "parity-aware",
                                              "dropout"]
    assert len({x.name for x in lessons}) == 18


def test_the_menu_headings_are_those_of_the_lessons_read_whole(lessons):
    from tokviz.core.lessons.files import lesson_headings

    assert [(h.name, h.number, h.title, h.summary, h.label) for h in lesson_headings()] == [
        (x.name, x.number, x.title, x.summary, x.label) for x in lessons]


def test_lessons_train_each_algorithm(lessons):
    by_name = {x.name: x for x in lessons}
    assert type(by_name["wordpiece"].train) is WordPieceSettings and by_name["wordpiece"].train.merges == 12
    assert type(by_name["unigram"].train) is UnigramSettings and by_name["unigram"].train.vocab_size == 300
    assert type(by_name["bpe-steps"].train) is TrainSettings
    bad = copy.deepcopy(GOOD)
    bad["train"] = {"algorithm": "sentencepiece"}
    with pytest.raises(LessonError, match="lesson <lesson>: train: unknown algorithm 'sentencepiece'"):
        parse_lesson(bad)


HUGS = "hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5  # Hugging Face's course corpus


def test_wordpiece_figure_score_beats_count_and_traces_greedy_matches():
    tl = make_training(WordPieceSettings(merges=12, min_count=1), texts=[HUGS]).run()
    params = {"kind": "wordpiece", "word": "bugs", "unk_word": "mug"}
    fig, f = compute_figure(params, FigureContext(timeline=tl, step=1, params=params))
    # ##g ##s: 5 / (20 * 5) = 0.05 beats ##u ##g: 20 / (36 * 20) = 0.028, seen four times as often
    assert (f["winner"], f["winner_count"], f["winner_score"]) == ("‘##g’ + ‘##s’", 5, "0.0500")
    assert (f["frequent"], f["frequent_count"]) == ("‘##u’ + ‘##g’", 20)
    assert fig.rows[0] == ("★", "##g + ##s", "5", "20 · 5", "0.0500")
    assert f["word_pieces"] == "b ##u ##gs" and f["unk_pieces"] == "[UNK]"
    assert f["unk_reason"] == "no piece matches at character 0"
    _, f = compute_figure(params, FigureContext(timeline=tl, step=tl.n_merges, params=params))
    assert (f["word_pieces"], f["word_tried"]) == ("bu ##gs", "bugs, bug")  # longest first
    assert step_fields(tl, 2)["merge"] == "‘h’ + ‘##u’ → ‘hu’ (count 15)"


def test_unigram_figure_rounds_nbest_and_samples():
    tl = make_training(UnigramSettings(vocab_size=300), texts=[sample("english-prose").read()]).run()
    params = {"kind": "unigram", "word": "sitting", "alpha": 0.2}
    fig, f = compute_figure(params, FigureContext(timeline=tl, step=4, params=params))
    assert [r[0] for r in fig.rows] == ["0", "1", "2", "3", "4"]
    assert [int(r[1]) for r in fig.rows] == [r.vocab_size for r in tl.steps[:5]]  # shrinking every round
    assert all(int(a[1]) > int(b[1]) for a, b in zip(fig.rows, fig.rows[1:]))
    assert f["seed_size"] == tl.steps[0].vocab_size and f["vocab_size"] == tl.steps[4].vocab_size
    best = tl.tokenizer().nbest("sitting", 2, step=4)
    assert f["best"] == " ".join(best[0].pieces) and f["second"] == " ".join(best[1].pieces)
    assert float(f["best_prob"].rstrip("%")) > float(f["second_prob"].rstrip("%"))
    assert f["n_segmentations"] > 2 and len(f["samples"].split(" · ")) == 4
    fields = step_fields(tl, 4)
    assert fields["step"] == 4 and fields["n_steps"] == tl.last_step and fields["vocab"] == tl.steps[4].vocab_size
    assert step_fields(tl, 0)["merge"] == "the seed vocabulary"


def _method_lesson(lessons, name: str):
    """A method lesson's timeline, trained as the lesson trains it, and a figure function at step k."""
    lesson = find_lesson(name, lessons)
    corpus = _text_of(lesson)
    tl = make_training(lesson.train, texts=[corpus]).run()

    def at(k: int):
        params = dict(lesson.figure)
        return compute_figure(params, FigureContext(text=lesson.text, corpus=corpus, timeline=tl, step=k,
                                                    params=params))
    return tl, at


def test_superbpe_figure_bytes_per_token_and_the_first_superwords(lessons):
    _, at = _method_lesson(lessons, "superbpe")
    fig, f = at(240)
    assert f["transition"] == 240 and f["stage"] == "one" and f["superwords"] == 0
    assert not any(" " in p[1:] for p in f["pieces"].replace("␣", " ").split("|"))  # stage one: no token crosses a word
    fig, f = at(245)
    assert (f["first_superword_step"], f["first_superword"]) == (241, "‘,␣and’") and f["superwords"] == 3
    assert "␣of␣the" in f["pieces"].split("|")
    assert fig.kind == "curve" and not fig.log_x and fig.marker == 245 and fig.x[0] == 0
    assert float(f["bpt_now"]) > float(f["bpt_transition"]) > float(f["bpt_start"]) == 1.0


def test_supermerges_figure_lists_the_supermerges_so_far(lessons):
    tl, at = _method_lesson(lessons, "boundless")
    _, f = at(135)
    assert f["kind"] == "merge" and f["supermerges"] == 0 and f["inside"] == 135
    fig, f = at(136)
    assert f["kind"] == "supermerge" and f["note"] == tl.step_note(135)
    assert fig.rows == (("136", "‘␣of’ + ‘␣the’", "‘␣of␣the’", "11"),)
    fig, f = at(300)
    assert f["supermerges"] == tl.n_supermerges == 12 and f["inside"] == 288 and len(fig.rows) == 8


def test_parity_figure_tokens_per_language_fairer_than_plain_bpe(lessons):
    tl, at = _method_lesson(lessons, "parity-aware")
    fig, f = at(1)
    assert fig.labels == tl.documents and fig.values == tuple(float(t) for t in tl.parity_at(1).tokens)
    assert f["served"] == f["costliest_start"] == "हिन्दी" and (f["served_before"], f["served_after"]) == (522, 400)
    _, f = at(120)
    assert float(f["gini_now"]) < 0.01 < float(f["bpe_gini"])  # plain BPE leaves Hindi and Korean costlier
    assert f["bpe_costliest"] == "हिन्दी" and f["bpe_most"] > f["most_now"]


def test_dropout_figure_samples_one_word(lessons):
    tl, at = _method_lesson(lessons, "dropout")
    fig, f = at(tl.n_merges)
    assert f["usual"] == "␣Rabbit" and fig.rows[0][0] == "␣Rabbit"  # usually whole, sometimes cut
    assert sum(int(r[1]) for r in fig.rows) <= f["samples"] == 200 and len(fig.rows) == f["n_segmentations"]
    assert all(r[0].replace("|", "") == "␣Rabbit" for r in fig.rows)  # every cut spells the word
    assert f["high_n_segmentations"] > f["n_segmentations"]
    assert int(f["high_usual_share"].rstrip("%")) < int(f["usual_share"].rstrip("%"))


def test_every_lesson_is_complete_and_refers_to_things_that_exist(lessons):
    for lesson in lessons:
        assert lesson.title and lesson.summary and lesson.n_steps >= 2, lesson.name
        assert lesson.panels and set(lesson.panels) <= set(PANELS), lesson.name
        assert lesson.panels[-1] == "lesson" or "lesson" in lesson.panels, lesson.name
        if lesson.corpus is not None:
            if lesson.corpus.kind == "sample":
                assert lesson.corpus.value in SAMPLES_BY_KEY
            assert _text_of(lesson).strip()
        if lesson.train is not None:
            assert lesson.train.validate() is lesson.train
        for step in lesson.steps:
            assert step.caption.strip() and len(step.caption) < 400, (lesson.name, step.caption)
            assert {a.do for a in step.actions} <= set(ACTIONS)


def test_find_lesson_by_name_or_number(lessons):
    assert find_lesson("bpe-steps", lessons).number == 3
    assert find_lesson("3", lessons).name == "bpe-steps"
    with pytest.raises(LessonError, match="unknown lesson 'nope'; choose one of chars-words-subwords"):
        find_lesson("nope", lessons)


@pytest.mark.parametrize("edit, field, problem", [
    (lambda d: d.pop("steps"), "top level", "missing field 'steps'"),
    (lambda d: d.update(format="other"), "format", "expected 'tokviz-lesson'"),
    (lambda d: d.update(version=7), "version", "newer than this tokviz reads"),
    (lambda d: d.update(colour="red"), "top level", "unknown field(s) colour"),
    (lambda d: d.update(name="Bad Name"), "name", "lower-case"),
    (lambda d: d.update(panels=["tokens"]), "panels[0]", "unknown panel 'tokens'"),
    (lambda d: d.update(train={"units": "words"}), "train", "unknown units 'words'"),
    (lambda d: d.update(corpus={"text": "a", "sample": "b"}), "corpus", "exactly one of"),
    (lambda d: d.pop("corpus"), "train", "training needs a 'corpus'"),
    (lambda d: d["steps"][0].update(caption="{nonsense}"), "steps[0].caption", "unknown field(s) nonsense"),
    (lambda d: d["steps"][0].update(caption="{unclosed"), "steps[0].caption", "bad {field}"),
    (lambda d: d["steps"][0]["actions"].append({"do": "dance"}), "steps[0].actions[1].do", "unknown action 'dance'"),
    (lambda d: d["steps"][0]["actions"].append({"do": "step"}), "steps[0].actions[1]", "missing field 'to'"),
    (lambda d: d["steps"][0]["actions"].append({"do": "step", "to": "first"}), "steps[0].actions[1].to",
     "a step number"),
    (lambda d: d["steps"][0]["actions"].append({"do": "tab", "name": "x"}), "steps[0].actions[1].name",
     "'x' is not one of compare"),
    (lambda d: d["steps"][0]["actions"].append({"do": "view", "bos": "yes"}), "steps[0].actions[1].bos",
     "expected bool, got str"),
    (lambda d: d["steps"][0]["actions"].append({"do": "panel", "id": "x", "speed": 2}), "steps[0].actions[1]",
     "unknown argument(s) speed"),
    (lambda d: d["steps"][0]["actions"].append({"do": "tokenizer", "name": "llama"}),
     "steps[0].actions[1].name", "unknown tokenizer 'llama'"),
    (lambda d: d.update(figure={"kind": "pie"}), "figure.kind", "unknown figure 'pie'"),
    (lambda d: d["steps"][0]["actions"].append({"do": "tab", "name": "samples", "dropout": 1.5}),
     "steps[0].actions[1].dropout", "a probability from 0 to 1"),
    (lambda d: d.update(screenshot_step=5), "screenshot_step", "not a step index"),
    (lambda d: d.update(workspace="cinema"), "workspace", "unknown workspace 'cinema'; choose from learn"),
    (lambda d: d.update(workspace=3), "workspace", "expected str"),
    (lambda d: d.update(figure={"kind": "table", "header": ["a", "b"], "rows": [["1"]]}), "figure.rows[0]",
     "a list of 2 strings"),
])
def test_a_broken_lesson_names_file_and_field(edit, field, problem):
    data = copy.deepcopy(GOOD)
    edit(data)
    with pytest.raises(LessonError) as info:
        parse_lesson(data, "broken.json")
    message = str(info.value)
    assert message.startswith(f"lesson broken.json: {field}: "), message
    assert problem in message


def test_invalid_json_says_where():
    with pytest.raises(LessonError, match=r"lesson x\.json: not valid JSON \(line 2, column 1"):
        load_lesson_text('{"format": "tokviz-lesson",\n}', "x.json")


def test_a_good_lesson_parses_with_typed_actions():
    lesson = parse_lesson(copy.deepcopy(GOOD), "good.json")
    assert lesson.train == TrainSettings(units="chars", split="whitespace", merges=3)
    assert lesson.steps[0].actions[0].do == "step" and lesson.steps[0].actions[0].get("to") == 1
    train_step = parse_lesson({**GOOD, "steps": [{"caption": "x", "actions": [
        {"do": "train", "settings": {"merges": 2}, "corpus": {"text": "new newer"}}]}]}).steps[0].actions[0]
    assert train_step.get("settings").merges == 2 and train_step.get("corpus").read() == "new newer"


def test_caption_fields_and_formatting():
    assert caption_fields("Merge {step}: {merge} {{literal}}") == {"step", "merge"}
    assert format_caption("Merge {step}: {merge}", {"step": 3}) == "Merge 3: …"
    for kind, fields in FIGURE_FIELDS.items():
        assert isinstance(fields, frozenset), kind


def test_core_lesson_modules_load_no_qt(tmp_path):
    assert qt_modules_loaded("tokviz.core.lessons.files", "tokviz.core.lessons.figures", cwd=tmp_path) == []


# -- the numbers -------------------------------------------------------------------------------


def test_lesson1_counts_by_hand(lessons):
    lesson = find_lesson("chars-words-subwords", lessons)
    tl = train(lesson.train, texts=[_text_of(lesson)])
    fig, f = unit_counts(FigureContext(text=lesson.text, timeline=tl))
    # "the cat sat on the mat": 22 characters (17 letters + 5 spaces), 6 words
    assert (f["chars"], f["words"]) == (22, 6)
    assert f["subword_pieces"] == "the|␣cat|␣|s|at|␣on|␣the|␣m|at"
    assert f["subwords"] == 9
    assert fig.kind == "bars" and fig.values == (22, 6, 9)


def test_lesson2_out_of_vocabulary(lessons):
    lesson = find_lesson("out-of-vocabulary", lessons)
    tl = train(lesson.train, texts=[_text_of(lesson)])
    fig, f = oov(FigureContext(text=lesson.text, corpus=_text_of(lesson), timeline=tl))
    # the corpus has "the" but not "dog", "jumped", "over", "cats!" (only "cats."), nor the emoji
    assert (f["word_tokens"], f["word_unk"]) == (7, 5)
    assert f["word_lost"] == "dog, jumped, over, cats!, 🐶"
    assert f["char_lost"] == "g, j, u, p, v, !, 🐶" and f["char_unk"] == 7
    assert f["bpe_round_trip"] == "yes"
    assert [r[3][:1] for r in fig.rows] == ["✗", "✗", "✓"]


def test_lesson3_merges_named_with_counts(lessons):
    lesson = find_lesson("bpe-steps", lessons)
    tl = train(lesson.train, texts=[_text_of(lesson)])
    # low x5, lower x2, lowest x3, newest x6, widest x3: "e s" occurs 3 + 6 + 3 = 12 times
    assert step_fields(tl, 1)["merge"] == "‘e’ + ‘s’ → ‘es’ (count 12)"
    assert step_fields(tl, 3)["merge"] == "‘est’ + ‘_’ → ‘est_’ (count 12)"
    assert step_fields(tl, 0)["corpus_tokens"] == "116"  # 4*5 + 6*2 + 7*3 + 7*6 + 7*3 symbols with '_'
    fig, _ = compute_figure(lesson.figure, FigureContext(corpus=_text_of(lesson), timeline=tl, step=9))
    rows = {r[0]: r[2] for r in fig.rows}
    assert rows["newest"] == "newest_" and rows["low"] == "low_" and rows["widest"] == "w|i|d|est_"
    variant = next(a for s in lesson.steps for a in s.actions if a.do == "train")
    tl2 = train(variant.get("settings"), texts=[variant.get("corpus").read()])
    assert step_fields(tl2, 1)["merge"] == "‘n’ + ‘e’ → ‘ne’ (count 9)"  # new x3 + newer x2 + newest x4


def test_lesson4_curve_from_one_run_is_monotone(lessons):
    lesson = find_lesson("vocab-size", lessons)
    tl = train(lesson.train, texts=[_text_of(lesson)])
    assert tl.vocab_size == 5000
    base = tl.vocab_size - tl.n_merges
    fig, f = vocab_curve(FigureContext(text=lesson.text, timeline=tl, step=1000 - base, params=lesson.figure))
    assert fig.x[0] == base and fig.x[-1] == 5000
    assert fig.y[0] == len(lesson.text)  # no merges: one token per character
    assert all(a >= b for a, b in zip(fig.y, fig.y[1:])) and fig.y[-1] < fig.y[0] / 3
    assert list(fig.x) == sorted(set(fig.x))
    tok = tl.tokenizer()
    for x, y in zip(fig.x[::7], fig.y[::7]):
        assert len(tok.encode_ordinary(lesson.text, step=x - base).ids) == y
    assert abs(fig.x[fig.marker] - 1000) <= 100
    assert f["base"] == base and f["max_vocab"] == 5000


def test_lesson5_utf8_bytes():
    tl = train(TrainSettings(vocab_size=300), texts=[sample("multilingual").read()])
    fig, f = utf8_table(FigureContext(text="café 👋", timeline=tl, step=0, params={"chars": "aé東👋"}))
    assert [r[3] for r in fig.rows] == ["1", "2", "3", "4"]
    assert fig.rows[1][2] == "C3 A9" and fig.rows[3][1] == "U+1F44B"
    assert (f["chars"], f["bytes"], f["tokens"]) == (6, 10, 10)
    assert f["partial"] == 6  # step 0: the 2 bytes of é and the 4 of 👋 are each a partial token


def test_lesson6_what_crosses_a_space():
    assert spans_space(b"e t") and spans_space(b"at ") and not spans_space(b" the") and not spans_space(b"   ")
    fig, f = cross_space(FigureContext(corpus=sample("cat-sat").read(), params={"merges": 40}))
    assert f["none_cross"] > 5 and f["gpt2_cross"] == 0
    assert "␣" in f["none_examples"] and f["gpt2_examples"] == "none"
    assert [r[0] for r in fig.rows] == ["none", "gpt2"]


def test_lesson7_batch_table_names_special_ids():
    from tokviz.core import make_batch

    b = make_batch([[5, 6, 7], [8]], pad_id=12, bos_id=10, eos_id=11, pad_side="left")
    fig, f = compute_figure({"kind": "batch"}, FigureContext(batch=(b, ["abc", "d"], 10, 11, 12)))
    assert fig.rows == (("abc", "BOS 5 6 7 EOS", "1 1 1 1 1"), ("d", "PAD PAD BOS 8 EOS", "0 0 1 1 1"))
    assert f == {"width": 5, "pad_id": 12}


def test_lesson9_english_costs_least_on_an_english_tokenizer(lessons):
    lesson = find_lesson("languages", lessons)
    tl = train(TrainSettings(vocab_size=400), texts=[sample("english-prose").read()])
    fig, f = scripts(FigureContext(text=lesson.text, timeline=tl))
    assert len(fig.labels) == 14 and f["least_lang"] == "English"
    assert list(fig.values) == sorted(fig.values)
    assert 2.0 <= float(f["most_ratio"]) <= 3.0  # CJK: 3 bytes a character, few merges


def test_lesson11_neighbours_by_cosine():
    tl = train(TrainSettings(vocab_size=270), texts=["the cat sat on the mat " * 20])
    the = tl.tokenizer().encode_ordinary(" the").ids[0]
    vectors = np.random.default_rng(0).normal(size=(tl.vocab_size, 8))
    vectors[5] = vectors[the] * 2  # same direction: cosine 1
    counts = np.ones(tl.vocab_size)
    fig, f = neighbours(FigureContext(timeline=tl, step=tl.n_merges, embedding=(vectors, [str(i) for i in range(tl.vocab_size)], counts),
                                      params={"token": " the"}))
    assert fig.rows[0][1] == "5" and fig.rows[0][2] == "+1.00"
    assert f["token"] == "␣the" and f["nearest"].startswith("‘5’")
    assert neighbours(FigureContext(params={"token": " the"}))[0].rows == ()


def test_pretrained_files_are_found_in_the_named_folder(tmp_path, monkeypatch):
    import tokviz.core.lessons.files as lessons_mod

    monkeypatch.setattr(lessons_mod, "_CHECKOUT_VOCAB", tmp_path / "nowhere")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TOKVIZ_VOCAB_DIR", raising=False)
    assert pretrained_file("gpt2") is None
    (tmp_path / "vocab").mkdir()
    (tmp_path / "vocab" / "cl100k_base.tiktoken").write_text("x")
    monkeypatch.setenv("TOKVIZ_VOCAB_DIR", str(tmp_path / "vocab"))
    assert pretrained_file("cl100k_base") is None  # a file of that name with other contents is not taken
    (tmp_path / "vocab" / "cl100k_base.tiktoken").write_bytes(
        shared_file("vocab", "tiktoken", "cl100k_base.tiktoken").read_bytes())
    assert pretrained_file("cl100k_base") == tmp_path / "vocab" / "cl100k_base.tiktoken"
    assert pretrained_file("gpt2") is None


def test_missing_tokenizers_say_which_file():
    fig, f = digits(FigureContext(params={"numbers": ["12"], "focus": "12"}, missing={"gpt2": "r50k_base.tiktoken"}))
    assert fig.rows[0][1] == "needs r50k_base.tiktoken"
    assert f["gpt2_pieces"] == "(needs r50k_base.tiktoken)"


@pytest.fixture(scope="module")
def openai():
    from tokviz.core.loading import load_tokenizer

    return {name: load_tokenizer(shared_file("vocab", "tiktoken", PRETRAINED[name][0])) for name in PRETRAINED}


def test_lesson8_digit_groups(openai, lessons):
    lesson = find_lesson("numbers", lessons)
    fig, f = digits(FigureContext(tokenizers=openai, params=lesson.figure))
    assert f["gpt2_pieces"] == "123|45|67"
    assert f["cl100k_base_pieces"] == f["o200k_base_pieces"] == "123|456|7"  # \p{N}{1,3} from the left
    rows = {r[0]: r[1:] for r in fig.rows}
    assert rows["1999"][0] == "1999" and rows["2024"] == ("20|24", "202|4", "202|4")


def test_lesson10_solidgoldmagikarp(openai, lessons):
    lesson = find_lesson("glitch-tokens", lessons)
    _, f = glitch(FigureContext(tokenizers=openai, params=lesson.figure))
    assert f["gpt2_ids_0"] == "43453"  # /work/shared/README.md's known id
    assert f["gpt2_count_1"] == 2 and f["gpt2_pieces_1"] == "Solid|GoldMagikarp"
    assert f["cl100k_base_pieces_0"] == "␣Solid|Gold|Mag|ik|arp"
    assert pieces(openai["gpt2"], " SolidGoldMagikarp") == "␣SolidGoldMagikarp"


def test_lesson_files_are_valid_json_with_a_header(lessons):
    from importlib.resources import files

    for f in (files("tokviz.resources") / "lessons").iterdir():
        if f.name.endswith(".json"):
            data = json.loads(f.read_text(encoding="utf-8"))
            assert data["format"] == "tokviz-lesson" and data["version"] == 1
            assert f.name == f"{data['number']:02d}-{data['name']}.json"


def test_a_lesson_names_one_of_the_windows_workspaces(lessons):
    """The workspaces a lesson file may name are the window's (View > Workspace); the lessons told
    in the token view's tabs and a figure show them in Inspect (the token view a column's whole
    height, the lesson and its figure beside it); those about watching a training stay in Learn."""
    from tokviz.app.workspaces.layouts import WORKSPACES as LAYOUTS
    from tokviz.core.lessons.files import WORKSPACES

    assert WORKSPACES == tuple(w.key for w in LAYOUTS)
    shown = {lesson.name for lesson in lessons if lesson.workspace == "inspect"}
    assert shown == {"out-of-vocabulary", "vocab-size", "bytes-utf8", "special-tokens", "numbers", "languages",
                     "glitch-tokens", "dropout"}
    assert all(lesson.panels[0] == "token_view" for lesson in lessons if lesson.name in shown)
    assert all(lesson.workspace in (None, "inspect") for lesson in lessons)
    assert parse_lesson({**GOOD, "workspace": "compare"}, "x.json").workspace == "compare"
