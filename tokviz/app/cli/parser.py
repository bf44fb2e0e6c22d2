"""The ``tokviz`` command line's parsers: the top level's (`top_parser`: the global options and the
list of commands) and each command's own (`command_parser`).

Only the parser of the command that runs is built, so ``tokviz --help`` and ``--version`` import
no command's code and ``encode`` none of the trainer's. A command's options may come before,
between or after its positionals (``tokviz encode MODEL --ids TEXT``): its arguments are parsed
intermixed. A mistake in the arguments is a `UsageError` carrying the command's usage and one line
saying what is wrong (the nearest option, for one that is mistyped); exit status 2. What each
command does is in `tokviz.app.cli.main`.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable

from tokviz import __version__
from tokviz.core.text.corpus import ENCODING_ERRORS

from .arguments import MODEL_HELP, whole_number

COMMAND_HELP = {  # each command's line in ``tokviz --help``, and its --help's description
    "train": "train a BPE, WordPiece or Unigram tokenizer and save its timeline",
    "encode": "encode text with a saved model or a tokenizer",
    "decode": "decode ids with a saved model or a tokenizer",
    "merges": "list the merges (or Unigram rounds) of a saved model or a tokenizer",
    "gui": "open the application",
    "screenshot": "render the app offscreen to PNG files",
    "lesson": "open the app on a guided lesson (--list: the lessons)",
    "animate": "export the timeline replay of a model as a GIF or PNG frames",
    "export": "write a trained BPE model as tokenizer.json or .tiktoken",
    "compare": "compare tokenizers' efficiency on a text or a multilingual corpus",
    "chat": "render a conversation with a model's chat template, token by token",
    "diff": "find the first text two tokenizers (or one at two steps) encode differently, and why",
    "info": "what a tokenizer is: its pre-tokenizer family, fingerprint and warnings",
    "count": "count a corpus's pre-tokens into a file tokviz train --counts reads (TSV or Parquet)",
    "glitch": "rank a tokenizer's tokens by how likely a model never learned them (glitch tokens)",
}
COMMANDS = tuple(COMMAND_HELP)


class UsageError(Exception):
    """A command-line mistake: one line, after the command's usage when the parser found it; exit
    status 2."""

    def __init__(self, message: str, *, usage: str = "") -> None:
        super().__init__(message)
        self.usage = usage  # argparse's "usage: ..." lines, or "" for a mistake a command found


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # the usage and one line, raised for `main` to print
        raise UsageError(f"{self.prog}: {message}{self._nearest_option(message)}", usage=self.format_usage())

    def _nearest_option(self, message: str) -> str:
        """``; did you mean --ids?`` for a mistyped option in an "unrecognized arguments" message."""
        if not message.startswith("unrecognized arguments:"):
            return ""
        known = [o for o in self._option_string_actions if o.startswith("--")]
        for word in message.split(":", 1)[1].split():
            if word.startswith("--"):
                close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.75)
                if close:
                    return f"; did you mean {close[0]}?"
        return ""


def top_parser() -> argparse.ArgumentParser:
    """``tokviz [--version] [--install-desktop-entry | ...] [COMMAND ...]``: the commands are listed
    with their help line only (`main` gives a command's arguments to `command_parser`; here they are
    only kept, as ``rest``, so a misplaced command gets `main`'s message, not a parse error)."""
    p = _Parser(prog="tokviz", description="See how tokenizers work. With no command: open the application.",
                epilog="tokviz COMMAND --help shows a command's arguments.")
    p.add_argument("--version", action="version", version=f"tokviz {__version__}")
    desktop = p.add_mutually_exclusive_group()
    desktop.add_argument("--install-desktop-entry", action="store_true",
                         help="add tokviz (with its icon) to the desktop's application menu, in $XDG_DATA_HOME")
    desktop.add_argument("--uninstall-desktop-entry", action="store_true",
                         help="remove what --install-desktop-entry wrote")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=_Parser)
    for name, text in COMMAND_HELP.items():
        stub = sub.add_parser(name, help=text, add_help=False)
        stub.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return p


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of command `name` alone (``prog`` ``tokviz NAME``); parse with
    ``parse_intermixed_args``."""
    p = _Parser(prog=f"tokviz {name}", description=COMMAND_HELP[name][:1].upper() + COMMAND_HELP[name][1:] + ".")
    _ARGUMENTS[name](p)
    return p


def _train(t: argparse.ArgumentParser) -> None:
    from .algorithms import add_algorithm_options

    t.add_argument("files", nargs="*", metavar="FILE",
                   help="UTF-8 text to train on (or with --word-counts: 'word count' tables)")
    t.add_argument("--counts", action="extend", nargs="+", metavar="COUNTS",
                   help="train from pre-token count files instead of text (repeatable; they add up): "
                        "'text<TAB>count' TSV or .parquet, as tokviz count writes them")
    t.add_argument("-o", "--output", required=True, metavar="MODEL.json", help="the model file to write")
    t.add_argument("--word-counts", action="store_true", help="FILEs are 'word count' tables")
    t.add_argument("--encoding-errors", choices=ENCODING_ERRORS, default="strict",
                   help="strict: refuse a file that is not UTF-8; replace: read bad bytes as U+FFFD (default strict)")
    t.add_argument("--quiet", action="store_true", help="no progress bar and no notes on stderr")
    add_algorithm_options(t)  # --algorithm and every algorithm's declared settings


PATTERN_HELP = "split pattern of a .tiktoken file tokviz does not know"


def _encode(e: argparse.ArgumentParser) -> None:
    e.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    e.add_argument("text", nargs="?", metavar="TEXT", help="the text to encode (default: -f FILE, else stdin)")
    e.add_argument("-f", "--file", metavar="FILE", help="encode this UTF-8 file")
    e.add_argument("--step", type=whole_number, metavar="K", help="use only the first K merges (Unigram: round K)")
    e.add_argument("--pattern", metavar="REGEX", help=PATTERN_HELP)
    fmt = e.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_const", const="json", dest="format",
                     help="ids, token bytes (hex), character spans as one JSON object")
    fmt.add_argument("--ids", action="store_const", const="ids", dest="format", help="the ids on one line")
    fmt.add_argument("--tokens", action="store_const", const="tokens", dest="format",
                     help="the tokens on one line, whitespace marked as in the token view (␣ ↵ ⇥)")
    e.add_argument("--specials-as-text", action="store_true", help="encode special-token text as ordinary text")
    from .dropout import add_dropout_arguments

    add_dropout_arguments(e)  # --dropout P --seed S
    from tokviz.core.formats.offsets import OFFSET_CONVENTIONS  # encode loads a tokenizer anyway

    e.add_argument("--offsets", choices=OFFSET_CONVENTIONS,
                   help="add the offsets the reference library reports to the JSON: tokenizers' (start, end) "
                        "(a tokenizer.json), sentencepiece's (a .model), tiktoken's decode_with_offsets starts")
    e.epilog = "Default output: one 'id<TAB>token' line per token (JSON string escapes)."


def _decode(d: argparse.ArgumentParser) -> None:
    d.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    d.add_argument("ids", nargs="+", metavar="ID", help="token ids (spaces or commas between them)")
    d.add_argument("--pattern", metavar="REGEX", help=PATTERN_HELP)
    d.add_argument("--stream", action="store_true",
                   help="decode id by id as a server streams (tokenizers' DecodeStream): one 'id<TAB>text "
                        "it adds' line per id, the text empty while a character is incomplete")


def _merges(m: argparse.ArgumentParser) -> None:
    m.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    m.add_argument("--json", action="store_true", help="one JSON object per line (token bytes in hex)")
    m.add_argument("--pattern", metavar="REGEX", help=PATTERN_HELP)


def _export(x: argparse.ArgumentParser) -> None:
    from .export import add_export_arguments  # tokenizer.json, .tiktoken

    add_export_arguments(x, whole_number)


def _compare(c: argparse.ArgumentParser) -> None:
    from .compare import add_compare_arguments  # efficiency metrics

    add_compare_arguments(c, whole_number)


def _diff(d: argparse.ArgumentParser) -> None:
    from .diff import add_diff_arguments  # parity

    add_diff_arguments(d, whole_number)


def _count(c: argparse.ArgumentParser) -> None:
    from tokviz.core.text.split import SPLIT_CHOICES

    c.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text to count")
    c.add_argument("-o", "--output", required=True, metavar="COUNTS",
                   help="the file to write: .parquet (needs pyarrow), else 'text<TAB>count' TSV")
    c.add_argument("--split", default="gpt4", metavar="SPLIT",
                   help=f"the pre-tokenizer, as tokviz train's --split ({SPLIT_CHOICES}; default gpt4)")
    c.add_argument("--special", action="append", default=[], metavar="TOKEN",
                   help="special-token text to leave uncounted, as tokviz train's --special (repeatable)")
    c.add_argument("--encoding-errors", choices=ENCODING_ERRORS, default="strict",
                   help="strict: refuse a file that is not UTF-8; replace: read bad bytes as U+FFFD (default strict)")


def _glitch(g: argparse.ArgumentParser) -> None:
    from .glitch import add_glitch_arguments  # the glitch finder

    add_glitch_arguments(g, whole_number)


def _info(i: argparse.ArgumentParser) -> None:
    i.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    i.add_argument("--pattern", metavar="REGEX", help=PATTERN_HELP)
    i.add_argument("--json", action="store_true", help="one JSON object instead of lines")


def _chat(c: argparse.ArgumentParser) -> None:
    from .chat import add_chat_arguments  # chat templates

    add_chat_arguments(c)


def _animate(a: argparse.ArgumentParser) -> None:
    from .animate import add_animate_arguments  # classroom

    add_animate_arguments(a)


def _gui(g: argparse.ArgumentParser) -> None:
    g.add_argument("file", nargs="?", metavar="FILE", help="a corpus, a saved model or a .tokviz session")


def _screenshot(s: argparse.ArgumentParser) -> None:
    s.add_argument("--out", required=True, metavar="DIR", help="the folder to write the PNG files to")
    s.add_argument("--theme", choices=("light", "dark"), default="light", help="(default light)")
    s.add_argument("--size", action="append", metavar="WxH",
                   help="window size of the workspace pictures (repeatable; default 1280x800 and 1920x1080)")


def _lesson(lesson: argparse.ArgumentParser) -> None:
    lesson.add_argument("name", nargs="?", metavar="NAME", help="a lesson name or number")
    lesson.add_argument("--list", action="store_true", help="print the lessons and exit")


_ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "train": _train, "encode": _encode, "decode": _decode, "merges": _merges, "gui": _gui,
    "screenshot": _screenshot, "lesson": _lesson, "animate": _animate, "export": _export,
    "compare": _compare, "chat": _chat, "info": _info, "diff": _diff, "glitch": _glitch,
    "count": _count,
}
