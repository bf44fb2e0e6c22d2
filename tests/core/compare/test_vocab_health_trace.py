"""Vocabulary comparison, vocabulary health and pipeline traces for every tokenizer family."""

from __future__ import annotations

import pytest

from tests.conftest import shared_file
from tokviz.core.compare.health import health_csv, health_markdown, vocabulary_health
from tokviz.core.compare.trace import first_divergence, trace_pipeline
from tokviz.core.compare.vocab import compare_vocabularies, vocabulary_at
from tokviz.core.registry import make_training, settings_from_json

TEXT = "the cat sat on the mat, the rat sat on the hat; low lower lowest newer wider " * 8


def trained(algorithm: str, size: int):
    return make_training(settings_from_json({"algorithm": algorithm, "vocab_size": size}), texts=[TEXT]).run()


@pytest.fixture(scope="module", params=[("bpe", 300), ("wordpiece", 70), ("unigram", 60)])
def timeline(request):
    return trained(*request.param)


def test_vocabulary_at_a_step_leaves_out_later_merges():
    tl = trained("bpe", 300)
    full, early = vocabulary_at(tl), vocabulary_at(tl, 3)
    assert len(full) - len(early) == tl.n_steps - 3
    made_later = {tl.steps[k].token for k in range(3, tl.n_steps)}
    assert not made_later & set(early) and made_later <= set(full)


def test_a_vocabulary_compared_with_itself_at_a_step():
    tl = trained("bpe", 300)
    c = compare_vocabularies(tl, tl, step_b=10)
    assert not c.only_b and len(c.only_a) == tl.n_steps - 10
    assert c.jaccard == len(c.shared) / (len(c.shared) + len(c.only_a))
    assert all(t.rank_a == t.rank_b for t in c.shared)
    assert sum(c.lengths_a.values()) == len(c.shared) + len(c.only_a)


def test_health_of_every_family_is_consistent(timeline):
    report = vocabulary_health(timeline, TEXT)
    assert sum(report.totals.values()) == report.n_tokens
    tok = timeline.tokenizer()
    for row in report.rows:
        assert row.category in ("ok", "unreachable", "undecodable", "special")
        if row.category == "unreachable":
            assert tok.encode_ids(row.token.decode("utf-8")) != [row.id]
    used = tok.encode_ids(TEXT)
    for row in report.rows:
        assert row.count == used.count(row.id)
    assert health_csv(report).count("\n") == len(report.rows) + 1
    assert "| id | token |" in health_markdown(report)


def test_health_finds_gpt2_partial_utf8_and_counts_inside_merges():
    from tokviz.core.loading import open_timeline

    tl = open_timeline(str(shared_file("vocab", "tiktoken", "r50k_base.tiktoken")))
    text = "hello\nhello\nhello"
    report = vocabulary_health(tl, text)
    assert report.totals["undecodable"] > 0 and report.totals["special"] == 1
    hello = tl.tokenizer().encode_ids("hello")
    assert len(hello) == 1 and tl.tokenizer().encode_ids(text).count(hello[0]) == 3
    rows = {r.id: r for r in report.rows}
    # "hello" is a token three times: each part of its merge tree sits inside it three times
    parts = tl.merge_tree(hello[0]).children
    assert parts and all(rows[p.id].inside == 3 for p in parts if p.id in rows)
    assert any(p.id in rows and "mostly inside" in rows[p.id].flags for p in parts)


def test_traces_of_every_family_end_in_their_ids(timeline):
    t = trace_pipeline(timeline, "the lowest hat")
    assert t.stages["ids"] == tuple(str(i) for i in timeline.tokenizer().encode_ordinary("the lowest hat").ids)
    assert len(t.stages["segmentation"]) == len(t.stages["pieces"]) > 0
    assert first_divergence([t, t]) is None


def test_first_divergence_names_the_earliest_stage():
    bpe = trained("bpe", 300)
    a = trace_pipeline(bpe, "the lowest hat", step=0)
    b = trace_pipeline(bpe, "the lowest hat")
    assert first_divergence([a, b]) == "tokens"
