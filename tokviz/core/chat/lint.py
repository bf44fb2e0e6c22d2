"""The prompt linter: the classic chat-template bugs, each finding pointing at the tokens involved.

Rules (`RULES`):

``doubled-bos``
    the prompt starts with BOS twice, or starts with the tokens the tokenizer's post-processor adds
    (so ``tokenizer(prompt)`` with its default ``add_special_tokens=True`` doubles them), or the
    config sets ``add_bos_token`` (transformers 4's Llama classes then add a second BOS);
``missing-eos``
    an assistant message not followed by an end token (the EOS, or a ``generation_config.json`` EOS)
    before the next message: trained on this, a model never learns to stop;
``special-in-content``
    a message holds the text of an added token, and whether it was encoded as that token (the
    model reads a control token the user typed) or as text;
``whitespace-special``
    whitespace at the edge of a message, rendered next to a special token, that makes different
    tokens than the training format (the message without it);
``trailing-space``
    the prompt ends with a space or tab (words start with their space: ``␣Paris``);
``dropped-message``
    a message the template does not render (a role it ignores), or renders changed;
``template-error``
    the template fails, with its line.

What this leaves out: rendering (`tokviz.core.chat.render`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import regex

from tokviz.core.display.tokens import visible_token

from .folder import ChatModel
from .render import CHANGED, DROPPED, VERBATIM, ChatRender, token_range, token_ranges
from .sandbox import TemplateError

RULES = {
    "doubled-bos": "BOS twice, or BOS from the template and again from the tokenizer",
    "missing-eos": "an assistant turn without an end token",
    "special-in-content": "special-token text inside a message",
    "whitespace-special": "message whitespace next to a special token changes the tokens",
    "trailing-space": "the prompt ends with a space",
    "dropped-message": "a message the template leaves out",
    "template-error": "the template fails",
}
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One problem: `tokens` are indices into the prompt's tokens, `message` the message index."""

    rule: str
    severity: str  # "error", "warning" or "info"
    text: str
    tokens: tuple[int, ...] = ()
    message: int | None = None
    line: int | None = None  # template line (template errors)

    def to_json(self) -> dict:
        return {"rule": self.rule, "severity": self.severity, "text": self.text, "tokens": list(self.tokens),
                "message": self.message, "line": self.line}

    def one_line(self) -> str:
        """``warning missing-eos tokens 12-14: ...``."""
        where = ""
        if self.tokens:
            a, b = min(self.tokens), max(self.tokens)
            where = f" token {a}" if a == b else f" tokens {a}-{b}"
        elif self.line:
            where = f" line {self.line}"
        return f"{self.severity} {self.rule}{where}: {self.text}"


def lint_chat(model: ChatModel, messages: Sequence[Mapping], render: ChatRender | None = None, *,
              error: TemplateError | None = None) -> list[Finding]:
    """Findings for a rendered conversation (or for the error that stopped it), most severe first."""
    if error is not None:
        return [Finding("template-error", "error", error.reason, line=error.line)]
    if render is None:
        return []
    found = [*_doubled_bos(model, render), *_missing_eos(model, render), *_specials_in_content(model, messages, render),
             *_whitespace_near_specials(model, messages, render), *_trailing_space(render), *_dropped(render)]
    return sorted(found, key=lambda f: SEVERITIES.index(f.severity))


def _show(render: ChatRender, indices: Sequence[int]) -> str:
    enc = render.encoding
    return " ".join(f"'{visible_token(enc.tokens[i])}'" for i in indices)


def _show_ids(tok, ids: Sequence[int]) -> str:
    return " ".join(f"'{visible_token(b)}'" for b in tok.decode_tokens_bytes(list(ids)))


# -- the rules -------------------------------------------------------------------------------


def _doubled_bos(model: ChatModel, render: ChatRender) -> list[Finding]:
    ids = render.ids
    bos_id = model.token_id(model.bos_token)
    if bos_id is not None and ids[:2] == [bos_id, bos_id]:
        return [Finding("doubled-bos", "error", f"the prompt starts with BOS twice ({_show(render, (0, 1))})", (0, 1))]
    pp = model.tokenizer.post_processor
    before = list(pp.before) if pp is not None else []
    if before and ids[: len(before)] == before:
        n = len(before)
        return [Finding("doubled-bos", "warning",
                        f"the template already writes {_show(render, range(n))} and the tokenizer's post-processor "
                        f"adds it again when this text is encoded with add_special_tokens=True (the default of "
                        f"tokenizer(prompt)); encode with add_special_tokens=False, as apply_chat_template does",
                        tuple(range(n)))]
    if bos_id is not None and ids[:1] == [bos_id] and model.add_bos_token:
        return [Finding("doubled-bos", "info",
                        "the template writes BOS and tokenizer_config.json sets add_bos_token: tokenizer classes that "
                        "honour it (transformers 4's LlamaTokenizer(Fast)) add a second one when the text is encoded "
                        "with add_special_tokens=True", (0,))]
    return []


