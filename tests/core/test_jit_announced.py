"""`jit.announced`: the first compilation of a kernel in the block is announced, once."""

from __future__ import annotations

import pytest

from tokviz.core import jit


@pytest.fixture
def announcers(monkeypatch):
    said: list[str] = []
    monkeypatch.setattr(jit, "_announcers", [])
    jit.announce_compiling_to(lambda: said.append("compiling"))
    return said


def test_a_compilation_in_the_block_is_announced_once(announcers):
    if not jit.enabled():
        pytest.skip("numba is not installed or the kernels are off")
    from numba import njit

    @njit  # not cached: this call compiles
    def add(a, b):
        return a + b

    @njit
    def sub(a, b):
        return a - b

    with jit.announced():
        assert add(2, 3) == 5
        assert sub(2, 3) == -1
    assert announcers == ["compiling"]
    with jit.announced():
        assert add(4, 5) == 9  # compiled already: nothing to say
    assert announcers == ["compiling"]


def test_without_announcers_the_block_does_not_import_numba(monkeypatch):
    monkeypatch.setattr(jit, "_announcers", [])
    monkeypatch.setattr(jit, "enabled", lambda: pytest.fail("numba was looked for"))
    with jit.announced():
        pass
