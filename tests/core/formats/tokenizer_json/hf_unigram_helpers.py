"""tokenizer.json files with Unigram and WordLevel models, built at test time with the `tokenizers`
library (cached for the session): a T5-style Unigram (NFKC, Metaspace) and a WordLevel trained on
every 20th line of ``udhr2_all.txt``; a T5/XLM-R-style file made from a SentencePiece model
(``Precompiled`` charsmap, Unigram scores); and pipelines that put the other components on the
trained Unigram model."""

from __future__ import annotations

import pytest

from tests.conftest import shared_build
from tests.core.formats.sentencepiece.spm_helpers import corpus_lines, trained_model

_BUILT: dict = {}


def _lines():
    return corpus_lines(20)


def t5_like():
    tk = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = tk.Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(tk.Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=2000, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(_lines(), trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return tok


def word_level():
    tk = pytest.importorskip("tokenizers")
    from tokenizers import models, normalizers, pre_tokenizers, processors, trainers

    tok = tk.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    trainer = trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["[UNK]", "[CLS]", "[SEP]"],
                                        show_progress=False)
    tok.train_from_iterator(_lines(), trainer)
    tok.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    return tok


def from_sentencepiece(folder, *, byte_fallback: bool = False):
    """What transformers' converters write for a SentencePiece Unigram model (T5, XLM-R, ALBERT)."""
    tk = pytest.importorskip("tokenizers")
    spm = pytest.importorskip("sentencepiece")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors

    from tokviz.core.formats.sentencepiece import parse_model_proto  # read with tokviz: no protobuf needed

    path = trained_model("unigram-nmt", folder)
    proto = parse_model_proto(path.read_bytes())
    vocab = list(zip(proto.pieces, proto.scores))
    if byte_fallback:
        vocab += [(f"<0x{b:02X}>", -30.0) for b in range(256)]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = tk.Tokenizer(models.Unigram(vocab, sp.unk_id(), byte_fallback))
    tok.normalizer = normalizers.Sequence([
        normalizers.Precompiled(proto.normalizer.precompiled_charsmap),
        normalizers.Replace(tk.Regex(" {2,}"), " "),
    ])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    if byte_fallback:
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                         decoders.Strip(" ", 1, 0)])
    else:
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 1), ("</s>", 2)])
    return tok


def built(name: str, folder, make):
    """(the `tokenizers` tokenizer, its tokenizer.json text), built once per session."""
    if name not in _BUILT:
        tk = pytest.importorskip("tokenizers")

        def write(into):
            (into / f"{name}.json").write_text(make().to_str(), encoding="utf-8")
            return into / f"{name}.json"

        text = shared_build(f"{name}.json", write, folder).read_text(encoding="utf-8")  # once per run
        _BUILT[name] = (tk.Tokenizer.from_str(text), text)
    return _BUILT[name]