def _next_start(render: ChatRender, k: int) -> int:
    """Where the next located message after message `k` starts (the end of the text if none)."""
    for m in render.messages[k + 1:]:
        if m.span is not None:
            return m.span[0]
    return len(render.text)


def _missing_eos(model: ChatModel, render: ChatRender) -> list[Finding]:
    assistants = [m for m in render.messages if m.role == "assistant" and m.span is not None]
    if not assistants:
        return []
    if not model.stop_ids:
        return [Finding("missing-eos", "info", "the model names no EOS token (tokenizer_config.json eos_token): "
                        "cannot check that assistant turns end")]
    enc = render.encoding
    stops = " or ".join(f"'{model.tokenizer.token_text(i)}'" for i in sorted(model.stop_ids))
    afters = token_ranges(enc, [(m.span[1], _next_start(render, m.index)) for m in assistants])
    out = []
    for m, (a, b) in zip(assistants, afters):
        region = range(max(a, m.tokens[1]), b)
        if any(enc.ids[i] in model.stop_ids for i in region):
            continue
        last = [m.tokens[1] - 1] if m.tokens[1] > m.tokens[0] else []
        at_end = _next_start(render, m.index) >= len(render.text)
        out.append(Finding("missing-eos", "warning",
                           f"assistant message {m.index + 1} is not followed by an end token ({stops}) before "
                           f"{'the end of the prompt' if at_end else 'the next message'}: a model trained on this "
                           "format does not learn to stop", tuple(last + list(region)), m.index))
    return out


@functools.lru_cache(maxsize=8)
def _added_pattern(contents: tuple[str, ...]) -> regex.Pattern:
    return regex.compile("|".join(regex.escape(c) for c in sorted(contents, key=len, reverse=True)))


def _content_offset(render: ChatRender, m, content: str) -> int | None:
    """Prompt position of the content's first character (None when the span is not the content)."""
    a, b = m.span
    piece = render.text[a:b]
    if piece == content:
        return a
    lead = len(content) - len(content.lstrip())
    if piece == content.strip():
        return a - lead
    return None


def _specials_in_content(model: ChatModel, messages: Sequence[Mapping], render: ChatRender) -> list[Finding]:
    tok = model.tokenizer
    added = {t.content: t for t in tok.added if t.content}
    if not added:
        return []
    pattern = _added_pattern(tuple(added))
    enc = render.encoding
    out = []
    for m, msg in zip(render.messages, messages):
        content = msg.get("content")
        if not isinstance(content, str):
            continue
        origin = _content_offset(render, m, content) if m.span is not None else None
        for hit in pattern.finditer(content):
            t = added[hit.group()]
            kind = "special token" if t.special else "added token"
            where = f"message {m.index + 1} ({m.role}) holds the {kind} text '{t.content}'"
            if origin is None:
                out.append(Finding("special-in-content", "warning", f"{where} (not located in the prompt)",
                                   message=m.index))
                continue
            a = origin + hit.start()
            first, end = token_range(enc, (a, a + len(t.content)))
            idx = tuple(range(first, end))
            if len(idx) == 1 and enc.ids[first] == t.id:
                fix = "; encode message text with special tokens as text" if t.special else ""
                out.append(Finding("special-in-content", "error" if t.special else "warning",
                                   f"{where}: encoded as that token (id {t.id}), the one the template writes, so the "
                                   f"model cannot tell the user's text from the template's{fix}", idx, m.index))
            else:
                out.append(Finding("special-in-content", "info", f"{where}: encoded as text ({len(idx)} tokens: "
                                   f"{_show(render, idx)})", idx, m.index))
    return out


MAX_WHITESPACE_CHECKS = 32  # messages re-encoded without their edge whitespace, at most


