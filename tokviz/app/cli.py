"""The ``tokviz`` command line: train, encode, decode, merges; no arguments opens the app.

Errors the user can fix exit with status 2 and one line on stderr (no traceback), and leave no
partial output file behind. The GUI is imported only when a GUI command runs, so the scripting
commands start fast and work without a display.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tokviz import __version__
from tokviz.core import (
    Encoding,
    TokvizError,
    TrainSettings,
    Training,
    load_timeline,
    parse_word_counts,
    read_text,
    save_timeline,
)
from tokviz.core.corpus import ENCODING_ERRORS
from tokviz.core.split import SPLIT_CHOICES

from .progress import ProgressBar

EXIT_USAGE = 2
COMMANDS = ("train", "encode", "decode", "merges", "gui", "screenshot")


class UsageError(Exception):
    """A command-line mistake: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tokviz", description="See how tokenizers work.")
    p.add_argument("--version", action="version", version=f"tokviz {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    t = sub.add_parser("train", help="train a BPE tokenizer and save its timeline")
    t.add_argument("files", nargs="+", metavar="FILE")
    t.add_argument("-o", "--output", required=True, metavar="MODEL.json")
    budget = t.add_mutually_exclusive_group()
    budget.add_argument("--vocab-size", type=_positive, metavar="N")
    budget.add_argument("--merges", type=_positive, metavar="N")
    t.add_argument("--units", choices=("bytes", "chars"), default="bytes")
    t.add_argument("--split", default="gpt4", metavar=SPLIT_CHOICES)
    t.add_argument("--end-of-word", metavar="MARK")
    t.add_argument("--word-counts", action="store_true", help="FILEs are 'word count' tables")
    t.add_argument("--min-count", type=_positive, default=2, metavar="N")
    t.add_argument("--special", action="append", default=[], metavar="TOKEN")
    t.add_argument("--encoding-errors", choices=ENCODING_ERRORS, default="strict")
    t.add_argument("--quiet", action="store_true", help="no progress bar")

    e = sub.add_parser("encode", help="encode text with a saved model")
    e.add_argument("model", metavar="MODEL")
    e.add_argument("text", nargs="?", metavar="TEXT")
    e.add_argument("-f", "--file", metavar="FILE")
    e.add_argument("--step", type=_positive, metavar="K", help="use only the first K merges")
    fmt = e.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_const", const="json", dest="format")
    fmt.add_argument("--ids", action="store_const", const="ids", dest="format")
    fmt.add_argument("--tokens", action="store_const", const="tokens", dest="format")

    d = sub.add_parser("decode", help="decode ids with a saved model")
    d.add_argument("model", metavar="MODEL")
    d.add_argument("ids", nargs="+", metavar="ID")

    m = sub.add_parser("merges", help="list the merges of a saved model")
    m.add_argument("model", metavar="MODEL")
    m.add_argument("--json", action="store_true")

    g = sub.add_parser("gui", help="open the application")
    g.add_argument("file", nargs="?", metavar="FILE")

    s = sub.add_parser("screenshot", help="render the app offscreen to PNG files")
    s.add_argument("--out", required=True, metavar="DIR")
    s.add_argument("--theme", choices=("light", "dark"), default="light")
    return p


# -- commands ---------------------------------------------------------------------------------


def cmd_train(args: argparse.Namespace) -> int:
    settings = TrainSettings(
        units=args.units,
        split=args.split,
        end_of_word=args.end_of_word,
        vocab_size=args.vocab_size,
        merges=args.merges,
        min_count=args.min_count,
        special_tokens=tuple(args.special),
        word_counts=args.word_counts,
    ).validate()
    out = Path(args.output)
    if out.is_dir():
        raise UsageError(f"tokviz train: output {out} is a folder; give a file name")
    if not out.parent.exists() and str(out.parent):
        raise UsageError(f"tokviz train: output folder {out.parent} does not exist")
    _check_writable(out)  # fail now, not after a long training run
    texts = [read_text(f, errors=args.encoding_errors) for f in args.files]
    if settings.word_counts:
        table: dict[str, int] = {}
        for name, text in zip(args.files, texts):
            for w, n in parse_word_counts(text, name=name).items():
                table[w] = table.get(w, 0) + n
        training = Training(settings, table=table)
    else:
        training = Training(settings, texts=texts)
    bar = ProgressBar(sys.stderr, enabled=not args.quiet)
    bar.stage("counting chunks")
    timeline = training.prepare(progress=bar.counting)
    bar.start(training.budget)
    for step in training.steps():
        bar.update(step.rank + 1)
    bar.finish(timeline.n_merges, timeline.vocab_size)
    save_timeline(timeline, out)
    return 0


def _check_writable(out: Path) -> None:
    """Raise `TokvizError` unless a file can be created in the folder of `out`."""
    folder = out.parent if str(out.parent) else Path(".")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise TokvizError(f"{out}: cannot write ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def _read_model(path: str):
    return load_timeline(path)


def _format_token(data: bytes) -> str:
    """A token on one line: JSON string escapes, and ``\\xNN`` for bytes that are not UTF-8."""
    text = data.decode("utf-8", errors="surrogateescape")
    return "".join(
        f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else json.dumps(c, ensure_ascii=False)[1:-1]
        for c in text
    )


def cmd_encode(args: argparse.Namespace) -> int:
    if args.file is not None and args.text is not None:
        raise UsageError("tokviz encode: give TEXT or -f FILE, not both")
    if args.file is not None:
        text = read_text(args.file, allow_empty=True)
    elif args.text is not None:
        text = args.text
    else:
        data = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
        from tokviz.core import decode_utf8

        text = decode_utf8(data, name="<stdin>")
    timeline = _read_model(args.model)
    if args.step is not None and args.step > timeline.n_merges:
        raise UsageError(f"tokviz encode: --step {args.step} is past the last merge ({timeline.n_merges})")
    enc: Encoding = timeline.tokenizer().encode(text, step=args.step, allowed_special="all")
    fmt = args.format or "tokens"
    if fmt == "json":
        print(json.dumps(enc.to_json()))
    elif fmt == "ids":
        print(" ".join(map(str, enc.ids)))
    else:
        for i, (tid, tok) in enumerate(zip(enc.ids, enc.tokens)):
            print(f"{tid}\t{_format_token(tok)}")
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    ids = []
    for raw in args.ids:
        for part in raw.replace(",", " ").split():
            try:
                ids.append(int(part))
            except ValueError:
                raise UsageError(f"tokviz decode: {part!r} is not an id (ids are whole numbers)") from None
    timeline = _read_model(args.model)
    data = timeline.tokenizer().decode_bytes(ids)
    sys.stdout.write(data.decode("utf-8", errors="replace"))
    sys.stdout.write("\n")
    return 0


def cmd_merges(args: argparse.Namespace) -> int:
    timeline = _read_model(args.model)
    vocab = timeline.token_bytes()
    out = sys.stdout
    for s in timeline.steps:
        a, b = s.pair
        if args.json:
            out.write(json.dumps({
                "rank": s.rank,
                "pair": [a, b],
                "id": s.id,
                "pair_hex": [vocab[a].hex(), vocab[b].hex()],
                "token_hex": s.token.hex(),
                "count": s.count,
            }) + "\n")
        else:
            out.write(f"{s.rank}\t{s.id}\t{_format_token(vocab[a])}\t{_format_token(vocab[b])}\t{s.count}\n")
    return 0


def cmd_gui(args: argparse.Namespace) -> int:
    from .gui import run_gui

    return run_gui(getattr(args, "file", None))


def cmd_screenshot(args: argparse.Namespace) -> int:
    from .gui import run_screenshots

    return run_screenshots(Path(args.out), theme=args.theme)


HANDLERS = {
    "train": cmd_train,
    "encode": cmd_encode,
    "decode": cmd_decode,
    "merges": cmd_merges,
    "gui": cmd_gui,
    "screenshot": cmd_screenshot,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if not argv:
            return cmd_gui(argparse.Namespace(file=None))
        if argv[0] not in COMMANDS and not argv[0].startswith("-"):
            if os.path.exists(argv[0]) and len(argv) == 1:
                return cmd_gui(argparse.Namespace(file=argv[0]))
            raise UsageError(
                f"tokviz: unknown command or file {argv[0]!r} (commands: {', '.join(COMMANDS)})"
            )
        args = build_parser().parse_args(argv)
        if args.command is None:
            return cmd_gui(argparse.Namespace(file=None))
        return HANDLERS[args.command](args)
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except TokvizError as exc:
        print(f"tokviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tokviz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # silence the flush at exit
        except OSError:
            pass
        return 0
    except MemoryError:
        print("tokviz: out of memory", file=sys.stderr)
        return EXIT_USAGE
