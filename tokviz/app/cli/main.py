"""The ``tokviz`` command line: train, encode, decode, merges, export; no arguments opens the app.

Errors the user can fix exit with status 2 and one line on stderr (no traceback), and leave no
partial output file behind. The GUI is imported only when a GUI command runs, so the scripting
commands start fast and work without a display.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tokviz import __version__
from tokviz.core.gc_pause import collector_paused
from tokviz.core.processes.parallel import choose_processes
from tokviz.core.errors import TokvizError
from tokviz.core.text.corpus import ENCODING_ERRORS, read_text

from .arguments import check_arguments, utf8_argument, whole_number
from .messages import one_line

EXIT_USAGE = 2
# writing stdout can fail so (EDQUOT is not defined on every platform)
OUTPUT_ERRNOS = tuple(getattr(errno, n) for n in ("ENOSPC", "EIO", "EFBIG", "EDQUOT") if hasattr(errno, n))
REPLACE_HINT = "use --encoding-errors replace to read it anyway"  # train's option; encode has none
COMMANDS = ("train", "encode", "decode", "merges", "gui", "screenshot", "lesson", "animate", "export",
            "compare", "chat")


class UsageError(Exception):
    """A command-line mistake: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with `only` the parser of that command alone (what
    `main` builds for ``encode``, ``decode`` and ``merges``: their start-up imports no trainer,
    exporter or chat code)."""
    p = _Parser(prog="tokviz", description="See how tokenizers work.")
    p.add_argument("--version", action="version", version=f"tokviz {__version__}")
    desktop = p.add_mutually_exclusive_group()
    desktop.add_argument("--install-desktop-entry", action="store_true",
                         help="add tokviz (with its icon) to the desktop's application menu, in $XDG_DATA_HOME")
    desktop.add_argument("--uninstall-desktop-entry", action="store_true",
                         help="remove what --install-desktop-entry wrote")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    if only is None or only == "train":
        _add_train_parser(sub)
    if only is None or only == "encode":
        _add_encode_parser(sub)
    if only is None or only == "decode":
        _add_decode_parser(sub)
    if only is None or only == "merges":
        _add_merges_parser(sub)
    if only is not None:
        return p

    from .export import add_export_parser  # tokenizer.json, .tiktoken

    add_export_parser(sub, whole_number)
    from .compare import add_compare_parser  # efficiency metrics

    add_compare_parser(sub, whole_number)
    from .chat import add_chat_parser  # chat templates

    add_chat_parser(sub)
    g = sub.add_parser("gui", help="open the application")
    g.add_argument("file", nargs="?", metavar="FILE")

    from .animate import add_animate_parser  # classroom

    add_animate_parser(sub)
    s = sub.add_parser("screenshot", help="render the app offscreen to PNG files")
    s.add_argument("--out", required=True, metavar="DIR")
    s.add_argument("--theme", choices=("light", "dark"), default="light")
    s.add_argument("--size", action="append", metavar="WxH",
                   help="window size of the workspace pictures (repeatable; default 1280x800 and 1920x1080)")

    lesson = sub.add_parser("lesson", help="open the app on a guided lesson (--list: the lessons)")
    lesson.add_argument("name", nargs="?", metavar="NAME", help="a lesson name or number")
    lesson.add_argument("--list", action="store_true", help="print the lessons and exit")
    return p


LEAN_COMMANDS = ("encode", "decode", "merges")  # `main` builds only their own parser


def _add_train_parser(sub) -> None:
    from .algorithms import add_algorithm_options

    t = sub.add_parser("train", help="train a BPE, WordPiece or Unigram tokenizer and save its timeline")
    t.add_argument("files", nargs="+", metavar="FILE")
    t.add_argument("-o", "--output", required=True, metavar="MODEL.json")
    t.add_argument("--word-counts", action="store_true", help="FILEs are 'word count' tables")
    t.add_argument("--encoding-errors", choices=ENCODING_ERRORS, default="strict")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    add_algorithm_options(t)  # --algorithm and every algorithm's declared settings


def _add_encode_parser(sub) -> None:
    e = sub.add_parser("encode", help="encode text with a saved model")
    e.add_argument("model", metavar="MODEL")
    e.add_argument("text", nargs="?", metavar="TEXT")
    e.add_argument("-f", "--file", metavar="FILE")
    e.add_argument("--step", type=whole_number, metavar="K", help="use only the first K merges")
    e.add_argument("--pattern", metavar="REGEX", help="split pattern of a .tiktoken file tokviz does not know")
    fmt = e.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_const", const="json", dest="format")
    fmt.add_argument("--ids", action="store_const", const="ids", dest="format")
    fmt.add_argument("--tokens", action="store_const", const="tokens", dest="format")
    e.add_argument("--specials-as-text", action="store_true", help="encode special-token text as ordinary text")


def _add_decode_parser(sub) -> None:
    d = sub.add_parser("decode", help="decode ids with a saved model")
    d.add_argument("model", metavar="MODEL")
    d.add_argument("ids", nargs="+", metavar="ID")
    d.add_argument("--pattern", metavar="REGEX", help="split pattern of a .tiktoken file tokviz does not know")


def _add_merges_parser(sub) -> None:
    m = sub.add_parser("merges", help="list the merges of a saved model")
    m.add_argument("model", metavar="MODEL")
    m.add_argument("--json", action="store_true")
    m.add_argument("--pattern", metavar="REGEX", help="split pattern of a .tiktoken file tokviz does not know")


# -- commands ---------------------------------------------------------------------------------


def cmd_train(args: argparse.Namespace) -> int:
    from tokviz.core.registry import make_training, step_noun
    from tokviz.core.model_files import save_model
    from tokviz.core.io.safe_files import same_file
    from tokviz.core.text.corpus import parse_word_counts

    from .algorithms import train_settings
    from .progress import ProgressBar

    settings = train_settings(args, UsageError)  # BPE, WordPiece or Unigram settings
    out = Path(args.output)
    if out.is_dir():
        raise UsageError(f"tokviz train: output {out} is a folder; give a file name")
    if not out.parent.exists() and str(out.parent):
        raise UsageError(f"tokviz train: output folder {out.parent} does not exist")
    for f in args.files:
        if Path(f).is_file() and same_file(f, out):
            raise UsageError(f"tokviz train: output {out} is the input file {f}; give another name")
    _check_writable(out)  # fail now, not after a long training run
    texts = [read_text(f, errors=args.encoding_errors, hint=REPLACE_HINT) for f in args.files]
    if args.word_counts:
        table: dict[str, int] = {}
        for name, text in zip(args.files, texts):
            for w, n in parse_word_counts(text, name=name).items():
                table[w] = table.get(w, 0) + n
        training = make_training(settings, table=table)
    else:
        training = make_training(settings, texts=texts)
    del texts  # the training releases its texts once counted; keep no copy here
    bar = ProgressBar(sys.stderr, enabled=not args.quiet)
    bar.unit = step_noun(settings)
    bar.stage("counting chunks")
    timeline = training.prepare(progress=bar.counting, processes=choose_processes())
    bar.start(training.budget)
    training.run(each=lambda: bar.update(timeline.n_steps))  # WordPiece, Unigram: no collector passes between steps
    bar.finish(timeline.n_steps, timeline.vocab_size)
    save_model(timeline, out)
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


def _read_model(path: str, pattern: str | None = None):
    """Every MODEL argument, through the one loader: a tokviz model (BPE, WordPiece, Unigram) as
    its timeline, any other tokenizer (a file, a folder, a known name such as ``cl100k_base``)
    as a `LoadedTimeline`."""
    from tokviz.core.pretrained import open_timeline

    return open_timeline(path, pattern=pattern)


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
        text = utf8_argument(args.text, "TEXT")  # even when a file of that name exists
    else:
        data = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
        from tokviz.core import decode_utf8

        text = decode_utf8(data, name="<stdin>")
    timeline = _read_model(args.model, args.pattern)
    if args.step is not None and args.step > timeline.n_steps:
        from tokviz.core.registry import step_noun

        noun = step_noun(timeline, 1)
        raise UsageError(f"tokviz encode: --step {args.step} is past the last {noun} ({timeline.n_steps})")
    tok = timeline.tokenizer()
    fmt = args.format or "tokens"
    processes = choose_processes()  # a big text may be encoded (and written) by forked children too
    if fmt == "ids":  # the ids path: no tokens, no spans are computed
        from tokviz.core.pretrained.ids_path import encode_ids_text_like

        with collector_paused():
            sys.stdout.write(encode_ids_text_like(tok, text, step=args.step, specials_as_text=args.specials_as_text,
                                                  processes=processes))
        sys.stdout.write("\n")
        return 0
    if args.specials_as_text:
        from tokviz.core.special_tokens import encode_specials_as_text

        enc = encode_specials_as_text(tok, text, step=args.step)
    else:
        from tokviz.core.pretrained.ids_path import encode_once, write_json_once

        if fmt == "json":
            with collector_paused():
                done = write_json_once(tok, text, sys.stdout.write, step=args.step, processes=processes)
            if done:
                sys.stdout.write("\n")
                return 0
        with collector_paused():
            enc = encode_once(tok, text, step=args.step, processes=processes)
    if fmt == "json":
        with collector_paused():
            enc.write_json(sys.stdout.write, processes=processes)  # = json.dumps(enc.to_json()), streamed
        sys.stdout.write("\n")
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
    timeline = _read_model(args.model, args.pattern)
    # the tokenizer's own decoder (byte fallback, "▁", "##", ...), as its `decode` and the
    # reference library give it; special tokens are kept
    sys.stdout.write(timeline.tokenizer().decode(ids))
    sys.stdout.write("\n")
    return 0


def cmd_merges(args: argparse.Namespace) -> int:
    timeline = _read_model(args.model, args.pattern)
    if not timeline.has_counts:  # a loaded tokenizer: rank order, counts unknown
        _write_loaded_merges(timeline, sys.stdout, as_json=args.json)
        return 0
    from .algorithms import write_steps

    if not timeline.replays_merges:  # WordPiece scores, Unigram rounds
        write_steps(timeline, sys.stdout, as_json=args.json, format_token=_format_token)
        return 0
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


def _write_loaded_merges(timeline, out, *, as_json: bool) -> None:
    """A loaded tokenizer's merges in rank order; a token no single merge forms has no pair."""
    vocab = timeline.token_bytes()
    for s in timeline.steps:
        a, b = s.pair if s.pair is not None else (None, None)
        if as_json:
            out.write(json.dumps({
                "rank": s.rank, "pair": None if a is None else [a, b], "id": s.id,
                "pair_hex": None if a is None else [vocab[a].hex(), vocab[b].hex()],
                "token_hex": s.token.hex(), "count": None,
            }) + "\n")
        else:
            left, right = ("-", "-") if a is None else (_format_token(vocab[a]), _format_token(vocab[b]))
            out.write(f"{s.rank}\t{s.id}\t{left}\t{right}\tcount unknown\n")


