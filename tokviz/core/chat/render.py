"""`render_chat`: a conversation rendered by a model's chat template and encoded, with each message located.

The text and ids are what transformers' ``apply_chat_template(messages, tools=..., documents=...,
add_generation_prompt=..., continue_final_message=..., tokenize=True)`` gives: the template
(``tool_use`` of a named set when tools are given, `ChatModel.template_for`) rendered in the sandbox
(`tokviz.core.chat.sandbox`), inside a child process with hard limits (`tokviz.core.chat.contained`;
by default the process's own runner), with ``messages``, ``tools``, ``documents``,
``add_generation_prompt`` and the named special tokens (``bos_token``, ...), cut inside the final
message when continuing it (`tokviz.core.chat.inputs`), then encoded with ``add_special_tokens=False``
and every added token recognised. With ``specials_as_text`` the special-token strings a message holds
are encoded as text while the template's own control tokens stay tokens. The ``{% generation %}``
blocks give the assistant mask (``return_assistant_tokens_mask``: every token overlapping a block).

Where does each message land in the prompt? The template is rendered a second time with every text
content wrapped in two private-use characters (``U+F0000 + 2i`` before, ``+ 1`` after message i).
If removing them gives back the real prompt, their positions are the messages' spans exactly; if
not, the template changed the content, and the markers are moved inside the content's leading and
trailing whitespace (a template that strips it renders the same); failing both, each message's text
is searched in order. A message whose markers are both missing was dropped by the template.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import regex

from tokviz.core.encoding import Encoding

from .contained import TemplateRunner, TemplateStopped, default_runner
from .folder import ChatModel
from .inputs import check_conversation, check_objects, continued_end, continued_field, tag_final_message
from .messages import template_messages
from .sandbox import DEFAULT_TIMEOUT, TemplateError, has_generation_block

_MARK = 0xF0000  # message i: U+F0000 + 2i before its content, + 1 after
MAX_MARKED = 0x7FFE  # messages located by markers (plane 15 has room for this many pairs)
_MARKS = regex.compile("[\U000f0000-\U000ffffd]")

# How a message's content was found in the prompt (`MessageSpan.status`).
VERBATIM = "verbatim"  # rendered as written: the span is exact
STRIPPED = "stripped"  # rendered without its leading/trailing whitespace: the span is exact
FOUND = "found"  # the template changed the text around it; found by searching
CHANGED = "changed"  # the template renders a changed form of it (cut, case, ...): its span when known
DROPPED = "dropped"  # the template does not render it
NOT_TEXT = "not text"  # content blocks or tool calls: not located


@dataclass(frozen=True)
class MessageSpan:
    """Where message `index` is: `span` in characters of the prompt, `tokens` as ``[first, end)``
    token indices (every token overlapping the span), or None."""

    index: int
    role: str
    status: str
    span: tuple[int, int] | None = None
    tokens: tuple[int, int] | None = None

    @property
    def n_tokens(self) -> int:
        return 0 if self.tokens is None else self.tokens[1] - self.tokens[0]


@dataclass
class ChatRender:
    """A rendered and encoded conversation."""

    text: str
    encoding: Encoding
    messages: list[MessageSpan]
    add_generation_prompt: bool = False
    specials_as_text: bool = False
    template_name: str = "default"
    variables: dict = field(default_factory=dict)  # what the template was given (messages excluded)
    generation: list[tuple[int, int]] = field(default_factory=list)  # the generation blocks' character spans
    has_generation: bool = False  # the template has a ``{% generation %}`` block
    continue_final_message: bool | str = False

    @functools.cached_property
    def assistant_mask(self) -> list[int]:
        """1 for every token overlapping a generation block, else 0 (transformers'
        ``assistant_masks``, by the same single pass over blocks in the order they ended)."""
        spans = self.generation
        mask = [0] * len(self.encoding.ids)
        k = 0
        for i, (start, end) in enumerate(self.encoding.spans):
            while k < len(spans) and start >= spans[k][1]:
                k += 1
            if k == len(spans):
                break
            if end > spans[k][0]:
                mask[i] = 1
        return mask

    @property
    def ids(self) -> list[int]:
        return self.encoding.ids

    @property
    def template_tokens(self) -> int:
        """Tokens that belong to no message: what the template adds."""
        inside = set()
        for m in self.messages:
            if m.tokens is not None:
                inside.update(range(*m.tokens))
        return len(self.encoding.ids) - len(inside)

    def to_json(self) -> dict:
        """``{"text", "ids", "tokens_hex", "spans", "special", "messages", "message_tokens",
        "message_status", "template", "generation", "assistant_mask"}``: spans in characters of the
        text, message spans ``[start, end]`` or null, the generation blocks' ``[start, end]``."""
        return {
            "text": self.text,
            **self.encoding.to_json(),
            "special": list(self.encoding.special),
            "messages": [list(m.span) if m.span is not None else None for m in self.messages],
            "message_tokens": [list(m.tokens) if m.tokens is not None else None for m in self.messages],
            "message_status": [m.status for m in self.messages],
            "template": self.template_name,
            "generation": [list(g) for g in self.generation],
            "assistant_mask": self.assistant_mask,
        }


