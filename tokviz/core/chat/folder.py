"""`ChatModel`: what a Hugging Face model folder says about its prompts, read as transformers reads it.

A folder holds ``tokenizer.json`` (encoded by tokviz's own `HfTokenizer`) and
``tokenizer_config.json`` with the Jinja ``chat_template`` (a string, or a list of named templates),
the named special tokens (``bos_token``, ``eos_token``, ...: a string or an AddedToken object whose
``content`` counts) and ``added_tokens_decoder``. As in transformers 5:

- ``chat_template.jinja`` (and ``additional_chat_templates/NAME.jinja``) take priority over the
  config's templates; with several, ``default`` is used unless another name is asked for, and
  ``tool_use`` when tools are given and no name was asked for (`ChatModel.template_for`);
- ``special_tokens_map.json`` is read only when the config has no ``added_tokens_decoder``, and
  its named tokens then win;
- added tokens of the config and named special tokens the ``tokenizer.json`` does not list are added
  to the tokenizer (an existing vocabulary entry keeps its id; a new token gets the next id).

``generation_config.json``'s ``eos_token_id`` (one id or a list) joins the EOS in the tokens that
end an assistant turn (`stop_ids`). What this leaves out: rendering (`tokviz.core.chat.render`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.formats.hf_cache import HF_PREFIX, check_snapshot, resolve_hf
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes
from tokviz.core.special_tokens import AddedToken

NAMED_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
CONFIG_FILE = "tokenizer_config.json"
TEMPLATE_FILE = "chat_template.jinja"
TEMPLATE_DIR = "additional_chat_templates"
MAX_TEMPLATE_BYTES = 4 << 20


class ChatFolderError(TokvizError):
    """A model folder tokviz cannot render chats for (no template, a malformed config)."""


@dataclass
class ChatModel:
    """A tokenizer with its chat template(s) and named special tokens."""

    folder: Path
    tokenizer: HfTokenizer
    templates: dict[str, str]  # name -> Jinja source
    template_name: str  # the one used
    template_origin: str  # the file it came from
    special_tokens: dict[str, str] = field(default_factory=dict)  # bos_token -> its text: template variables
    stop_ids: frozenset[int] = frozenset()  # EOS and generation_config.json's eos_token_id
    add_bos_token: bool | None = None  # tokenizer_config.json's flag (transformers 4 honoured it)
    template_pinned: bool = False  # the name was asked for: tools do not switch to ``tool_use``

    @property
    def template(self) -> str:
        return self.templates[self.template_name]

    def template_for(self, tools: object = None) -> str:
        """The name of the template a render uses: the one asked for, else ``tool_use`` when tools
        are given (even an empty list) and the model has one, else `template_name` (transformers'
        ``get_chat_template``)."""
        if not self.template_pinned and tools is not None and "tool_use" in self.templates:
            return "tool_use"
        return self.template_name

    @property
    def bos_token(self) -> str | None:
        return self.special_tokens.get("bos_token")

    @property
    def eos_token(self) -> str | None:
        return self.special_tokens.get("eos_token")

    def token_id(self, content: str | None) -> int | None:
        """The id of an added token's text (None when it is not an added token)."""
        return None if content is None else self.tokenizer.special_tokens.get(content)

    def with_template(self, name: str) -> ChatModel:
        """The same model rendering with its template `name`."""
        if name not in self.templates:
            raise ChatFolderError(f"{self.folder}: no chat template named {name!r} (has {', '.join(self.templates)})")
        return replace(self, template_name=name, template_pinned=True)


def model_folder(source: str | os.PathLike) -> Path:
    """The folder a MODEL argument names: a folder, a file inside it (``tokenizer.json``,
    ``tokenizer_config.json``), or ``hf:ORG/NAME`` in the Hugging Face cache (offline)."""
    text = os.fspath(source)
    if isinstance(text, str) and text.startswith(HF_PREFIX):  # a snapshot folder of the Hugging Face cache
        try:
            snapshot = resolve_hf(text).parent
            check_snapshot(snapshot)  # the config and templates must stay inside the cache too
            return snapshot
        except TokvizError as exc:
            raise ChatFolderError(str(exc)) from None
    path = Path(source)
    if path.is_file():
        path = path.parent
    if not path.is_dir():
        raise ChatFolderError(f"{path}: no such folder")
    return path


def _read_json(path: Path) -> dict:
    d = parse_json(read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ChatFolderError), str(path), ChatFolderError)
    if not isinstance(d, dict):
        raise ChatFolderError(f"{path}: expected a JSON object")
    return d


