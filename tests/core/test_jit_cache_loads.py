"""numba's cached kernels load without the refresh of its compiler's contexts
(`tokviz.core.jit_cache_loads`): the same results, the refresh left to real compilations, and
numba's own load whenever the quick one fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from contextlib import nullcontext

import pytest

from tokviz.core import jit
from tokviz.core.jit_cache_loads import MARK, quick_loader, quicken


class _Cache:
    """What `quick_loader` uses of numba's `Cache`."""

    def __init__(self, fail: bool = False) -> None:
        self.fail, self.loads = fail, 0

    def _guard_against_spurious_io_errors(self):
        return nullcontext()

    def _load_overload(self, sig, target_context):
        self.loads += 1
        if self.fail:
            raise RuntimeError("needs the refresh")
        return ("loaded", sig)


def _original(calls: list):
    def load_overload(self, sig, target_context):
        calls.append("refresh")
        return ("numba's own", sig)

    return load_overload


def test_a_quick_load_readies_the_runtime_and_never_refreshes():
    calls, ready = [], []
    load = quick_loader(_original(calls), ready.append)
    assert load(_Cache(), "sig", "context") == ("loaded", "sig")
    assert ready == ["context"] and calls == []


@pytest.mark.parametrize("where", ["runtime", "load"])
def test_a_failed_quick_load_is_made_again_by_numbas_own_method(where):
    calls = []

    def initialize(_context):
        if where == "runtime":
            raise RuntimeError("no runtime")

    cache = _Cache(fail=where == "load")
    assert quick_loader(_original(calls), initialize)(cache, "sig", "context") == ("numba's own", "sig")
    assert calls == ["refresh"]


@pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")
def test_numba_gets_the_quick_load_once():
    from numba.core import caching

    first = caching.Cache.load_overload
    assert getattr(first, MARK, False)  # `jit.enabled()` put it in place
    assert quicken() and caching.Cache.load_overload is first  # never wrapped twice


@pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")
def test_a_numba_without_the_parts_it_relies_on_is_left_as_it_is(monkeypatch):
    from numba.core import caching

    class Cache:  # a numba whose cache loads some other way
        def load_overload(self, sig, target_context):
            return "its own"

    monkeypatch.setattr(caching, "Cache", Cache)
    assert not quicken()
    assert Cache.load_overload(None, "sig", "context") == "its own" and not hasattr(Cache.load_overload, MARK)


KERNELS = '''
import numpy as np
from numba import njit


@njit(cache=True)
def _square(x):
    return x * x


@njit(cache=True)
def squares_plus(a, k):
    out = np.empty(a.size, np.int64)  # allocated by numba's runtime
    for i in range(a.size):
        out[i] = _square(a[i]) + k
    return out
'''

CHILD = '''
import json, sys
from tokviz.core import jit
assert jit.enabled()
import numba.core.base as base
refreshed = []
refresh = base.BaseContext.refresh
base.BaseContext.refresh = lambda self: (refreshed.append(1), refresh(self))[1]
import numpy as np
import tiny_kernels
out = tiny_kernels.squares_plus(np.arange(5, dtype=np.int64), 3)
print(json.dumps({"out": out.tolist(), "refreshed": bool(refreshed),
                  "hits": sum(tiny_kernels.squares_plus.stats.cache_hits.values())}))
'''


@pytest.mark.skipif(not jit.enabled(), reason="numba is not installed or TOKVIZ_JIT=0")
def test_a_kernel_compiled_then_loaded_from_the_cache_without_the_refresh(tmp_path):
    (tmp_path / "tiny_kernels.py").write_text(textwrap.dedent(KERNELS), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]), NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run() -> dict:
        done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    compiled = run()  # a cache miss: numba compiles, refreshing its contexts first
    assert compiled == {"out": [3, 4, 7, 12, 19], "refreshed": True, "hits": 0}
    loaded = run()
    assert loaded == {"out": [3, 4, 7, 12, 19], "refreshed": False, "hits": 1}
