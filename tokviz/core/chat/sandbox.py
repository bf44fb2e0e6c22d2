"""Rendering a chat template exactly as Hugging Face transformers does, inside a sandbox with limits.

The environment is transformers' (``_compile_jinja_template`` in ``utils/chat_template_utils.py``):
Jinja2's `ImmutableSandboxedEnvironment` with ``trim_blocks`` and ``lstrip_blocks``, the
``loopcontrols`` extension, a ``tojson`` filter that keeps non-ASCII text (``ensure_ascii=False``),
the globals ``raise_exception``, ``strftime_now``, ``dict`` and a ``namespace`` that refuses
underscore names. The sandbox keeps a template (untrusted input) away from Python objects, files and
the network: no attribute starting with ``_``, no mutating methods, no loader (``include`` and
``extends`` find nothing).

Jinja has no ``while``, but a template can still run for ages (nested loops over ``range(100000)``,
a macro calling itself, a string doubled in a namespace). As a fast first line that names the
template line, the environment checks a deadline itself: at every iteration of every ``for`` loop
(each loop's iterable is wrapped when the template is compiled) and at every call (macros, methods,
globals); and it caps what could exhaust memory first: the output, strings and lists made by ``*``
and ``+``, values stored in a namespace, and number arguments of calls and filters
(``'x'.ljust(10**12)``). Passing a limit raises `TemplateError` with the template line. Work done
inside one filter or operator (``'%1000000000d' % 1``, ``replace('', ...)``) escapes these checks:
`render_template` is therefore only called inside the template child (`tokviz.core.chat.child`),
whose process has hard limits and can be killed (`tokviz.core.chat.contained`).

transformers' ``{% generation %}...{% endgeneration %}`` block (what ``return_assistant_tokens_mask``
marks) renders its body unchanged; `render_tracked` also returns where each block's output lies,
counted as transformers counts it: from the characters output so far, so a block inside a macro or a
``set`` block is placed where the macro was called, not where its text ends up.

What this leaves out: which template and variables to render (`tokviz.core.chat.folder`), locating
messages in the result (`tokviz.core.chat.render`), the hard limits (`tokviz.core.chat.contained`).
"""

from __future__ import annotations

import contextvars
import functools
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment

from tokviz.core.errors import TokvizError
from tokviz.core.errors import Cancelled

DEFAULT_TIMEOUT = 2.0  # seconds a render may take
MAX_OUTPUT_CHARS = 20_000_000  # a rendered prompt (a 4k-token conversation is ~16k characters)
MAX_VALUE_LEN = 20_000_000  # a string or list a template builds
MAX_NUMBER_ARG = 10_000_000  # an int passed to a call or filter (widths, counts)
MAX_GENERATION_BLOCKS = 100_000  # spans recorded per render (an empty block in a loop adds no output)
_CHECK_EVERY = 64  # loop iterations between clock reads
_GUARD = "tokviz_loop_guard"  # the filter wrapped around every loop's iterable
GENERATION_TAG = re.compile(r"\{\%-?\s*generation\s*-?\%\}")  # transformers' test for a generation block


class TemplateError(TokvizError):
    """A chat template that cannot be compiled or rendered; `line` is the template line (1-based)
    when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.reason = message
        self.line = line
        super().__init__(f"chat template line {line}: {message}" if line else f"chat template: {message}")


class TemplateTimeout(TemplateError):
    """The render passed its time limit."""


class TemplateOutOfMemory(TemplateError):
    """The render asked for more memory than the process may have."""


@dataclass
class _Budget:
    deadline: float
    timeout: float
    should_stop: Callable[[], bool] | None = None
    ticks: int = 0
    size: int = 0  # characters output so far
    generation: list[tuple[int, int]] = field(default_factory=list)  # [start, end) of each generation block


@dataclass(frozen=True)
class Rendered:
    """A template's output and the ``[start, end)`` character span of each ``{% generation %}`` block."""

    text: str
    generation: tuple[tuple[int, int], ...] = ()


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("tokviz_template_budget", default=None)