def cmd_compare(args: argparse.Namespace) -> int:
    from .compare import run_compare
    return run_compare(args, _read_model, UsageError)


def cmd_chat(args: argparse.Namespace) -> int:
    from .chat import run_chat
    return run_chat(args)


def cmd_export(args: argparse.Namespace) -> int:
    from .export import run_export
    return run_export(args, _read_model, UsageError)


def cmd_gui(args: argparse.Namespace) -> int:
    from tokviz.app.gui import run_gui

    return run_gui(getattr(args, "file", None))


def cmd_desktop_entry(args: argparse.Namespace) -> int:
    """``--install-desktop-entry`` / ``--uninstall-desktop-entry``: the menu entry and its icon."""
    from tokviz.app.desktop_entry import install_desktop_entry, uninstall_desktop_entry

    if args.install_desktop_entry:
        for path in install_desktop_entry():
            print(f"wrote {path}")
        return 0
    removed = uninstall_desktop_entry()
    for path in removed:
        print(f"removed {path}")
    if not removed:
        print("no tokviz desktop entry to remove")
    return 0


def cmd_screenshot(args: argparse.Namespace) -> int:
    from tokviz.app.screenshots.workspaces import parse_size

    try:
        sizes = [parse_size(t) for t in args.size] if args.size else None
    except ValueError as exc:
        print(f"tokviz screenshot: {exc}", file=sys.stderr)
        return 2
    from tokviz.app.gui import run_screenshots

    return run_screenshots(Path(args.out), theme=args.theme, sizes=sizes)


