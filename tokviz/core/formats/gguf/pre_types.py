"""llama.cpp's pre-tokenizer types: the name a GGUF file declares in ``tokenizer.ggml.pre`` and
the split regexes llama.cpp runs for it (``src/llama-vocab.cpp``: the names in
``llama_vocab::impl::load``, the regexes in ``llm_tokenizer_bpe``).

The regexes run one after another, each splitting the pieces the previous one left (the matches
and the text between them both kept), as a ``Sequence`` of ``Split(..., "Isolated")``
pre-tokenizers does in a ``tokenizer.json``. Where llama.cpp rewrote a model's regex for its own
engine (``(?i:'s|...)`` spelled out as ``'[sS]|...``) the model's original is kept here, as its
comment there quotes it: tokviz's regex engine runs the original.

What this leaves out: the types llama.cpp runs with code of its own instead of regexes (kimi-k2,
afmoe, whitespace, gemma4 and other SentencePiece-style BPE): `PreType.supported` is False.
"""

from __future__ import annotations

from dataclasses import dataclass

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
         r"|\s+(?!\S)|\s+")
_CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
_UPPER_LOWER = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+{c}"
                r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*{c}")
O200K = (_UPPER_LOWER.replace("{c}", _CONTRACTIONS + "?")
         + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN = _UPPER_LOWER.replace("{c}", "") + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
DEEPSEEK3 = (r"\p{N}{1,3}", "[一-龥\u3040-ゟ゠-ヿ]+",
             (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
              r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"))
_DEEPSEEK_LETTERS = (  # escaped: the ranges end on characters NFC would change
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370"
    "-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-"
    "\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-"
    "\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-"
    "\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4"
    "\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a"
    "-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-"
    "\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-"
    "\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-"
    "\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-"
    "\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943")
DEEPSEEK_LLM = ("[\r\n]", r"\s?[" + _DEEPSEEK_LETTERS + "]+", r"\s?[!-/:-~！-／：-～‘-‟　-。]+", r"\s+$",
                "[一-龥ࠀ-一가-\ud7ff]+", r"\p{N}+")
DEEPSEEK_CODER = ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[一-龥ࠀ-一가-\ud7ff]+", r"\p{N}")
STARCODER = (r"\p{N}", GPT2)
FALCON = (r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]")
DEFAULT = (r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]")
BLOOM = (r" ?[^(\s|.,!?…。，、।۔،)]+",)


@dataclass(frozen=True)
class PreType:
    """One of llama.cpp's pre-tokenizer types: its regexes, whether a word that is itself a
    token skips the merges (``ignore_merges``, as Llama 3's tokenizer.json says) and whether
    llama.cpp adds BOS unless the file says otherwise."""

    name: str
    regexes: tuple[str, ...]
    ignore_merges: bool = False
    adds_bos: bool = False
    supported: bool = True


def _types() -> dict[str, PreType]:
    table: dict[str, PreType] = {}

    def add(names: str, regexes: tuple[str, ...], **kw: bool) -> None:
        for name in names.split():
            table[name] = PreType(name, regexes, **kw)

    add("default", DEFAULT)
    add("llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2 jina-v5-nano", (LLAMA3,),
        ignore_merges=True, adds_bos=True)
    add("dbrx smaug-bpe chatglm-bpe glm4", (LLAMA3,))
    add("deepseek-llm", DEEPSEEK_LLM)
    add("deepseek-coder", DEEPSEEK_CODER)
    add("deepseek-v3 hunyuan-dense hy_v4 joyai-llm", DEEPSEEK3)
    add("falcon", FALCON)
    add("starcoder refact command-r smollm codeshell exaone minerva-7b mellum2", STARCODER)
    add("gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert jina-v1-en "
        "jina-v2-code roberta-bpe exaone4 mpt olmo jais trillion granite-docling", (GPT2,))
    add("qwen2 deepseek-r1-qwen kormo f2llmv2 megrez stablelm2 hunyuan solar-open", (QWEN2,))
    add("qwen35", (QWEN2.replace(r"\p{L}+|", r"[\p{L}\p{M}]+|").replace(r"[^\s\p{L}\p{N}]", r"[^\s\p{L}\p{M}\p{N}]"),))
    add("poro-chat bloom gpt3-finnish", BLOOM)
    add("viking", BLOOM + (r"\p{N}",))
    add("tekken", (TEKKEN,), ignore_merges=True, adds_bos=True)
    add("gpt-4o llama4 kanana2 talkie minimax-m2", (O200K,))
    add("seed-coder", ((r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+"
                        r"|\s*[\r\n]+|\s+(?!\S)|\s+"),))
    add("grok-2", (QWEN2,))
    add("bailingmoe bailingmoe2 llada-moe", ((r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}"
                                              r"| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"),))
    add("minicpm5", (r"\p{N}{1,3}", QWEN2.replace(r"\p{N}|", r"\p{N}+|")), ignore_merges=True)
    add("tiny_aya cohere2moe", (r"\d{1,3}(?=(?:\d{3})*\b)", O200K))
    add("ufakzeka", (QWEN2.replace(_CONTRACTIONS + "|", ""),))
    add("laguna", ("[^\n]+|[\n]+", QWEN2))
    for name in ("kimi-k2", "afmoe", "whitespace", "gemma4", "granite-embed-multi-311m", "sarvam-moe", "superbpe",
                 "chameleon", "youtu", "spark2_5", "jais-2", "granite-embed-multi-97m", "exaone-moe"):
        table.setdefault(name, PreType(name, (), supported=False))
    return table


PRE_TYPES: dict[str, PreType] = _types()


def pre_type(name: str | None) -> PreType | None:
    """The pre-tokenizer type a file declares (llama.cpp: none declared is ``default``), or None
    for a name llama.cpp does not know."""
    return PRE_TYPES.get(name or "default")