def template_variables(model: ChatModel, *, add_generation_prompt: bool, tools: list | None = None,
                       documents: list | None = None) -> dict:
    """Everything but the messages: the named special tokens, then transformers' arguments."""
    return {**model.special_tokens, "tools": tools, "documents": documents, "add_generation_prompt": add_generation_prompt}


@dataclass(frozen=True)
class _Job:
    """One render, checked and prepared: the template, its variables, the messages it sees (the
    final one tagged when continuing it) and the text to continue."""

    name: str
    source: str
    variables: dict
    messages: list[dict]
    final: str | None


def _prepare(model: ChatModel, messages: Sequence[Mapping], *, add_generation_prompt: bool, tools, documents,
             continue_final_message: bool | str) -> _Job:
    check_conversation(messages, add_generation_prompt=add_generation_prompt,
                       continue_final_message=continue_final_message)
    tools, documents = check_objects(tools, "tool"), check_objects(documents, "document")
    name = model.template_for(tools)
    source = model.templates[name]
    variables = template_variables(model, add_generation_prompt=add_generation_prompt, tools=tools,
                                   documents=documents)
    prepared = template_messages(messages)
    final = None
    if (key := continued_field(continue_final_message)) is not None:
        prepared, final = tag_final_message(prepared, source, key)
    return _Job(name, source, variables, prepared, final)


def render_text(model: ChatModel, messages: Sequence[Mapping], *, add_generation_prompt: bool = False,
                tools: list | None = None, documents: list | None = None,
                continue_final_message: bool | str = False, timeout: float = DEFAULT_TIMEOUT,
                runner: TemplateRunner | None = None) -> str:
    """The prompt as text (``apply_chat_template(..., tokenize=False)``); `MessagesError` for what
    transformers refuses before rendering (an empty conversation, a tool that is not an object, ...)."""
    job = _prepare(model, messages, add_generation_prompt=add_generation_prompt, tools=tools, documents=documents,
                   continue_final_message=continue_final_message)
    text = (runner or default_runner()).render(job.source, {**job.variables, "messages": job.messages},
                                               timeout=timeout)
    return text if job.final is None else text[:continued_end(text, job.final)]