def _token_text(value: object) -> str | None:
    """A named special token's text: a string, or an AddedToken object's ``content``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _added_from_config(value: Mapping, token_id: int, special: bool | None = None) -> AddedToken:
    content = value.get("content")
    if not isinstance(content, str) or not content:
        raise ChatFolderError(f"added token {token_id}: no text ('content')")
    flag = lambda name, default=False: bool(value.get(name, default))
    sp = flag("special") if special is None else special
    return AddedToken(token_id, content, sp, flag("normalized", not sp), flag("lstrip"), flag("rstrip"),
                      flag("single_word"))


def _templates(folder: Path, config: Mapping) -> tuple[dict[str, str], str]:
    """Name -> source of every chat template, and the file they came from."""
    found: dict[str, str] = {}
    file = folder / TEMPLATE_FILE
    if file.is_file():
        found["default"] = _read_template(file)
    extra = folder / TEMPLATE_DIR
    if extra.is_dir():
        for f in sorted(extra.glob("*.jinja")):
            found[f.name.removesuffix(".jinja")] = _read_template(f)
    if found:
        return found, TEMPLATE_FILE if "default" in found else TEMPLATE_DIR
    t = config.get("chat_template")
    if isinstance(t, str):
        return {"default": t}, CONFIG_FILE
    if isinstance(t, list):
        for item in t:
            if not (isinstance(item, Mapping) and isinstance(item.get("name"), str)
                    and isinstance(item.get("template"), str)):
                raise ChatFolderError(f"{folder / CONFIG_FILE}: chat_template list entries need a 'name' and a "
                                      "'template' string")
            found[item["name"]] = item["template"]
        return found, CONFIG_FILE
    if t is not None:
        raise ChatFolderError(f"{folder / CONFIG_FILE}: chat_template is a {type(t).__name__}, not a string")
    return {}, ""


def _read_template(path: Path) -> str:
    data = read_file_bytes(path, limit=MAX_TEMPLATE_BYTES, error=ChatFolderError)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ChatFolderError(f"{path}: not UTF-8 (bad byte at offset {exc.start})") from None


def _with_config_tokens(tok: HfTokenizer, extra: list[AddedToken]) -> HfTokenizer:
    """`tok` with the config's added tokens it lacks (transformers adds them to the backend)."""
    have = {t.content for t in tok.added}
    vocab = tok.model.vocab
    used = set(vocab.values()) | {t.id for t in tok.added}
    nxt = max(used, default=-1) + 1
    new: list[AddedToken] = []
    for t in extra:
        if t.content in have:
            continue
        tid = vocab.get(t.content)
        if tid is None:
            tid = t.id if t.id >= 0 and t.id not in used else nxt
        used.add(tid)
        nxt = max(nxt, tid + 1)
        have.add(t.content)
        new.append(AddedToken(tid, t.content, t.special, t.normalized, t.lstrip, t.rstrip, t.single_word))
    if not new:
        return tok
    out = HfTokenizer(tok.model, normalizer=tok.normalizer, pre_tokenizer=tok.pre_tokenizer,
                      post_processor=tok.post_processor, decoder=tok.decoder, added_tokens=[*tok.added, *new],
                      name=tok.name)
    out.source = tok.source
    return out


def load_chat_model(source: str | os.PathLike, *, template: str | None = None) -> ChatModel:
    """Read a model folder (or a file in it). `ChatFolderError` names what is missing: the
    ``tokenizer.json``, a readable config, any chat template."""
    folder = model_folder(source)
    tok_file = folder / "tokenizer.json"
    if not tok_file.is_file():
        raise ChatFolderError(f"{folder}: no tokenizer.json (a chat needs a Hugging Face model folder's "
                              f"tokenizer.json and {CONFIG_FILE})")
    config = _read_json(folder / CONFIG_FILE) if (folder / CONFIG_FILE).is_file() else {}
    templates, origin = _templates(folder, config)
    if not templates:
        raise ChatFolderError(f"{folder}: no chat template (neither {CONFIG_FILE} has a 'chat_template' nor is there "
                              f"a {TEMPLATE_FILE})")
    name = template or ("default" if "default" in templates or len(templates) > 1 else next(iter(templates)))
    if name not in templates:
        raise ChatFolderError(f"{folder}: no chat template named {name!r} (has {', '.join(sorted(templates))})")
    named = {k: _token_text(config.get(k)) for k in NAMED_TOKENS}
    extra: list[AddedToken] = []
    decoder = config.get("added_tokens_decoder")
    if isinstance(decoder, Mapping):
        for key, value in decoder.items():
            if not isinstance(value, Mapping) or not str(key).lstrip("-").isdigit():
                raise ChatFolderError(f"{folder / CONFIG_FILE}: added_tokens_decoder entry {key!r} is malformed")
            extra.append(_added_from_config(value, int(key)))
    elif (folder / "special_tokens_map.json").is_file():  # legacy file, read only without added_tokens_decoder
        legacy = _read_json(folder / "special_tokens_map.json")
        named.update({k: _token_text(legacy[k]) for k in NAMED_TOKENS if _token_text(legacy.get(k))})
    model_specific = config.get("extra_special_tokens")
    if isinstance(model_specific, Mapping):  # {"image_token": "<image>"}: also template variables
        named.update({str(k): _token_text(v) for k, v in model_specific.items() if _token_text(v)})
    specials = {k: v for k, v in named.items() if v}
    extra.extend(AddedToken(-1, v, True) for v in specials.values())
    try:
        tok = _with_config_tokens(HfTokenizer.from_file(tok_file), extra)
    except ModelFormatError as exc:
        raise ChatFolderError(str(exc)) from None
    stop = {tok.special_tokens[specials["eos_token"]]} if specials.get("eos_token") in tok.special_tokens else set()
    gen = folder / "generation_config.json"
    if gen.is_file():
        ids = _read_json(gen).get("eos_token_id")
        stop.update(i for i in (ids if isinstance(ids, list) else [ids]) if isinstance(i, int) and i >= 0)
    add_bos = config.get("add_bos_token")
    return ChatModel(folder, tok, templates, name, origin, specials, frozenset(stop),
                     add_bos if isinstance(add_bos, bool) else None, template_pinned=template is not None)
