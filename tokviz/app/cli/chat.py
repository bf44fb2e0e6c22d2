"""``tokviz chat MODEL -f MESSAGES.json [--add-generation-prompt | --continue-final-message] [--tools TOOLS.json]
[--documents DOCUMENTS.json] [--template NAME] [--ids | --json] [--assistant-mask] [--lint] [--specials-as-text]``.

Renders a conversation with the chat template of a Hugging Face model folder, exactly as
transformers' ``apply_chat_template`` does (tools, documents, a continued final message, the named
template sets: ``tool_use`` when tools are given), and encodes it with tokviz's own tokenizer
(`tokviz.core.chat`). Output: the prompt text exactly (no newline added) by default; ``--ids``: the
ids on one line; ``--json``: ``{"text", "ids", "tokens_hex", "spans", "special", "messages",
"message_tokens", "message_status", "template", "generation", "assistant_mask"}`` (with ``--lint``
also ``"findings"``). ``--assistant-mask`` prints transformers' assistant mask (1 for each token
inside a ``{% generation %}`` block) as 0/1 on one line: after the ids with ``--ids``, instead of the
text otherwise. ``--lint`` prints the findings one per line (after the ids with ``--ids``, instead of
the text otherwise) and exits with 1 when one is a warning or an error. A folder without a template,
a template that fails (with its line) or passes a limit of its process (time, CPU, memory:
`tokviz.core.chat.TemplateStopped`), malformed messages, tools or documents, inputs transformers
refuses (an empty conversation, a generation prompt with a continued message): exit 2 with one
line, as every tokviz command.
"""

from __future__ import annotations

import argparse
import json
import sys

EXIT_FINDINGS = 1


def add_chat_arguments(c: argparse.ArgumentParser) -> None:
    """``tokviz chat``'s arguments (`tokviz.app.cli.parser` makes its parser)."""
    c.add_argument("model", metavar="MODEL", help="a model folder holding tokenizer.json and tokenizer_config.json")
    c.add_argument("-f", "--file", required=True, metavar="MESSAGES.json",
                   help='a JSON list of {"role": ..., "content": ...} objects')
    c.add_argument("--add-generation-prompt", action="store_true",
                   help="end with the start of an assistant turn (for generating a reply)")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--ids", action="store_const", const="ids", dest="format", help="the ids on one line")
    fmt.add_argument("--json", action="store_const", const="json", dest="format",
                     help="text, ids, token bytes, spans and each message's span as JSON")
    c.add_argument("--lint", action="store_true", help="report doubled BOS, missing EOS, special-token text in "
                   "messages, whitespace next to special tokens, a trailing space, dropped messages")
    c.add_argument("--specials-as-text", action="store_true",
                   help="encode special-token text inside messages as text (the template's own stay tokens)")
    c.add_argument("--template", metavar="NAME", help="which of the model's named chat templates (default: "
                   "default, or tool_use when --tools is given and the model has one)")
    c.add_argument("--tools", metavar="TOOLS.json", help="a JSON list of tool definitions (JSON schemas) for the "
                   "template's tools variable")
    c.add_argument("--documents", metavar="DOCUMENTS.json", help='a JSON list of {"title": ..., "text": ...} objects '
                   "for the template's documents variable")
    c.add_argument("--continue-final-message", action="store_true",
                   help="end inside the final message (no end-of-turn) so the model continues it")
    c.add_argument("--continue-field", metavar="FIELD", help="continue this field of the final message instead of "
                   "its content (e.g. reasoning_content); implies --continue-final-message")
    c.add_argument("--assistant-mask", action="store_true", help="print the assistant mask (1 for each token inside "
                   "a {%% generation %%} block) as 0/1 on one line")


def run_chat(args: argparse.Namespace) -> int:
    """``tokviz chat``; errors are `TokvizError`s (one line, exit 2, from ``main``)."""
    # here, not at the top: ``tokviz chat --help`` needs none of it (Jinja, numpy, the tokenizers)
    from tokviz.core.chat import default_runner, lint_chat, load_chat_model, read_messages, read_objects, render_chat

    messages = read_messages(args.file)
    tools = read_objects(args.tools, "tool") if args.tools else None
    documents = read_objects(args.documents, "document") if args.documents else None
    default_runner().start()  # the template's process starts while the model loads
    model = load_chat_model(args.model, template=args.template)
    render = render_chat(model, messages, add_generation_prompt=args.add_generation_prompt, tools=tools,
                         documents=documents, continue_final_message=args.continue_field or args.continue_final_message,
                         specials_as_text=args.specials_as_text)
    findings = lint_chat(model, messages, render) if args.lint else []
    out = sys.stdout
    if args.format == "json":
        d = render.to_json()
        if args.lint:
            d["findings"] = [f.to_json() for f in findings]
        out.write(json.dumps(d) + "\n")
    elif args.format == "ids":
        out.write(" ".join(map(str, render.ids)) + "\n")
    elif not args.lint and not args.assistant_mask:
        out.write(render.text)
    if args.assistant_mask and args.format != "json":
        out.write(" ".join(map(str, render.assistant_mask)) + "\n")
        if not render.has_generation:  # transformers warns the same way and gives all zeros
            print(f"tokviz: the chat template {render.template_name!r} has no {{% generation %}} block: "
                  "the assistant mask is all 0", file=sys.stderr)
    if args.lint and args.format != "json":
        for f in findings:
            out.write(f.one_line().replace("\n", "\\n") + "\n")
        if not findings:
            out.write("no findings\n")
    serious = any(f.severity in ("error", "warning") for f in findings)
    return EXIT_FINDINGS if serious else 0
