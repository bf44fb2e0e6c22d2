"""`wait_for_signals`: run a local event loop until one of several signals fires (scripting waits)."""

from __future__ import annotations

import time

from PySide6.QtCore import QEventLoop, QTimer


def wait_for_signals(signals: dict, timeout_ms: int, value_of: str | None = None) -> str:
    """Run the event loop until a signal of `signals` (``{name: [signal, ...]}``) fires.

    Returns the name of its group (or, for the group `value_of`, the signal's first argument),
    or ``"timeout"``. Stray ``quit`` calls do not end the wait early."""
    loop = QEventLoop()
    timer = QTimer(singleShot=True)
    timer.timeout.connect(loop.quit)
    result: list[str] = []

    def done(name: str, *args) -> None:
        result.append(args[0] if value_of == name and args else name)
        loop.quit()

    connections = []
    for name, sigs in signals.items():
        for sig in sigs:
            slot = (lambda *args, n=name: done(n, *args))
            sig.connect(slot)
            connections.append((sig, slot))
    deadline = time.monotonic() + timeout_ms / 1000
    try:
        while not result and time.monotonic() < deadline:
            timer.start(max(1, int((deadline - time.monotonic()) * 1000)))
            loop.exec()
    finally:
        timer.stop()
        for sig, slot in connections:
            sig.disconnect(slot)
    return result[0] if result else "timeout"
