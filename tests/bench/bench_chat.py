"""Benchmark: the Chat view re-renders a 4k-token conversation within a frame.

An 80-message conversation (about 4,100 DeepSeek V3 tokens) rendered with DeepSeek V3's template:

1. The render job alone (template, message spans, encoding, linter, token labels and colours):
   the first render, then one message edited 40 times (a sentence typed into it one character at
   a time), median and p95
   (target: median within one 60 Hz frame, 16.7 ms); and what containment costs: one render of
   the template in this process against one in the warm child process (`TemplateRunner`), medians.
2. The Chat view: 40 keystrokes into one message, 60 ms apart (slower than the one-frame debounce,
   so each key renders); time from each key to the new prompt on screen, and the longest time the
   GUI thread was blocked (a 2 ms heartbeat; target: at most 50 ms).

Needs ../shared/vocab/hf/deepseek-v3. Run: QT_QPA_PLATFORM=offscreen python tests/bench/bench_chat.py
Prints a table and writes tests/bench/results/chat.json.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_token_view import Heartbeat

from tokviz.core.chat import default_runner, load_chat_model, render_template, template_messages
from tokviz.core.chat.render import template_variables
from tokviz.engine.chat.chat_engine import ChatRequest, chat_job
from tokviz.panels.chat.panel import ChatPanel

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "vocab" / "hf" / "deepseek-v3"
RESULTS = Path(__file__).parent / "results" / "chat.json"
EDITS = 40
FRAME_MS = 1000 / 60
TYPED = ("the quick brown fox jumps over the lazy dog " * 2)[:EDITS]


def conversation(n: int = 80) -> list[dict]:
    """Alternating turns with prose, numbers, code, emoji and CJK (about 68 tokens each)."""
    out = [{"role": "system", "content": "You are a careful assistant. Answer briefly, cite numbers exactly."}]
    for i in range(n - 1):
        if i % 2 == 0:
            out.append({"role": "user", "content": f"Question {i}: how many tokens does `print('héllo 👋 {i}')` "
                        f"take, and why do 東京 and 2024-11-{i % 28 + 1:02d} split the way they do? Explain "
                        "step by step, with one example for each case you mention."})
        else:
            out.append({"role": "assistant", "content": f"Answer {i}: the string has {i * 7} characters; "
                        "byte-level BPE splits the emoji into bytes, keeps common English words whole and cuts "
                        "digits in groups of three, so the date becomes several tokens. See the table."})
    return out


def p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, round(0.95 * len(xs)) - 1)]


def main() -> int:
    if not FOLDER.is_dir():
        print(f"needs {FOLDER}")
        return 2
    _app = QApplication.instance() or QApplication(sys.argv)  # kept alive for the panel below
    rows = []
    t0 = time.perf_counter()
    model = load_chat_model(FOLDER)
    load_s = time.perf_counter() - t0
    messages = conversation()
    req = ChatRequest(model, tuple(messages), add_generation_prompt=True)
    t0 = time.perf_counter()
    first = chat_job(req)
    first_ms = (time.perf_counter() - t0) * 1000
    n_tokens = len(first.render.ids)
    times = []
    edited = [dict(m) for m in messages]
    for ch in TYPED:
        edited[30] = {**edited[30], "content": edited[30]["content"] + ch}
        r = ChatRequest(model, tuple(dict(m) for m in edited), add_generation_prompt=True)
        t0 = time.perf_counter()
        chat_job(r)
        times.append((time.perf_counter() - t0) * 1000)
    med = statistics.median(times)
    variables = {**template_variables(model, add_generation_prompt=True), "messages": template_messages(messages)}
    here, child = [], []
    for _ in range(EDITS):
        for out, render in ((here, render_template), (child, default_runner().render)):
            t0 = time.perf_counter()
            render(model.template, variables)
            out.append((time.perf_counter() - t0) * 1000)
    rows.append(("model folder loaded", f"{load_s * 1000:.0f} ms", "", True))
    rows.append((f"first render ({n_tokens:,} tokens, {len(first.render.text):,} chars)", f"{first_ms:.1f} ms", "",
                 True))
    rows.append(("render job after an edit: median", f"{med:.1f} ms", f"<= {FRAME_MS:.1f} ms", med <= FRAME_MS))
    rows.append(("render job after an edit: p95", f"{p95(times):.1f} ms", "", True))
    rows.append(("one template render in this process: median", f"{statistics.median(here):.2f} ms", "", True))
    rows.append(("one template render in the warm child: median", f"{statistics.median(child):.2f} ms", "", True))

    panel = ChatPanel()
    panel.resize(1280, 720)
    panel.show()
    panel.open_folder(FOLDER)
    panel.wait_idle(60_000)
    panel.set_messages(messages)
    panel.wait_idle(60_000)
    editor = panel.messages_view.rows[30].editor
    editor.setFocus()
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    shown: list[float] = []
    def on_shown() -> None:
        panel.view.viewport().repaint()
        shown.append(time.perf_counter())

    panel.result_shown.connect(on_shown)
    hb = Heartbeat()
    hb.start()
    latencies = []
    loop = QEventLoop()  # waits without spinning, as the application's own event loop does
    panel.result_shown.connect(loop.quit)
    for ch in TYPED:
        t_key = time.perf_counter()
        QTest.keyClick(editor, ch)
        QTimer.singleShot(10_000, loop.quit)
        loop.exec()
        latencies.append((shown[-1] - t_key) * 1000)
        QTimer.singleShot(60, loop.quit)  # the next key 60 ms later
        loop.exec()
    stall = hb.stop()
    ok_text = panel.result.request.messages[30]["content"].endswith(TYPED)
    panel.shutdown()
    rows.append(("Chat view: key to new prompt on screen, median", f"{statistics.median(latencies):.1f} ms",
                 "", ok_text))
    rows.append(("Chat view: key to new prompt on screen, p95", f"{p95(latencies):.1f} ms", "", True))
    rows.append(("Chat view: longest GUI stall while typing", f"{stall} ms", "<= 50 ms", stall <= 50))

    width = max(len(r[0]) for r in rows)
    print(f"chat benchmark: DeepSeek V3 template, {len(messages)} messages")
    print(f"{'measure':<{width}}  {'value':>12}  {'target':>10}  ok")
    for name, value, target, ok in rows:
        print(f"{name:<{width}}  {value:>12}  {target:>10}  {'yes' if ok else 'NO'}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"rows": [{"measure": n, "value": v, "target": t, "ok": o} for n, v, t, o in rows]},
                                  indent=1), encoding="utf-8")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
