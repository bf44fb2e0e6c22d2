"""How fast a cancel is reported: tokenizer training (in a thread and in a child process) and
embedding training (child process), with the shutdown that follows, and how long closing the
window takes while training runs; the timings the unit tests leave out or bound loosely (10 s)
because a shared machine can stall.

    QT_QPA_PLATFORM=offscreen python tests/bench/bench_cancel.py

Targets: cancel reported in < 100 ms, shutdown in < 1 s, window closed in < 2 s.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _text() -> str:
    """Two megabytes of varied words (so training runs long enough to be cancelled)."""
    import random

    rng = random.Random(0)
    words = ["".join(rng.choice("etaoinshrdlucmfwyp") for _ in range(rng.randint(2, 9))) for _ in range(20_000)]
    return " ".join(rng.choice(words) for _ in range(350_000))


TEXT = _text()


def _measure(use_process: bool) -> tuple[float, float]:
    from PySide6.QtCore import QEventLoop, QTimer

    from tokviz.core import TrainSettings
    from tokviz.engine.training import engine as training_engine
    from tokviz.engine.training.child import CorpusInput
    from tokviz.engine.training.engine import TrainingEngine

    # the corpus size decides thread or process: move the threshold around it
    training_engine.PROCESS_MIN_CHARS = 1 if use_process else 10**12
    engine = TrainingEngine()
    loop = QEventLoop()
    engine.steps_ready.connect(loop.quit)
    QTimer.singleShot(60_000, loop.quit)
    engine.start(TrainSettings(min_count=1), CorpusInput(TEXT))
    loop.exec()
    return _cancel_and_shut_down(engine, loop)


def _cancel_and_shut_down(engine, loop) -> tuple[float, float]:
    """Milliseconds from `cancel()` to the `cancelled` signal, then for `shutdown()`."""
    got = []
    engine.cancelled.connect(lambda: got.append(time.perf_counter()))
    t0 = time.perf_counter()
    engine.cancel()
    while not got and time.perf_counter() - t0 < 10:
        loop.processEvents()
    cancel_ms = (got[0] - t0) * 1000 if got else float("inf")
    t1 = time.perf_counter()
    engine.shutdown()
    return cancel_ms, (time.perf_counter() - t1) * 1000


def _measure_embedding() -> tuple[float, float]:
    """Embedding training in its child process, cancelled once the first losses arrived."""
    from PySide6.QtCore import QEventLoop, QTimer

    from tokviz.core import TrainSettings, train
    from tokviz.core.embeddings import EmbedTrainSettings
    from tokviz.engine.heatmaps.embedding_engine import EmbeddingEngine, tokenize_corpus

    text = "the cat sat on the mat.\n\nthe rat sat on the hat.\n\na dog ran to the log.\n\n" * 20
    timeline = train(TrainSettings(vocab_size=290), texts=[text])
    corpus = tokenize_corpus(timeline, timeline.n_merges, text, "the cat sat on the mat")
    engine = EmbeddingEngine()
    loop = QEventLoop()
    engine.progressed.connect(loop.quit)
    QTimer.singleShot(60_000, loop.quit)
    engine.start(corpus, EmbedTrainSettings(dim=16, epochs=100_000, batch_size=16))
    loop.exec()
    return _cancel_and_shut_down(engine, loop)


def _measure_window_close() -> float:
    """Milliseconds for `MainWindow.close()` while a training run is going (it stops the run and
    waits for its thread)."""
    import tempfile

    from PySide6.QtCore import QEventLoop, QTimer

    from tokviz.app.main_window import MainWindow
    from tokviz.core import TrainSettings
    from tokviz.engine.settings import AppSettings

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text(TEXT, encoding="utf-8")
        window = MainWindow(AppSettings.in_folder(tmp), load_default_sample=False)
        window.show()
        window.script.open_path(corpus)  # a file, not typed text: closing asks nothing
        assert window.script.wait_for_file(60_000) == "opened"
        loop = QEventLoop()
        window.training_engine.steps_ready.connect(loop.quit)
        QTimer.singleShot(60_000, loop.quit)
        window.script.start_training(TrainSettings(min_count=1))
        loop.exec()
        t0 = time.perf_counter()
        closed = window.close()
        close_ms = (time.perf_counter() - t0) * 1000
        window.shutdown()
    return close_ms if closed else float("inf")


def main() -> int:
    from tokviz.app.gui import create_application

    app = create_application()  # noqa: F841 - the engines and the window need one
    for use_process in (False, True):
        runs = [_measure(use_process) for _ in range(3)]
        cancel = statistics.median(r[0] for r in runs)
        shut = statistics.median(r[1] for r in runs)
        where = "process" if use_process else "thread"
        print(f"training in a {where:<7}: cancel reported {cancel:7.1f} ms (target < 100), "
              f"shutdown {shut:7.1f} ms (target < 1000)")
    runs = [_measure_embedding() for _ in range(3)]
    print(f"embeddings in a process: cancel reported {statistics.median(r[0] for r in runs):7.1f} ms "
          f"(target < 100), shutdown {statistics.median(r[1] for r in runs):7.1f} ms (target < 1000)")
    close = statistics.median(_measure_window_close() for _ in range(3))
    print(f"closing the window while training: {close:7.1f} ms (target < 2000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
