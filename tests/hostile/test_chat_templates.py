"""Hostile chat templates: work done inside one filter or operator escapes the sandbox's own checks, so
every render runs in a child process with a wall deadline, a CPU-time and an address-space limit.
Each template below is stopped with one line naming the limit, in the core API, the command line
and the Chat view; the window stays usable and closes cleanly while such a render runs."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time

import pytest

from tests.core.chat import folders
from tokviz.core import Cancelled
from tokviz.core.chat import MEMORY_LIMIT_BYTES, TemplateError, TemplateRunner, TemplateStopped

# each runs for minutes or builds a 1-3 GB string when nothing but the sandbox's checks stands in its way
HOSTILE = {
    "center_map": "{{ range(99999)|map('center', 9999999)|map('length')|sum }}",
    "percent_format": "{{ '%1000000000d' % 1 }}",
    "concat_doubling": "{% set a = 'x' * 20000000 %}{% set a = a~a %}{% set a = a~a %}{% set a = a~a %}"
                       "{% set a = a~a %}{% set a = a~a %}{% set a = a~a %}{{ a|length }}",
    "join_repeated": "{% set a = 'x' * 10000000 %}{{ ([a]*300)|join|length }}",
    "replace_empty": "{{ ('x'*10000)|replace('', 'y'*300000)|length }}",
    "tojson_indent": "{{ " + "[" * 20 + "1" + "]" * 20 + " | tojson(indent=3000000) | length }}",
}
STOPPED = re.compile(r"chat template stopped: it (ran past the \d+ s (CPU-)?time limit"
                     r"|used more than \d+ MB of memory)$")
MESSAGES = [{"role": "user", "content": "hi"}]
BLOW_UP_SECONDS = 60  # only catches a render nothing stopped (a stopped one takes about the 2 s limit)
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="resource limits are POSIX")


def _alive(pid: int) -> bool:
    """Is process `pid` still there (not yet reaped)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def runner():
    r = TemplateRunner()
    yield r
    r.close()


# -- the core API ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_hostile_template_is_stopped_and_the_next_render_works(runner, name):
    with pytest.raises(TemplateStopped) as err:
        runner.render(HOSTILE[name], {"messages": MESSAGES}, timeout=1.0)
    assert STOPPED.fullmatch(str(err.value)), str(err.value)
    assert err.value.limit in ("time", "cpu", "memory") and "\n" not in str(err.value)
    assert runner.render("{{ messages[0].content }}!", {"messages": MESSAGES}) == "hi!"  # a fresh child


def test_the_warm_child_is_reused_and_a_stopped_one_is_reaped(runner):
    runner.render("x", {})
    first = runner.pid
    assert runner.render("{{ 1 + 1 }}", {}) == "2" and runner.pid == first
    with pytest.raises(TemplateStopped, match="memory"):
        runner.render(HOSTILE["percent_format"], {})
    assert not _alive(first)
    assert runner.render("y", {}) == "y" and runner.pid != first


def test_ordinary_template_errors_still_name_the_line(runner):
    with pytest.raises(TemplateError) as err:
        runner.render("a\n{{ raise_exception('no system role') }}", {})
    assert (err.value.line, err.value.reason) == (2, "no system role")
    assert not isinstance(err.value, TemplateStopped)


def test_generation_blocks_in_a_runaway_loop_are_refused_and_the_child_kept(runner):
    """Empty ``{% generation %}`` blocks add no output, so the output cap never sees them: the
    number of recorded blocks is capped (one line), and the warm child goes on rendering."""
    runner.render("x", {})
    pid = runner.pid
    with pytest.raises(TemplateError, match="generation blocks") as err:
        runner.render_tracked("{% for i in range(99999) %}{% for j in range(9) %}{% generation %}{% endgeneration %}"
                              "{% endfor %}{% endfor %}", {},
                              timeout=30.0)
    assert not isinstance(err.value, TemplateStopped) and "\n" not in str(err.value)
    rendered = runner.render_tracked("a{% generation %}{{ messages[0].content }}{% endgeneration %}",
                                     {"messages": MESSAGES})
    assert (rendered.text, rendered.generation, runner.pid) == ("ahi", ((1, 3),), pid)


@pytest.mark.parametrize("name", ["percent_format", "center_map"])
def test_a_hostile_generation_block_is_stopped_by_the_child_limits(runner, name):
    source = "{% generation %}" + HOSTILE[name] + "{% endgeneration %}"
    with pytest.raises(TemplateStopped) as err:
        runner.render_tracked(source, {"messages": MESSAGES}, timeout=1.0)
    assert STOPPED.fullmatch(str(err.value)), str(err.value)


@POSIX
def test_a_child_killed_while_idle_is_replaced(runner):
    runner.render("x", {})
    pid = runner.pid
    os.kill(pid, 9)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # dead (not yet reaped) before the next render
    assert runner.render("{{ 'again' }}", {}) == "again" and runner.pid != pid


@POSIX
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the address-space limit is read from /proc")
def test_the_child_runs_under_its_limits(runner):
    runner.render("x", {"messages": MESSAGES})
    with open(f"/proc/{runner.pid}/limits", encoding="ascii") as f:
        limits = {line[:26].strip(): line[26:].split() for line in f}
    address_space = int(limits["Max address space"][0])
    with open(f"/proc/{runner.pid}/statm", encoding="ascii") as f:
        held = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    assert held < address_space <= held + MEMORY_LIMIT_BYTES
    assert limits["Max cpu time"][0] != "unlimited" and limits["Max core file size"][0] == "0"