def _check_clock() -> None:
    budget = _BUDGET.get()
    if budget is None:
        return
    if time.monotonic() > budget.deadline:
        raise TemplateTimeout(f"rendering took longer than {budget.timeout:g} s (a loop that never ends?)")
    if budget.should_stop is not None and budget.should_stop():
        raise Cancelled()


def _check_value(value: object) -> object:
    if isinstance(value, (str, list, tuple, dict)) and len(value) > MAX_VALUE_LEN:
        raise jinja2.exceptions.SecurityError(f"a value of {len(value):,} items is larger than chat templates may build")
    return value


def _check_args(args: tuple, kwargs: Mapping) -> None:
    for a in (*args, *kwargs.values()):
        if isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_NUMBER_ARG:
            raise jinja2.exceptions.SecurityError(f"the number {a} is larger than chat templates may pass")
        _check_value(a)


class _GuardedLoop:
    """A loop's iterable that reads the clock as it is iterated; ``len`` passes through so
    ``loop.length`` costs what it costs without the guard."""

    __slots__ = ("_items",)

    def __init__(self, items: object) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)  # type: ignore[arg-type]  # TypeError: Jinja counts by iterating

    def __iter__(self) -> Iterator:
        budget = _BUDGET.get()
        for item in self._items:  # type: ignore[attr-defined]
            if budget is not None:
                budget.ticks += 1
                if budget.ticks % _CHECK_EVERY == 0:
                    _check_clock()
            yield item


class _GuardedCodeGenerator(CodeGenerator):
    """Wraps the iterable of every ``for`` loop in the guard filter before the code is generated."""

    def visit_Template(self, node: jinja2.nodes.Template, frame=None) -> None:
        for loop in node.find_all(jinja2.nodes.For):
            loop.iter = jinja2.nodes.Filter(loop.iter, _GUARD, [], [], None, None, lineno=loop.lineno)
        super().visit_Template(node, frame)


class _ChatEnvironment(ImmutableSandboxedEnvironment):
    code_generator_class = _GuardedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+"})

    def call(__self, __context, __obj, *args, **kwargs):
        _check_clock()
        _check_args(args, kwargs)
        return _check_value(super().call(__context, __obj, *args, **kwargs))

    def call_binop(self, context, operator: str, left, right):
        if operator == "**" and isinstance(right, int) and abs(right) > 4096 and not isinstance(left, float):
            raise jinja2.exceptions.SecurityError(f"the power {right} is larger than chat templates may compute")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_VALUE_LEN:
                    raise jinja2.exceptions.SecurityError(
                        f"repeating {len(seq):,} items {n:,} times is more than chat templates may build")
        return _check_value(super().call_binop(context, operator, left, right))


# -- transformers' additions ----------------------------------------------------------------


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format):
    return datetime.now().strftime(format)


class _TemplateDict:
    """``dict(...)`` without the class itself (no type hackery from a template)."""

    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """Jinja's namespace refusing underscore names (transformers) and oversized values (tokviz)."""

    def __init__(*args, **kwargs):
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name, value in attrs.items():
            _TemplateNamespace._check(name, value)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name, value):
        _TemplateNamespace._check(name, value)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check(name, value) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}. "
                "Please rename the attribute.")
        _check_clock()
        _check_value(value)


class _GenerationBlock(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: the body as it is, its span recorded in the budget."""

    tags = frozenset({"generation"})

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("generation_block"), [], [], body).set_lineno(lineno)

    def generation_block(self, caller) -> str:
        text = caller()
        budget = _BUDGET.get()
        if budget is not None:
            if len(budget.generation) >= MAX_GENERATION_BLOCKS:
                raise jinja2.exceptions.SecurityError(
                    f"more than {MAX_GENERATION_BLOCKS:,} generation blocks, more than a conversation has")
            budget.generation.append((budget.size, budget.size + len(text)))
        return text


def has_generation_block(source: str) -> bool:
    """True when `source` has a ``{% generation %}`` block (transformers' own test)."""
    return GENERATION_TAG.search(source) is not None


def _guard_filter(value):
    return _GuardedLoop(value)


def _capped_filter(f):
    """A built-in filter that refuses huge number arguments (``center(10**12)``)."""

    first = 2 if getattr(f, "jinja_pass_arg", None) is not None else 1  # after the context and the value

    @functools.wraps(f)  # keeps Jinja's pass_context/pass_environment marks
    def capped(*args, **kwargs):
        _check_args(args[first:], kwargs)
        return f(*args, **kwargs)

    return capped


@functools.lru_cache(maxsize=1)
def environment() -> _ChatEnvironment:
    """The one environment every chat template is compiled in."""
    env = _ChatEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationBlock, jinja2.ext.loopcontrols])
    env.filters = {name: _capped_filter(f) for name, f in env.filters.items()}
    env.filters["tojson"] = _tojson
    env.filters[_GUARD] = _guard_filter
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


