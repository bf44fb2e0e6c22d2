"""The ``tokviz`` command line: train, encode, decode, merges, export; no arguments opens the app.

Errors the user can fix exit with status 2 and one line on stderr (no traceback), and leave no
partial output file behind. The GUI is imported only when a GUI command runs, so the scripting
commands start fast and work without a display. The arguments are `tokviz.app.cli.parser`'s.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from tokviz.core.errors import TokvizError
from tokviz.core.gc_pause import collector_paused
from tokviz.core.jit import announce_compiling_to
from tokviz.core.processes.parallel import choose_processes
from tokviz.core.text.corpus import read_text
from tokviz.core.text.file_pieces import file_pieces

from .arguments import check_arguments, utf8_argument
from .messages import one_line
from .parser import COMMANDS, UsageError, command_parser, top_parser

if TYPE_CHECKING:
    from .progress import ProgressBar

EXIT_USAGE = 2
# writing stdout can fail so (EDQUOT is not defined on every platform)
OUTPUT_ERRNOS = tuple(getattr(errno, n) for n in ("ENOSPC", "EIO", "EFBIG", "EDQUOT") if hasattr(errno, n))
COMPILING_NOTE = "tokviz: compiling fast kernels, once per machine (up to a minute)..."
REPLACE_HINT = "use --encoding-errors replace to read it anyway"  # train's option; encode has none


# -- commands ---------------------------------------------------------------------------------


def cmd_train(args: argparse.Namespace) -> int:
    from .progress import ProgressBar
    from .warm_up import counted_here, then_saving_code, warm_up_of

    bar = ProgressBar(sys.stderr, enabled=not args.quiet)
    warm_up = warm_up_of(args)
    loaded = None
    if warm_up is not None and counted_here(args):  # numba's import runs beside everything up to the training
        loaded, warm_up = bar.load_kernels_aside(partial(then_saving_code, warm_up)), None
    try:
        training, timeline, out = _prepared_training(args, bar, warm_up)
    except BaseException:
        bar.close_notice()  # the error is said now: a first compilation on the warm-up's thread is not waited for
        raise
    if loaded is not None:
        loaded()
    bar.start(training.budget)
    training.run(each=lambda: bar.update(timeline.n_steps))  # WordPiece, Unigram: no collector passes between steps
    bar.finish(timeline.last_step, timeline.vocab_size)  # Unigram: rounds after the seed, as the timeline counts
    from tokviz.core.model_files import save_model  # (imported late: it loads numpy, which counting does not need)

    save_model(timeline, out)
    return 0


def _prepared_training(args: argparse.Namespace, bar: ProgressBar, warm_up: Callable[[], object] | None):
    """`cmd_train` up to the first step: the arguments checked, the corpus read, `warm_up` run (the
    kernels not loading on a thread already), the corpus counted and the trainer set up; returns the
    training, its timeline and the output path."""
    from tokviz.core.io.safe_files import same_file
    from tokviz.core.registry import SPECS, make_training, step_noun
    from tokviz.core.text.chunks import counts_alike_in_pieces
    from tokviz.core.text.corpus import parse_word_counts

    from .algorithms import train_settings

    parallel = getattr(args, "parallel", None)  # a setting: the training reads the parallel corpus itself
    if parallel is not None and (args.files or args.counts):
        raise UsageError("tokviz train: --parallel FILE is the corpus; give no other FILEs nor --counts")
    if bool(args.files) == bool(args.counts) and parallel is None:
        raise UsageError("tokviz train: give text FILEs or --counts COUNTS files, not both (nor neither)")
    if args.counts and args.word_counts:
        raise UsageError("tokviz train: --word-counts reads FILEs; count files need no --word-counts")
    counts = None
    if args.counts:
        from tokviz.core.text.count_files import read_counts

        counts = read_counts(args.counts)
        if counts.split is not None and args.split is None:
            args.split = counts.split  # the split the chunks were made with
    settings = train_settings(args, UsageError)  # BPE, WordPiece or Unigram settings
    if counts is not None and counts.split is not None and counts.split != settings.split:
        raise UsageError(f"tokviz train: the counts were made with --split {counts.split}, not "
                         f"{settings.split}; train with --split {counts.split} or count again")
    out = Path(args.output)
    if out.is_dir():
        raise UsageError(f"tokviz train: output {out} is a folder; give a file name")
    if not out.parent.exists() and str(out.parent):
        raise UsageError(f"tokviz train: output folder {out.parent} does not exist")
    for f in [*args.files, *([parallel] if parallel is not None else [])]:
        if Path(f).is_file() and same_file(f, out):
            raise UsageError(f"tokviz train: output {out} is the input file {f}; give another name")
    _check_writable(out)  # fail now, not after a long training run
    bar.unit = step_noun(settings)
    in_pieces = (counts is None and not args.word_counts
                 and SPECS[args.algorithm].pieces_train_alike
                 and counts_alike_in_pieces(settings.split, settings.special_tokens))
    texts = _read_corpus(args.files, args.encoding_errors, in_pieces=in_pieces)
    if warm_up is not None:  # say it when the kernels must be compiled, after the checks and the reading
        bar.load_kernels(warm_up)
    if in_pieces:
        # Counted here, before the trainer's modules (numpy among them) load: a forked counting
        # child starts as a copy of this process, which the tree's memory then holds twice (23 MB
        # here, 37 MB with numpy and the trainers). The counts train as the text does (`ChunkCounts`).
        from tokviz.core.text.chunks import ChunkCounts, count_chunks
        from tokviz.core.text.split import parse_split

        bar.stage("counting chunks")
        table = count_chunks(texts, parse_split(settings.split), specials=settings.special_tokens,
                             processes=choose_processes(), progress=bar.counting)
        del texts
        training = make_training(settings, table=ChunkCounts(table))
        del table  # (the training's copy is let go once set up)
        timeline = training.prepare(processes=1)
        return training, timeline, out
    if counts is not None:
        from tokviz.core.text.chunks import ChunkCounts

        # chunks of this split are used as they are; other texts are split as words are
        training = make_training(settings, table=ChunkCounts(counts.table) if counts.split else counts.table)
    elif args.word_counts:
        table: dict[str, int] = {}
        for name, text in zip(args.files, texts):
            for w, n in parse_word_counts(text, name=name).items():
                table[w] = table.get(w, 0) + n
        training = make_training(settings, table=table)
    else:
        training = make_training(settings, texts=texts)
    del texts  # the training releases its texts once counted; keep no copy here
    bar.stage("counting chunks")
    timeline = training.prepare(progress=bar.counting, processes=choose_processes())
    return training, timeline, out


def _read_corpus(files: Sequence[str], errors: str, *, in_pieces: bool) -> list:
    """The texts of `files`: each file whole, or `in_pieces` (`file_pieces.file_pieces`, read as they
    are counted: for a split whose chunks end where the pieces are cut, so they count as the whole)."""
    if not in_pieces:
        return [read_text(f, errors=errors, hint=REPLACE_HINT) for f in files]
    return [piece for f in files for piece in file_pieces(f, errors=errors, hint=REPLACE_HINT)]


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
    from tokviz.core.loading import open_timeline

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
    sampled = None
    if args.dropout is not None or args.seed is not None:  # a BPE-dropout sample
        from .dropout import sampled_encoding

        sampled = sampled_encoding(tok, text, args, UsageError)
    if args.offsets is not None and args.format not in (None, "json"):
        raise UsageError(f"tokviz encode: --offsets gives JSON; it goes with --json, not --{args.format}")
    fmt = "json" if args.offsets else args.format or "table"  # default: one "id<TAB>token" line per token
    processes = choose_processes()  # a big text may be encoded (and written) by forked children too
    if fmt == "ids" and sampled is None:  # the ids path: no tokens, no spans are computed
        from tokviz.core.algorithm.ids_path import encode_ids_text_like

        with collector_paused():
            sys.stdout.write(encode_ids_text_like(tok, text, step=args.step, specials_as_text=args.specials_as_text,
                                                  processes=processes))
        sys.stdout.write("\n")
        return 0
    if sampled is not None:
        enc = sampled
    elif args.specials_as_text:
        from tokviz.core.special_tokens import encode_specials_as_text

        enc = encode_specials_as_text(tok, text, step=args.step)
    else:
        from tokviz.core.algorithm.ids_path import encode_once, write_json_once

        if fmt == "json" and not args.offsets:
            with collector_paused():
                done = write_json_once(tok, text, sys.stdout.write, step=args.step, processes=processes)
            if done:
                sys.stdout.write("\n")
                return 0
        with collector_paused():
            enc = encode_once(tok, text, step=args.step, processes=processes)
    if fmt == "json" and args.offsets:  # the reference library's offsets beside tokviz's spans
        from tokviz.core.formats.offsets import reference_offsets

        offsets = reference_offsets(tok, enc, args.offsets, text=text, step=args.step)
        print(json.dumps({**enc.to_json(), "offsets": offsets}, ensure_ascii=False))
    elif fmt == "json":
        with collector_paused():
            enc.write_json(sys.stdout.write, processes=processes)  # = json.dumps(enc.to_json()), streamed
        sys.stdout.write("\n")
    elif fmt == "ids":
        print(" ".join(map(str, enc.ids)))
    elif fmt == "tokens":  # one line, as the token view shows them: "Token izers ␣are ␣fun"
        from tokviz.core.display.tokens import visible_token

        print(" ".join(visible_token(t) for t in enc.tokens))
    else:
        for tid, data in zip(enc.ids, enc.tokens):
            print(f"{tid}\t{_format_token(data)}")
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
    if args.stream:  # as a server streams output: "id<TAB>text it adds", empty while a character is incomplete
        from tokviz.core.decode_stream import DecodeStream

        stream = DecodeStream(timeline.tokenizer())
        for tid in ids:
            print(f"{tid}\t{_format_token((stream.step(tid) or '').encode('utf-8', 'surrogateescape'))}")
        return 0
    # the tokenizer's own decoder (byte fallback, "▁", "##", ...), as its `decode` and the
    # reference library give it; special tokens are kept
    sys.stdout.write(timeline.tokenizer().decode(ids))
    sys.stdout.write("\n")
    return 0


def cmd_merges(args: argparse.Namespace) -> int:
    from .merges import write_merges

    write_merges(_read_model(args.model, args.pattern), sys.stdout, as_json=args.json)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .compare import run_compare
    return run_compare(args, _read_model, UsageError)


def cmd_diff(args: argparse.Namespace) -> int:
    from .diff import run_diff
    return run_diff(args, _read_model, UsageError)


def cmd_info(args: argparse.Namespace) -> int:
    from .info import run_info
    return run_info(args, _read_model)


def cmd_count(args: argparse.Namespace) -> int:
    from tokviz.core.io.safe_files import same_file
    from tokviz.core.text.chunks import count_chunks, counts_alike_in_pieces
    from tokviz.core.text.count_files import write_counts
    from tokviz.core.text.split import parse_split

    splitter = parse_split(args.split)  # SplitError: one line
    out = Path(args.output)
    for f in args.files:
        if Path(f).is_file() and out.exists() and same_file(f, out):
            raise UsageError(f"tokviz count: output {out} is the input file {f}; give another name")
    _check_writable(out)
    in_pieces = counts_alike_in_pieces(args.split, args.special)
    counts = count_chunks(_read_corpus(args.files, args.encoding_errors, in_pieces=in_pieces), splitter,
                          specials=tuple(args.special), processes=choose_processes())  # pieces let go as counted
    write_counts(out, counts, split=args.split)
    print(f"{len(counts):,} pre-tokens, {sum(counts.values()):,} in all -> {out}", file=sys.stderr)
    return 0


def cmd_glitch(args: argparse.Namespace) -> int:
    from .glitch import run_glitch
    return run_glitch(args, _read_model)


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
    "info": cmd_info,
    "glitch": cmd_glitch,
    "count": cmd_count,
    "diff": cmd_diff,
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
        announce_compiling_to(lambda: print(COMPILING_NOTE, file=sys.stderr, flush=True))
        if argv[0] in COMMANDS:  # only this command's parser is built (and its code imported)
            return HANDLERS[argv[0]](command_parser(argv[0]).parse_intermixed_args(argv[1:]))
        args = top_parser().parse_args(argv)  # --help, --version, the desktop entry
        if args.install_desktop_entry or args.uninstall_desktop_entry:
            if args.command is not None:
                raise UsageError("tokviz: --install-desktop-entry and --uninstall-desktop-entry take no command")
            return cmd_desktop_entry(args)
        if args.command is None:
            return cmd_gui(argparse.Namespace(file=None))
        raise UsageError(f"tokviz: give the options of {args.command} after it (tokviz {args.command} --help)")
    except UsageError as exc:
        sys.stderr.write(exc.usage)  # argparse's usage lines when the parser found the mistake
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