@POSIX
def test_the_kernel_ends_a_render_past_its_cpu_time():
    """The CPU-time limit holds even when the wall deadline is far away (a parent that cannot act)."""
    r = TemplateRunner(cpu_seconds=1)
    try:
        with pytest.raises(TemplateStopped) as err:
            r.render(HOSTILE["center_map"], {}, timeout=600)
        assert err.value.limit == "cpu"
        assert str(err.value) == "chat template stopped: it ran past the 1 s CPU-time limit"
    finally:
        r.close()


def test_a_closed_runner_cancels_and_renders_no_more():
    r = TemplateRunner()
    r.render("x", {})
    pid = r.pid
    outcome = []

    def render() -> None:
        try:
            r.render(HOSTILE["center_map"], {}, timeout=600)
        except Cancelled:
            outcome.append("cancelled")

    t = threading.Thread(target=render)
    t.start()
    while not r.rendering:
        t.join(0.01)
    r.close()
    t.join(60)
    assert outcome == ["cancelled"] and not t.is_alive() and not _alive(pid)
    with pytest.raises(Cancelled):
        r.render("x", {})


def test_a_cancelled_hostile_render_is_killed_and_the_next_one_works(runner):
    runner.render("x", {})
    pid = runner.pid
    asked = []
    outcome = []

    def should_stop() -> bool:  # false at the render's two checks before it sends the job
        asked.append(1)
        return len(asked) > 2

    def render() -> None:
        try:
            runner.render(HOSTILE["center_map"], {}, timeout=600, should_stop=should_stop)
        except Cancelled:
            outcome.append("cancelled")

    t = threading.Thread(target=render)
    t.start()
    while t.is_alive():
        runner.wake()  # what the Chat view does when a newer request supersedes a render
        t.join(0.05)
    assert outcome == ["cancelled"] and not t.is_alive() and not _alive(pid)
    assert runner.render("{{ 'next' }}", {}) == "next"


# -- the command line ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_command_line_prints_one_line_and_exits_2(cli, tmp_path, name):
    folder = folders.chatml(tmp_path, HOSTILE[name])
    (tmp_path / "m.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    t0 = time.monotonic()
    code, out, err = cli("chat", str(folder), "-f", "m.json")
    assert time.monotonic() - t0 < BLOW_UP_SECONDS  # minutes without the child's limits
    lines = err.strip().splitlines()
    assert (code, out, len(lines)) == (2, "", 1), err
    assert lines[0].startswith("tokviz: ") and STOPPED.fullmatch(lines[0][len("tokviz: "):]), err


# -- the Chat view -------------------------------------------------------------------------------


@pytest.fixture
def hostile_folder(tmp_path):
    """A folder whose default template is hostile, with an ordinary one named ``plain``."""
    templates = [{"name": "default", "template": HOSTILE["center_map"]}, {"name": "plain", "template": folders.CHATML}]
    return folders.chatml(tmp_path, templates)


@pytest.fixture
def panel(qtbot):
    from tokviz.panels.chat.panel import ChatPanel

    p = ChatPanel()
    qtbot.addWidget(p)
    p.show()
    yield p
    p.shutdown()


def test_the_chat_view_shows_the_limit_and_renders_again(panel, qtbot, hostile_folder):
    with qtbot.waitSignal(panel.result_shown, timeout=60_000):
        panel.open_folder(hostile_folder)
    assert panel.result.error is not None and panel.result.render is None
    assert not panel.banner.isHidden() and "chat template stopped: it ran past the" in panel.banner.text()
    assert panel.messages() and panel.view.token_count == 0  # the messages are kept
    with qtbot.waitSignal(panel.result_shown, timeout=60_000):
        panel.template_box.setCurrentText("plain")  # a fresh child renders the ordinary template
    assert panel.result.error is None and panel.banner.isHidden()
    assert panel.result.render.text.startswith("<|im_start|>system\nYou are a helpful assistant.")
    assert panel.view.token_count == len(panel.result.render.ids) > 0


def test_closing_the_chat_view_during_a_hostile_render_is_clean(qtbot, hostile_folder):
    from tokviz.panels.chat.panel import ChatPanel

    p = ChatPanel()
    qtbot.addWidget(p)
    p.open_folder(hostile_folder)
    runner = p.engine.templates
    qtbot.waitUntil(lambda: runner.rendering and runner.pid is not None, timeout=60_000)
    pid = runner.pid
    p.shutdown()  # the window closing: the render's child is killed, its thread ends
    assert p.engine.renderer.tasks.thread_count == 0 and not p.engine.is_pending
    assert not _alive(pid) and runner.pid is None


def test_closing_the_window_during_a_hostile_render_is_clean(window, qtbot, hostile_folder):
    window.docks.goto_action("chat").trigger()
    chat = window.script.panel("chat")
    chat.open_folder(hostile_folder)
    runner = chat.engine.templates
    qtbot.waitUntil(lambda: runner.rendering and runner.pid is not None, timeout=60_000)
    pid = runner.pid
    assert window.close()  # closeEvent: every engine stopped and waited for (a Qt warning fails the test)
    assert chat.engine.renderer.tasks.thread_count == 0 and not _alive(pid)