def render_chat(model: ChatModel, messages: Sequence[Mapping], *, add_generation_prompt: bool = False,
                tools: list | None = None, documents: list | None = None,
                continue_final_message: bool | str = False, specials_as_text: bool = False,
                timeout: float = DEFAULT_TIMEOUT, should_stop: Callable[[], bool] | None = None,
                runner: TemplateRunner | None = None) -> ChatRender:
    """Render, locate every message, encode. `TemplateError` when the template fails
    (`TemplateStopped` when it passed a hard limit); `MessagesError` for inputs transformers refuses;
    `Cancelled` when `should_stop()` turns true while the template runs (`runner`: the process's own
    runner by default)."""
    runner = runner or default_runner()
    job = _prepare(model, messages, add_generation_prompt=add_generation_prompt, tools=tools, documents=documents,
                   continue_final_message=continue_final_message)
    rendered = runner.render_tracked(job.source, {**job.variables, "messages": job.messages}, timeout=timeout,
                                     should_stop=should_stop)
    full = rendered.text
    located = locate_messages(job.source, job.variables, job.messages, full, timeout=timeout,
                              should_stop=should_stop, runner=runner)
    text, generation = full, list(rendered.generation)
    if job.final is not None:
        cut = continued_end(full, job.final)
        text = full[:cut]
        located = _cut_spans(located, text, messages[-1])
        generation = [(min(a, cut), min(b, cut)) for a, b in generation]
    literal = [m.span for m in located if m.span is not None] if specials_as_text else ()
    enc = model.tokenizer.encode(text, add_special_tokens=False, literal_spans=literal)
    ranges = token_ranges(enc, [m.span for m in located])
    spans = [MessageSpan(m.index, m.role, m.status, m.span, r) for m, r in zip(located, ranges)]
    return ChatRender(text, enc, spans, add_generation_prompt, specials_as_text, job.name, job.variables, generation,
                      has_generation_block(job.source), continue_final_message)


def _cut_spans(located: list[MessageSpan], text: str, last: Mapping) -> list[MessageSpan]:
    """The message spans in `text`, a prompt cut inside the final message: a span past the cut is
    dropped, one across it ends there; the final message's content (located with the tag) says
    again how it landed.

    >>> m = [MessageSpan(0, "user", VERBATIM, (0, 2)), MessageSpan(1, "assistant", VERBATIM, (3, 38))]
    >>> [x.span for x in _cut_spans(m, "Hi The colour is", {"content": "The colour is "})]
    [(0, 2), (3, 16)]
    """
    cut = len(text)
    out = []
    for m in located:
        if m.span is None or (m.span[0] >= cut and m.span[1] > m.span[0]):
            out.append(m if m.span is None else MessageSpan(m.index, m.role, DROPPED))
            continue
        span = (m.span[0], min(m.span[1], cut))
        status = m.status
        content = _content(last)
        if m.index == len(located) - 1 and content is not None and status != FOUND:
            piece = text[span[0]:span[1]]
            status = VERBATIM if piece == content else STRIPPED if piece == content.strip() else CHANGED
        out.append(MessageSpan(m.index, m.role, status, span))
    return out


def token_range(enc: Encoding, span: tuple[int, int] | None) -> tuple[int, int] | None:
    """``[first, end)`` indices of the tokens overlapping `span` (an empty span: an empty range
    where it sits).

    >>> e = Encoding([1, 2, 3], [b"a", b"bc", b"d"], [(0, 1), (1, 3), (3, 4)])
    >>> token_range(e, (2, 3)), token_range(e, (1, 1))
    ((1, 2), (1, 1))
    """
    return token_ranges(enc, [span])[0]


def token_ranges(enc: Encoding, spans: Sequence[tuple[int, int] | None]) -> list[tuple[int, int] | None]:
    """`token_range` of each span (the token offsets are indexed once)."""
    ends = [e for _, e in enc.spans]
    starts = [s for s, _ in enc.spans]
    out: list[tuple[int, int] | None] = []
    for span in spans:
        if span is None:
            out.append(None)
            continue
        a, b = span
        first = bisect.bisect_right(ends, a)
        out.append((first, first) if a == b else (first, max(first, bisect.bisect_left(starts, b, lo=first))))
    return out


# -- locating messages ------------------------------------------------------------------------


def _content(m: Mapping) -> str | None:
    c = m.get("content")
    return c if isinstance(c, str) else None


def _markable(messages: Sequence[Mapping]) -> list[bool]:
    return [i < MAX_MARKED and (c := _content(m)) is not None and not _MARKS.search(c)
            for i, m in enumerate(messages)]


