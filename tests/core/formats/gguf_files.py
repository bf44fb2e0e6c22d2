"""GGUF files for the tests, written at test time with the ``gguf`` package's writer from a model's
Hugging Face files, the way llama.cpp's ``convert_hf_to_gguf.py --vocab-only`` does it: tokens in id
order (``[PAD{i}]`` for ids the vocabulary skips), token types (added tokens as control or
user-defined), scores from a SentencePiece ``.model``, merges and special ids through
``gguf.SpecialVocab``; BERT's vocabulary in the converter's "phantom space" spelling."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")


def _write(out: Path, arch: str, fill) -> Path:
    w = gguf.GGUFWriter(str(out), arch=arch)
    fill(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def _hf_tokens(folder: Path) -> tuple[list[str], list[int]]:
    """The converter's ``get_vocab_base``: tokens by id and their types."""
    tok = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    vocab = tok.get_vocab(with_added_tokens=True)
    added = tok.get_added_tokens_decoder()
    by_id = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(max(by_id) + 1):
        if i not in by_id:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        elif i in added:
            tokens.append(by_id[i])
            types.append(gguf.TokenType.CONTROL if added[i].special else gguf.TokenType.USER_DEFINED)
        else:
            tokens.append(by_id[i])
            types.append(gguf.TokenType.NORMAL)
    return tokens, types


def byte_level_gguf(folder: Path, out: Path, pre: str) -> Path:
    """A ``gpt2`` GGUF (byte-level BPE) declaring the pre-tokenizer `pre`."""
    tokens, types = _hf_tokens(folder)

    def fill(w) -> None:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre)
        w.add_token_list(tokens)
        w.add_token_types(types)
        gguf.SpecialVocab(folder, load_merges=True, n_vocab=len(tokens)).add_to_gguf(w, quiet=True)

    return _write(out, "llama", fill)


def word_piece_gguf(folder: Path, out: Path, tmp: Path) -> Path:
    """A ``bert`` GGUF, from the folder's tokenizer.json and a BERT repository's tokenizer_config."""
    repo = tmp / "bert-repo"
    repo.mkdir(exist_ok=True)
    shutil.copy(folder / "tokenizer.json", repo / "tokenizer.json")
    config = {"do_lower_case": True, "cls_token": "[CLS]", "sep_token": "[SEP]", "unk_token": "[UNK]",
              "pad_token": "[PAD]", "mask_token": "[MASK]"}
    (repo / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    tokens, types = _hf_tokens(repo)
    phantom = [t if ty == gguf.TokenType.CONTROL else t[2:] if t.startswith("##") else "\u2581" + t
               for t, ty in zip(tokens, types)]

    def fill(w) -> None:
        w.add_token_type_count(2)
        w.add_tokenizer_model("bert")
        w.add_tokenizer_pre("default")
        w.add_token_list(phantom)
        w.add_token_types(types)
        gguf.SpecialVocab(repo, n_vocab=len(phantom), special_token_types=("bos", "eos", "unk", "sep", "pad",
                                                                            "mask")).add_to_gguf(w, quiet=True)

    return _write(out, "bert", fill)


def sentencepiece_gguf(model_file: Path, out: Path, *, kind: str = "llama", hf_folder: Path | None = None) -> Path:
    """A ``llama`` (BPE) or ``t5`` (Unigram) GGUF from a SentencePiece ``.model``: pieces, scores
    and types as the converter reads them, special ids from `hf_folder`'s files when given."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    tokens, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        tokens.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        t = gguf.TokenType.NORMAL
        for check, typ in ((sp.is_unknown, gguf.TokenType.UNKNOWN), (sp.is_control, gguf.TokenType.CONTROL),
                           (sp.is_unused, gguf.TokenType.UNUSED), (sp.is_byte, gguf.TokenType.BYTE)):
            if check(i):
                t = typ
        types.append(t)

    def fill(w) -> None:
        w.add_tokenizer_model(kind)
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        if kind == "t5":
            from tokviz.core.formats.sentencepiece import read_sentencepiece  # the converter reads these with protobuf

            spec = read_sentencepiece(model_file).proto.normalizer
            w.add_add_space_prefix(spec.add_dummy_prefix)
            w.add_remove_extra_whitespaces(spec.remove_extra_whitespaces)
            w.add_precompiled_charsmap(spec.precompiled_charsmap)
            w.add_unk_token_id(sp.unk_id())
            w.add_eos_token_id(sp.eos_id())
        if hf_folder is not None:
            gguf.SpecialVocab(hf_folder, n_vocab=len(tokens)).add_to_gguf(w, quiet=True)

    return _write(out, "t5" if kind == "t5" else "llama", fill)