def cmd_animate(args: argparse.Namespace) -> int:
    from .animate import run_animate  # classroom

    return run_animate(args)


def cmd_lesson(args: argparse.Namespace) -> int:
    """``tokviz lesson NAME`` opens the app on a guided lesson; ``--list`` prints them."""
    from tokviz.core.lessons.files import builtin_lessons, find_lesson

    lessons = builtin_lessons()
    if args.list:
        for lesson in lessons:
            print(f"{lesson.number:2d}  {lesson.name:22s} {lesson.title}")
        return 0
    if args.name is None:
        raise UsageError("tokviz lesson: give a lesson NAME or number (tokviz lesson --list shows them)")
    lesson = find_lesson(args.name, lessons)  # LessonError (a TokvizError): one line, exit 2
    from tokviz.app.gui import run_gui

    return run_gui(None, lesson=lesson.name)


HANDLERS = {
    "animate": cmd_animate,
    "lesson": cmd_lesson,
    "train": cmd_train,
    "encode": cmd_encode,
    "decode": cmd_decode,
    "merges": cmd_merges,
    "export": cmd_export,
    "compare": cmd_compare,
    "chat": cmd_chat,
    "gui": cmd_gui,
    "screenshot": cmd_screenshot,
}



def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if not argv:
            return cmd_gui(argparse.Namespace(file=None))
        if argv[0] not in COMMANDS and not argv[0].startswith("-"):
            check_arguments(argv[:1])
            if os.path.exists(argv[0]) and len(argv) == 1:
                return cmd_gui(argparse.Namespace(file=argv[0]))
            raise UsageError(
                f"tokviz: unknown command or file {argv[0]!r} (commands: {', '.join(COMMANDS)})"
            )
        check_arguments(argv)
        args = build_parser(argv[0] if argv[0] in LEAN_COMMANDS else None).parse_args(argv)
        if args.install_desktop_entry or args.uninstall_desktop_entry:
            if args.command is not None:
                raise UsageError("tokviz: --install-desktop-entry and --uninstall-desktop-entry take no command")
            return cmd_desktop_entry(args)
        if args.command is None:
            return cmd_gui(argparse.Namespace(file=None))
        return HANDLERS[args.command](args)
    except UsageError as exc:
        print(one_line(str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except TokvizError as exc:
        print(one_line(f"tokviz: {exc}"), file=sys.stderr)
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
    except OSError as exc:  # model and text files go through TokvizError: this is mostly the output
        print(os_error_line(exc), file=sys.stderr)
        return EXIT_USAGE


def os_error_line(exc: OSError | ValueError, *, output: bool = False) -> str:
    """The one line for an error `main` did not expect: the file it names, or the output when its
    errno says writing failed (or `output`: it came from flushing stdout)."""
    if getattr(exc, "filename", None):
        where = f"{exc.filename}: "
    elif output or getattr(exc, "errno", None) in OUTPUT_ERRNOS:
        where = "cannot write the output: "
    else:
        where = ""
    return one_line(f"tokviz: {where}{getattr(exc, 'strerror', None) or exc}")