def _whitespace_near_specials(model: ChatModel, messages: Sequence[Mapping], render: ChatRender) -> list[Finding]:
    """Content whitespace that reaches a special token (through template whitespace or directly)."""
    text, enc = render.text, render.encoding
    bounds = sorted(enc.spans[i] for i in enc.special)
    ends, starts = {e for _, e in bounds}, {s for s, _ in bounds}
    out: list[Finding] = []
    checks = 0
    for m, msg in zip(render.messages, messages):
        content = msg.get("content")
        if m.status != VERBATIM or not isinstance(content, str) or not content.strip():
            continue
        a, b = m.span
        core = content.strip()
        lead, trail = len(content) - len(content.lstrip()), len(content) - len(content.rstrip())
        if lead:
            j = a
            while j > 0 and text[j - 1].isspace():
                j -= 1
            if j in ends and checks < MAX_WHITESPACE_CHECKS:
                checks += 1
                word = regex.match(r"\S+", core).group()
                out.extend(_compare(model, render, m, bounds, (j, a + lead + len(word)), (a, a + lead), "starts"))
        if trail:
            j = b
            while j < len(text) and text[j].isspace():
                j += 1
            if j in starts and checks < MAX_WHITESPACE_CHECKS:
                checks += 1
                word = regex.search(r"\S+$", core).group()
                out.extend(_compare(model, render, m, bounds, (b - trail - len(word), j), (b - trail, b), "ends"))
    return out


def _compare(model: ChatModel, render: ChatRender, m, bounds, region: tuple[int, int], cut: tuple[int, int],
             side: str) -> list[Finding]:
    """A finding when the tokens of `region` change once the whitespace `cut` is removed. Only the
    text between the special tokens around it is re-encoded: special tokens cut the text into
    pieces that are encoded independently (so every special-token string inside is text)."""
    text, enc, tok = render.text, render.encoding, model.tokenizer
    lo = max((e for s, e in bounds if e <= region[0]), default=0)
    hi = min((s for s, e in bounds if s >= region[1]), default=len(text))
    n = cut[1] - cut[0]
    seg = text[lo:hi]
    alt_seg = text[lo:cut[0]] + text[cut[1]:hi]
    mine = tok.encode(seg, add_special_tokens=False, literal_spans=[(0, len(seg))])
    alt = tok.encode(alt_seg, add_special_tokens=False, literal_spans=[(0, len(alt_seg))])
    r_mine = token_range(mine, (region[0] - lo, region[1] - lo))
    r_alt = token_range(alt, (region[0] - lo, region[1] - lo - n))
    if mine.ids[slice(*r_mine)] == alt.ids[slice(*r_alt)]:
        return []
    first, end = token_range(enc, region)
    names = {" ": "space", "\t": "tab", "\n": "newline", "\r": "carriage return"}
    ws = ", ".join(names.get(c, f"U+{ord(c):04X}") for c in text[cut[0]:cut[1]][:4]) + (" …" if n > 4 else "")
    return [Finding("whitespace-special", "warning",
                    f"message {m.index + 1} ({m.role}) {side} with whitespace ({ws}) that meets a special token: the "
                    f"prompt has {_show(render, range(first, end))} where the training format (the message "
                    f"without it) has {_show_ids(tok, alt.ids[slice(*r_alt)])}", tuple(range(first, end)), m.index)]


def _trailing_space(render: ChatRender) -> list[Finding]:
    text = render.text
    if not text or text[-1] not in " \t":
        return []
    last = len(render.ids) - 1
    what = "a space" if text[-1] == " " else "a tab"
    return [Finding("trailing-space", "warning",
                    f"the prompt ends with {what} ({_show(render, [last])}): models write the space with the next "
                    "word ('␣Paris'), so a prompt ending in one asks for text they rarely saw", (last,))]


def _dropped(render: ChatRender) -> list[Finding]:
    out = []
    for m in render.messages:
        if m.status == DROPPED:
            nxt = next((n.tokens[0] for n in render.messages[m.index + 1:] if n.tokens is not None), None)
            out.append(Finding("dropped-message", "warning",
                               f"message {m.index + 1} ({m.role}) is not in the prompt: the template leaves it out "
                               f"(does it know the role '{m.role}'?)", () if nxt is None else (nxt,), m.index))
        elif m.status == CHANGED and m.span is None:
            out.append(Finding("dropped-message", "info", f"message {m.index + 1} ({m.role}) is in the prompt only in a "
                               "changed form (the template cuts or rewrites it)", message=m.index))
    return out