def _marked(messages: Sequence[Mapping], ok: list[bool], inner: bool) -> list[dict]:
    out = []
    for i, m in enumerate(messages):
        c = _content(m)
        if ok[i] and c is not None:
            start, end = chr(_MARK + 2 * i), chr(_MARK + 2 * i + 1)
            if inner:
                core = c.strip()
                lead = c[: len(c) - len(c.lstrip())] if core else c
                c = lead + start + core + end + c[len(lead) + len(core):]
            else:
                c = start + c + end
            m = {**m, "content": c}
        out.append(dict(m))
    return out


def _unmark(marked: str) -> tuple[str, dict[int, int], dict[int, int]]:
    """The text without markers, and where each message's first start / end marker was."""
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    parts, pos = [], 0
    for removed, m in enumerate(_MARKS.finditer(marked)):
        k = ord(m.group()) - _MARK
        (ends if k % 2 else starts).setdefault(k // 2, m.start() - removed)
        parts.append(marked[pos:m.start()])
        pos = m.end()
    parts.append(marked[pos:])
    return "".join(parts), starts, ends


def _render_marked(runner: TemplateRunner, source: str, variables: dict, messages: list[dict], timeout: float,
                   should_stop):
    try:
        return _unmark(runner.render(source, {**variables, "messages": messages}, timeout=timeout,
                                     should_stop=should_stop))
    except TemplateStopped:  # a template that passes a hard limit here is as hostile as anywhere
        raise
    except TemplateError:  # the template treats the marked text differently: search instead
        return None


def locate_messages(source: str, variables: dict, messages: Sequence[Mapping], text: str, *,
                    timeout: float = DEFAULT_TIMEOUT, should_stop: Callable[[], bool] | None = None,
                    runner: TemplateRunner | None = None) -> list[MessageSpan]:
    """Each message's place in `text`, the template's rendering of `messages` (see the module
    docstring for how), rendered by `runner` (the process's own by default)."""
    runner = runner or default_runner()
    # private-use characters already in the prompt would pass for markers: search instead
    ok = _markable(messages) if not _MARKS.search(text) else [False] * len(messages)
    roles = [str(m.get("role", "")) for m in messages]
    outer = (_render_marked(runner, source, variables, _marked(messages, ok, False), timeout, should_stop)
             if any(ok) else None)
    exact = None
    if outer is not None and outer[0] == text:
        exact = outer
    elif outer is not None and any(ok[i] and _content(m) != _content(m).strip() for i, m in enumerate(messages)):
        inner = _render_marked(runner, source, variables, _marked(messages, ok, True), timeout, should_stop)
        if inner is not None and inner[0] == text:
            exact = inner
    out: list[MessageSpan] = []
    cursor = 0
    for i, m in enumerate(messages):
        c = _content(m)
        if c is None:
            out.append(MessageSpan(i, roles[i], NOT_TEXT))
            continue
        if exact is not None and ok[i] and i in exact[1] and i in exact[2]:
            span = (exact[1][i], exact[2][i])
            piece = text[span[0]:span[1]]
            st = VERBATIM if piece == c else STRIPPED if piece == c.strip() else CHANGED
            out.append(MessageSpan(i, roles[i], st, span))
            cursor = span[1]
            continue
        seen = outer is not None and ok[i] and (i in outer[1] or i in outer[2])
        if outer is not None and ok[i] and not seen:
            out.append(MessageSpan(i, roles[i], DROPPED))
            continue
        span = _search(text, c, cursor)
        if span is None:
            out.append(MessageSpan(i, roles[i], CHANGED if seen or outer is None else DROPPED))
            continue
        out.append(MessageSpan(i, roles[i], FOUND, span))
        cursor = span[1]
    return out


def _search(text: str, content: str, cursor: int) -> tuple[int, int] | None:
    """`content` (or, failing that, its stripped form) in `text` at or after `cursor`."""
    for needle in (content, content.strip()):
        if needle:
            at = text.find(needle, cursor)
            if at >= 0:
                return at, at + len(needle)
    return None
