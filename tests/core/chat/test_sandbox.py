"""The template environment: transformers' features, the sandbox, and the limits that stop runaway templates."""

from __future__ import annotations

from datetime import datetime

import jinja2
import jinja2.ext
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from tokviz.core.chat import TemplateError, TemplateTimeout, render_template
from tokviz.core.chat.sandbox import MAX_OUTPUT_CHARS

MESSAGES = [{"role": "user", "content": "héllo 👋"}, {"role": "assistant", "content": "hi"}]


def render(source: str, timeout: float = 2.0, **variables) -> str:
    return render_template(source, {"messages": MESSAGES, **variables}, timeout=timeout)


# -- what transformers' environment has -------------------------------------------------------


def test_trim_and_lstrip_blocks():
    assert render("  {% if true %}\nx\n  {% endif %}\ny") == "x\ny"


def test_loop_controls():
    src = "{% for i in range(10) %}{% if i == 1 %}{% continue %}{% endif %}{% if i > 3 %}{% break %}{% endif %}{{ i }}{% endfor %}"
    assert render(src) == "023"


def test_tojson_keeps_non_ascii_and_takes_transformers_options():
    assert render("{{ messages[0] | tojson }}") == '{"role": "user", "content": "héllo 👋"}'
    assert render("{{ {'b': 1, 'a': [1, 2]} | tojson(indent=1, sort_keys=True) }}") == '{\n "a": [\n  1,\n  2\n ],\n "b": 1\n}'
    assert render("{{ '<x>' | tojson(ensure_ascii=True) }}") == '"<x>"'  # no HTML escaping either


def test_raise_exception_reports_the_message_and_line():
    with pytest.raises(TemplateError) as err:
        render("a\n{% if messages[0].role == 'user' %}\n{{ raise_exception('Only assistants here') }}\n{% endif %}")
    assert err.value.reason == "Only assistants here"
    assert err.value.line == 3
    assert str(err.value) == "chat template line 3: Only assistants here"


def test_strftime_now_dict_and_namespace():
    assert render("{{ strftime_now('%Y') }}") in {str(datetime.now().year), str(datetime.now().year + 1)}
    assert render("{{ dict(a=1)['a'] }}{{ dict.fromkeys(['x'], 2)['x'] }}") == "12"
    assert render("{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}") == "2"
    with pytest.raises(TemplateError, match="underscore-prefixed"):
        render("{% set ns = namespace(_hidden=1) %}")


GUARDED_LOOPS = [
    "{% for m in messages %}{{ loop.index }}/{{ loop.length }}{{ '|' if not loop.last }}{% endfor %}",
    "{% for m in messages if m.role == 'nobody' %}x{% else %}empty{% endfor %}",
    "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}",
    "{% for x in [[1, [2]], [3]] recursive %}[{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}{% endif %}]{% endfor %}",
    "{% for c in 'abc' | reverse %}{{ loop.revindex }}{{ c }}{{ loop.previtem or '' }}{% endfor %}",
    "{% for m in messages %}{% for n in messages %}{{ loop.depth }}{{ loop.cycle('a', 'b') }}{% endfor %}{% endfor %}",
    "{% for x in none_value %}{{ x }}{% endfor %}",
]


@pytest.mark.parametrize("source", GUARDED_LOOPS)
def test_loop_guard_changes_nothing(source):
    """Loops render exactly as in plain Jinja (transformers' environment, no guard)."""
    plain = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    try:
        expected = plain.from_string(source).render(messages=MESSAGES, none_value=None)
    except TypeError as exc:
        with pytest.raises(TemplateError, match="TypeError"):
            render(source, none_value=None)
        assert "not iterable" in str(exc)
        return
    assert render(source, none_value=None) == expected


# -- the sandbox ---------------------------------------------------------------------------------


@pytest.mark.parametrize("source, needle", [
    ("{{ ''.__class__.__mro__ }}", "unsafe"),
    ("{{ messages.__class__.__base__.__subclasses__() }}", "unsafe"),
    ("{{ messages.append(1) }}", "unsafe"),  # the immutable sandbox: no mutating methods
    ("{{ messages[0].update({'role': 'x'}) }}", "unsafe"),
    ("{% include 'secrets.txt' %}", "no loader"),
    ("{% extends '/etc/passwd' %}", "no loader"),
    ("{{ cycler.__init__.__globals__ }}", "unsafe"),
])
def test_the_sandbox_refuses(source, needle):
    with pytest.raises(TemplateError) as err:
        render(source)
    assert needle in str(err.value)
    assert err.value.line == 1


def test_unknown_filter_and_syntax_errors_name_the_line():
    with pytest.raises(TemplateError) as err:
        render("ok\n\n{{ messages | shout }}")
    assert (err.value.line, err.value.reason) == (3, "No filter named 'shout'.")
    with pytest.raises(TemplateError) as err:
        render("{% for m in messages %}\n{{ m.content }}")
    assert err.value.line == 2 and "endfor" in err.value.reason


# -- limits --------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", [
    "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    # no call inside the loops: only the guard around each loop's iterable sees them
    "{% set r = range(100000) | list %}{% for a in r %}{% for b in r %}{% for c in r %}{% endfor %}{% endfor %}{% endfor %}",
    "{% set r = 'x' * 100000 %}{% for a in r %}{% for b in r %}{{ b }}{% endfor %}{% endfor %}",
])
def test_a_template_that_loops_forever_is_stopped(source):
    with pytest.raises(TemplateTimeout) as err:
        render(source, timeout=0.2)
    assert "longer than 0.2 s" in str(err.value) and err.value.line == 1


@pytest.mark.parametrize("source, needle", [
    ("{{ 'x' * 100000000 }}", "repeating"),
    ("{{ [0, 1] * 100000000 }}", "repeating"),
    ("{{ 2 ** 100000 }}", "power"),
    ("{{ 'x' | center(1000000000) }}", "number"),
    ("{{ 'x'.ljust(10 ** 10) }}", "number"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "items"),
    ("{% macro f(s) %}{{ f(s ~ s) }}{% endmacro %}{{ f('ab') }}", "items"),
    ("{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}", "recursion"),
    ("{% for i in range(100000) %}{{ 'y' * 10000 }}{% endfor %}", f"{MAX_OUTPUT_CHARS:,} characters"),
])
def test_memory_hungry_templates_are_refused(source, needle):
    with pytest.raises(TemplateError) as err:
        render(source)
    assert needle in str(err.value)


def test_python_errors_of_a_template_are_template_errors():
    with pytest.raises(TemplateError) as err:
        render("{{ messages[0].content + 1 }}")
    assert err.value.reason.startswith("TypeError") and err.value.line == 1


def test_a_render_stops_when_asked():
    """A superseded render (the Chat view's newest request wins) stops at its next loop step."""
    from tokviz.core import Cancelled

    asked = []

    def should_stop() -> bool:
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(Cancelled):
        render_template("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
                        {"messages": MESSAGES}, timeout=60, should_stop=should_stop)
    assert len(asked) == 4
