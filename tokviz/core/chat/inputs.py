"""What a chat template is given besides the messages, checked as transformers checks it.

- ``tools``: a list of JSON-schema tool definitions (objects); transformers' conversion of Python
  functions into schemas is left out (a file holds schemas already).
- ``documents``: a list of objects (``{"title", "text"}`` by convention) for retrieval templates.
- ``continue_final_message``: the prompt stops inside the final message (or its field named by a
  string, e.g. ``"reasoning_content"``) so the model continues it. As in transformers
  (``render_jinja_template``): a tag is appended to the text to continue (to the last text block of
  a list of content blocks), the template renders, and the prompt is cut where the tag starts; when
  the template strips the whitespace after the text, the cut drops trailing whitespace too.

Each refusal is transformers' condition for it: an empty conversation, a tool or document that is not
an object, ``continue_final_message`` with ``add_generation_prompt``, a final message without the
field, a field the template never names, a template that drops the text to continue.
What this leaves out: rendering (`tokviz.core.chat.render`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes

from .messages import REASONING_FIELDS, MessagesError, json_kind
from .sandbox import TemplateError

CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "  # transformers' tag: the cut is found by the same text


def check_conversation(messages: Sequence, *, add_generation_prompt: bool, continue_final_message: bool | str) -> None:
    """`MessagesError` for what transformers refuses before rendering: no messages, or continuing
    the final message while also asking for a generation prompt."""
    if not messages:
        raise MessagesError("cannot apply a chat template to an empty conversation; give at least one message")
    if continue_final_message and add_generation_prompt:
        raise MessagesError("continue_final_message and add_generation_prompt exclude each other: continue the "
                            "final message, or start a new assistant turn")


def check_objects(value: object, what: str, name: str | None = None) -> list[dict] | None:
    """`value` (tools or documents) as a list of objects, None staying None; else `MessagesError`
    naming the first item that is not an object.

    >>> check_objects([{"title": "a", "text": "b"}], "document")
    [{'title': 'a', 'text': 'b'}]
    """
    if value is None:
        return None
    where = f"{name}: " if name else ""
    if not isinstance(value, list):
        raise MessagesError(f"{where}expected a list of {what} objects, got {json_kind(value)}")
    for n, item in enumerate(value, 1):
        if not isinstance(item, Mapping):
            raise MessagesError(f"{where}{what} {n} is {json_kind(item)}, not an object")
    return [dict(item) for item in value]


def read_objects(path: str | os.PathLike, what: str) -> list[dict]:
    """A JSON file of `what` objects (tools, documents): a list, or an object holding it under
    ``"<what>s"`` (`MessagesError` for a missing, binary or malformed file)."""
    data = parse_json(read_file_bytes(path, limit=MAX_MODEL_BYTES, error=MessagesError), str(path), MessagesError)
    if isinstance(data, Mapping) and f"{what}s" in data:
        data = data[f"{what}s"]
    return check_objects(data, what, str(path))


def continued_field(continue_final_message: bool | str) -> str | None:
    """The field to continue (``"content"`` for True), or None."""
    if not continue_final_message:
        return None
    return continue_final_message if isinstance(continue_final_message, str) else "content"


def tag_final_message(messages: list[dict], source: str, field: str) -> tuple[list[dict], str]:
    """`messages` (as the template sees them) with `CONTINUE_TAG` after the text to continue, and
    that text. The final message is copied, never changed in place."""
    last = dict(messages[-1])
    final = last.get(field)
    if final is None:
        raise MessagesError(f'continue_final_message: the final message has no "{field}" to continue')
    fields = [field]
    if field in REASONING_FIELDS:  # reasoning is passed under several names: tag each copy
        fields = [f for f in REASONING_FIELDS if last.get(f) == final]
    if not any(f in source for f in fields):
        raise TemplateError(f'continue_final_message: the template never reads "{field}", so it cannot be continued')
    if isinstance(final, (list, tuple)):
        blocks = [dict(b) if isinstance(b, Mapping) else b for b in final]
        for block in reversed(blocks):
            if isinstance(block, dict) and "text" in block:
                final = block["text"]
                if not isinstance(final, str):
                    raise MessagesError(f"continue_final_message: the last text block is {json_kind(final)}")
                block["text"] = final + CONTINUE_TAG
                break
        else:
            raise MessagesError("continue_final_message: the final message has no text block to continue")
        for f in fields:
            last[f] = blocks
    elif isinstance(final, str):
        for f in fields:
            last[f] = last[f] + CONTINUE_TAG
    else:
        raise MessagesError(f'continue_final_message: the final message\'s "{field}" is {json_kind(final)}, '
                            "not text")
    return [*messages[:-1], last], final


def continued_end(rendered: str, final: str) -> int:
    """Where the prompt stops in `rendered` (the template's output with the tag): at the tag, or
    before the whitespace the template put between the text and the tag.

    >>> continued_end("<s>Hi CONTINUE_FINAL_MESSAGE_TAG </s>", "Hi ")
    6
    >>> continued_end("Hi CONTINUE_FINAL_MESSAGE_TAG</s>", "Hi ")  # the template trimmed "Hi "
    2
    """
    tag = CONTINUE_TAG.strip()
    if final.strip() not in rendered or tag not in rendered:
        raise TemplateError("continue_final_message: the final message does not appear in the prompt (the template "
                            "deletes part of it)")
    at = rendered.rindex(tag)
    if rendered[at:at + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return at
    return len(rendered[:at].rstrip())
