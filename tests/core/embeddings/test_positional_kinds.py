"""Positional encodings as objects of one protocol: the registry, what each kind declares, and that
nothing outside the registry switches on a kind's name."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from tests.structure import algorithm_switches, load_modules
from tokviz.core import SettingsError
from tokviz.core.embeddings import alibi, learned, positional_encoding, positional_kinds, sinusoidal
from tokviz.core.embeddings.positional import (
    ENCODINGS,
    KINDS,
    TRAINED,
    VIEW_MATRIX,
    VIEW_SIMILARITY,
    VIEWS,
    PositionalEncoding,
    PositionalParams,
    encoding,
    positional_matrix,
)

KEYS = [e.key for e in ENCODINGS]


@pytest.mark.parametrize("module", [alibi, learned, positional_encoding, positional_kinds, sinusoidal])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_registry_lists_each_kind_once_in_menu_order():
    assert KEYS == ["sinusoidal", "learned", "rope", "alibi", "trained"]  # the strings files store
    assert KINDS == ("sinusoidal", "learned", "rope", "alibi")  # the trained table's kind needs a table
    assert all(isinstance(e, PositionalEncoding) and encoding(e.key) is e for e in ENCODINGS)
    with pytest.raises(SettingsError, match="unknown positional encoding 'Rope'; choose one of sinusoidal, "):
        encoding("Rope")
    with pytest.raises(SettingsError, match="unknown positional encoding None"):
        encoding(None)


@pytest.mark.parametrize("key", KEYS)
def test_every_offered_view_has_label_titles_and_scale(key):
    enc = encoding(key)
    assert enc.views and enc.views[0] == VIEW_MATRIX and set(enc.views) <= set(VIEWS)
    labels = [enc.view_label(v) for v in enc.views]
    assert len(set(labels)) == len(labels) and all(labels)
    for view in enc.views:
        x, y = enc.axis_titles(view)
        assert x and y
        scale = enc.colour_scale(view, "cosine")
        assert scale.levels is None or scale.levels[0] < scale.levels[1]
    assert set(enc.qk_views) <= set(enc.views)


@pytest.mark.parametrize("key, cell", [("sinusoidal", (7, 5)), ("rope", (100, 0)), ("rope", (9, 3)),
                                       ("alibi", (9, 2)), ("learned", (12, 5))])
def test_formula_value_is_the_matrix_value(key, cell):
    """What a cell's formula says it is, its matrix holds (ALiBi: query x key; RoPE: wrapped)."""
    p = PositionalParams(d=16, n_pos=128, seed=4, n_heads=8, head=2)
    enc = encoding(key)
    text = enc.formula(*cell, p)
    shown = text.split(" (")[0].split("≡")[-1].rsplit("= ", 1)[-1].removesuffix(" rad")
    assert float(shown) == pytest.approx(float(positional_matrix(key, p)[cell]), abs=1e-4)


def test_trained_kind_shows_the_table_it_is_given():
    table = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    assert TRAINED.table is None and TRAINED.source_note() == ""
    with pytest.raises(SettingsError, match="train embeddings with Positions > 0 first"):
        TRAINED.matrix(PositionalParams())
    enc = TRAINED.with_table(table)
    assert enc.key == "trained" and TRAINED.table is None  # the registry's object stays empty
    assert np.array_equal(enc.matrix(PositionalParams(n_pos=10)), table)  # no more rows than it has
    assert np.array_equal(enc.matrix(PositionalParams(n_pos=2), positions=np.array([1])), table[[1]])
    assert enc.similarity(PositionalParams(n_pos=2))[1, 1] == pytest.approx(9 + 16 + 25)
    assert enc.formula(2, 1, PositionalParams()) == (
        "P[2, 1] = 7.0000 (learned by the embedding model: a token at index t of its paragraph adds row t mod 4)")
    with pytest.raises(SettingsError, match="dimension must be between 0 and 2"):
        enc.formula(0, 3, PositionalParams())


def test_encodings_that_add_no_vector_have_no_similarity():
    p = PositionalParams(d=8, n_pos=4)
    for key, instead in (("rope", "rope_score_matrix"), ("alibi", "alibi_bias")):
        with pytest.raises(SettingsError, match=f"{key} adds no vector to the tokens.*show {instead} instead"):
            encoding(key).similarity(p)
    scores = encoding("rope").pair_matrix(p)  # its positions x positions view: query-key scores
    assert scores.shape == (4, 4) and np.allclose(np.diag(scores), 8.0)
    assert VIEW_SIMILARITY in encoding("rope").qk_views


def test_no_module_switches_on_a_positional_kind():
    """The engine, the panels and the kinds ask an encoding; only the registry maps keys to objects."""
    modules = {name: m for name, m in load_modules().items()
               if name.startswith(("tokviz.core.embeddings", "tokviz.engine.heatmaps", "tokviz.panels.heatmaps",
                                   "tokviz.core.lessons", "tokviz.app.classroom"))
               and name != "tokviz.core.embeddings.positional_kinds"}
    assert len(modules) > 10
    assert algorithm_switches(modules, names=set(KEYS)) == []
