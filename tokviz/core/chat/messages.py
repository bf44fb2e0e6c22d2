"""Chat messages: reading MESSAGES.json and preparing messages the way transformers hands them to a template.

A conversation is a list of objects with a ``role`` (a string) and a ``content`` (a string, a list of
content blocks such as ``{"type": "text", "text": ...}``, or null with ``tool_calls``); other keys
(``tool_calls``, ``name``, ``reasoning_content``) are passed through. A file may also hold an object
with a ``messages`` list. Before rendering, keys whose value is null are dropped and a message's
reasoning is offered under ``reasoning_content`` and ``thinking`` (as transformers 5 does).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from tokviz.core.errors import TokvizError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


class MessagesError(TokvizError):
    """A conversation that is not a list of ``{"role", "content"}`` objects."""


def check_messages(value: object, name: str = "messages") -> list[dict]:
    """`value` as a list of message dicts, or `MessagesError` saying which message is wrong and how.

    >>> check_messages([{"role": "user", "content": "hi"}])
    [{'role': 'user', 'content': 'hi'}]
    """
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if not isinstance(value, list):
        raise MessagesError(f"{name}: expected a list of {{\"role\", \"content\"}} objects, got {json_kind(value)}")
    if not value:
        raise MessagesError(f"{name}: the conversation is empty; give at least one message")
    out = []
    for n, m in enumerate(value, 1):
        if not isinstance(m, Mapping):
            raise MessagesError(f"{name}: message {n} is {json_kind(m)}, not an object with \"role\" and \"content\"")
        role = m.get("role")
        if not isinstance(role, str) or not role:
            raise MessagesError(f"{name}: message {n} has no \"role\" string")
        if "content" not in m and not m.get("tool_calls"):
            raise MessagesError(f"{name}: message {n} ({role}) has no \"content\"")
        content = m.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise MessagesError(f"{name}: message {n} ({role}): \"content\" is {json_kind(content)}, not a string or "
                                "a list of content blocks")
        for key, text in (("role", role), ("content", content)):
            if isinstance(text, str) and not _is_text(text):
                raise MessagesError(f"{name}: message {n} ({role!r}): \"{key}\" holds a lone surrogate, which is not text")
        out.append(dict(m))
    return out


def _is_text(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_messages(path: str | os.PathLike) -> list[dict]:
    """The conversation in a JSON file (`MessagesError` for a missing, binary or malformed file)."""
    data = read_file_bytes(path, limit=MAX_MODEL_BYTES, error=MessagesError)
    return check_messages(parse_json(data, str(path), MessagesError), str(path))


def template_messages(messages: Sequence[Mapping]) -> list[dict]:
    """The messages as the template sees them: null values dropped, reasoning under both names."""
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if v is not None}
        reasoning = next((m[k] for k in REASONING_FIELDS if m.get(k) is not None), None)
        if reasoning is not None:
            m = {"thinking": reasoning, **m, "reasoning_content": reasoning}
        out.append(m)
    return out


def json_kind(value: object) -> str:
    """What a JSON value is, for error messages ("an object", "a list", ...)."""
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
            bool: "true/false", type(None): "null"}.get(type(value), type(value).__name__)
