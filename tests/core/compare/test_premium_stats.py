"""Premiums as the chart draws them (sorted per model, spread per script) and model names on screen."""

from __future__ import annotations

import numpy as np
import pytest

from tokviz.core.compare import Document, ModelResult
from tokviz.core.compare.premium_stats import premium_order, script_premiums, spread
from tokviz.core.compare.report import short_labels

DOCS = [Document(1, "en", 0, 1, "Latin"), Document(2, "ru", 1, 2, "Cyrillic"), Document(3, "fr", 2, 3, "Latin"),
        Document(4, "de", 3, 4, "Latin"), Document(5, "uk", 4, 5, "Cyrillic"), Document(6, "ja", 5, 6, "Han")]


def test_premium_order_sorts_the_defined_premiums_cheapest_first():
    prem = (1.0, 3.5, None, 1.2, 2.0, 1.0)
    order = premium_order(prem)
    assert order == [0, 5, 3, 4, 1]  # ties in document order, None left out
    assert [prem[i] for i in order] == sorted(p for p in prem if p is not None)


def test_spread_is_numpys_percentiles():
    values = [2.5, 0.8, 1.1, 7.0, 1.9, 3.3, 1.0]
    s = spread(values)
    assert (s.n, s.low, s.high) == (7, 0.8, 7.0)
    assert (s.q1, s.median, s.q3) == tuple(np.percentile(values, [25, 50, 75]))
    assert spread([]) is None


def test_script_premiums_group_the_documents_of_each_script():
    a = ModelResult("a", premiums=(1.0, 2.0, 1.5, 1.1, 4.0, 9.0))
    b = ModelResult("b", premiums=(1.0, 1.2, 1.4, 1.3, 1.6, 2.0))
    rows = script_premiums([a, b], DOCS)
    assert [r.script for r in rows] == ["Latin", "Cyrillic", "Han"]  # by a's median, cheapest first
    latin = rows[0]
    assert latin.documents == (0, 2, 3)
    assert latin.spreads[0].median == pytest.approx(1.1) and latin.spreads[1].median == pytest.approx(1.3)
    assert (latin.spreads[0].low, latin.spreads[0].high) == (1.0, 1.5)
    assert rows[1].spreads[0].median == pytest.approx(3.0) and rows[2].spreads[1].n == 1


def test_script_premiums_of_a_comparison_still_arriving():
    """A model with premiums for the first documents only, or None ones, counts what it has."""
    partial = ModelResult("p", premiums=(1.0, None, 2.0))
    rows = {r.script: r for r in script_premiums([partial], DOCS)}
    assert rows["Latin"].spreads[0].n == 2 and rows["Latin"].spreads[0].median == pytest.approx(1.5)
    assert rows["Cyrillic"].spreads[0] is None and rows["Han"].spreads[0] is None
    assert list(rows) == ["Latin", "Cyrillic", "Han"]  # scripts with no premium yet last, by name


def test_models_are_named_by_their_folder_not_their_generic_file():
    assert short_labels(["/models/gpt2/tokenizer.json"]) == ["gpt2"]
    assert short_labels(["/m/gpt2/tokenizer.json", "/v/cl100k_base.tiktoken", "/m/mistral/tokenizer.model"]) == [
        "gpt2", "cl100k_base", "mistral"]
    assert short_labels(["/a/gpt2/tokenizer.json", "/b/gpt2/tokenizer.json"]) == ["a/gpt2", "b/gpt2"]
    assert short_labels(["gpt2/tokenizer.json@100", "gpt2/tokenizer.json"]) == ["gpt2@100", "gpt2"]
    assert short_labels(["m10.json", "m60.json"]) == ["m10.json", "m60.json"]  # tokviz models keep their name