@functools.lru_cache(maxsize=32)
def compile_template(source: str) -> jinja2.Template:
    """The compiled template (cached by its source); `TemplateError` with the line when it does
    not compile (a syntax error, an unknown filter or test outside an ``if``)."""
    try:
        return environment().from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise TemplateError(exc.message or str(exc), exc.lineno) from None
    except jinja2.exceptions.TemplateError as exc:  # TemplateAssertionError: unknown filter
        raise TemplateError(str(exc), getattr(exc, "lineno", None)) from None
    except RecursionError:
        raise TemplateError("the template is nested too deeply to compile") from None


def template_line(tb) -> int | None:
    """The template line of the innermost template frame of a traceback (Jinja rewrites template
    frames so their file is ``<template>`` and their line the template's)."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render_template(source: str, variables: Mapping[str, object], *, timeout: float = DEFAULT_TIMEOUT,
                    should_stop: Callable[[], bool] | None = None) -> str:
    """Render `source` with `variables` in the sandbox, within `timeout` seconds (`Cancelled`
    as soon as `should_stop()` is true, checked where the clock is).

    Every failure is a `TemplateError` (`TemplateTimeout` for the time limit) naming the template
    line: ``raise_exception('...')``, an unknown filter, a forbidden attribute, a loop that does
    not end, output or values too large, recursion too deep.

    >>> render_template("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
    ...                 {"messages": [{"role": "user", "content": "hi"}]})
    '<user>hi'
    """
    return render_tracked(source, variables, timeout=timeout, should_stop=should_stop).text


def render_tracked(source: str, variables: Mapping[str, object], *, timeout: float = DEFAULT_TIMEOUT,
                   should_stop: Callable[[], bool] | None = None) -> Rendered:
    """`render_template`, with where each ``{% generation %}`` block's output lies.

    >>> render_tracked("a{% generation %}bc{% endgeneration %}d", {})
    Rendered(text='abcd', generation=((1, 3),))
    """
    template = compile_template(source)
    budget = _Budget(time.monotonic() + timeout, timeout, should_stop)
    token = _BUDGET.set(budget)
    parts: list[str] = []
    try:
        for chunk in template.generate(**variables):
            parts.append(chunk)
            budget.size += len(chunk)
            if budget.size > MAX_OUTPUT_CHARS:
                raise jinja2.exceptions.SecurityError(
                    f"the output passed {MAX_OUTPUT_CHARS:,} characters, more than a prompt can be")
    except Cancelled:
        raise
    except TemplateError as exc:
        raise type(exc)(exc.reason, exc.line or template_line(exc.__traceback__)) from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(f"the sandbox refused: {exc}", template_line(exc.__traceback__)) from None
    except jinja2.exceptions.TemplateError as exc:  # raise_exception, undefined values, unknown filters
        raise TemplateError(exc.message or type(exc).__name__, template_line(exc.__traceback__)) from None
    except RecursionError as exc:
        raise TemplateError("recursion too deep (a macro that calls itself without end?)",
                            template_line(exc.__traceback__)) from None
    except MemoryError:
        raise TemplateOutOfMemory("the template needs more memory than this process may use") from None
    except Exception as exc:  # noqa: BLE001 - a template's own Python error (None + 1, 'a'[5], ...)
        raise TemplateError(f"{type(exc).__name__}: {exc}", template_line(exc.__traceback__)) from None
    finally:
        _BUDGET.reset(token)
    return Rendered("".join(parts), tuple(budget.generation))
