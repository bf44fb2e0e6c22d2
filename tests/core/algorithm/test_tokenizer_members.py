"""Every tokenizer declares the protocol's members, so no code probes a tokenizer for them."""

import ast
from pathlib import Path

import pytest

from tokviz.core.algorithm.defaults import TokenizerDefaults
from tokviz.core.algorithm.protocol import Tokenizer
from tokviz.core.baselines import CharTokenizer, WordTokenizer
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.bpe.timeline import TrainSettings
from tokviz.core.registry import make_training
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings

TEXT = "hug hug pug pun bun hugs the cat sat on the mat " * 5
PACKAGE = Path(__file__).resolve().parents[3] / "tokviz"


def _tokenizers():
    yield "bpe", make_training(TrainSettings(merges=5), texts=[TEXT]).run().tokenizer()
    yield "wordpiece", make_training(WordPieceSettings(merges=5, min_count=1), texts=[TEXT]).run().tokenizer()
    yield "unigram", make_training(UnigramSettings(vocab_size=30), texts=[TEXT]).run().tokenizer()
    yield "chars", CharTokenizer.from_texts([TEXT])
    yield "words", WordTokenizer.from_texts([TEXT])
    yield "ranked", RankBpeTokenizer({bytes([b]): b for b in range(256)} | {b"ab": 256}, pattern=r"\w+| ?\W")


@pytest.mark.parametrize(("label", "tok"), list(_tokenizers()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_tokenizer_has_every_protocol_member(label, tok):
    declared = set(Tokenizer.__annotations__) | {n for n, v in vars(Tokenizer).items() if callable(v) or isinstance(v, property)}
    members = sorted(n for n in declared if not n.startswith("_"))
    assert {"name", "special_tokens", "chunks", "explain", "warm_up"} <= set(members)
    assert [n for n in members if not hasattr(tok, n)] == []
    assert isinstance(tok, Tokenizer) and isinstance(tok, TokenizerDefaults)


def test_defaults_say_what_is_missing():
    tok = CharTokenizer.from_texts(["ab"])
    assert tok.chunks("a b") is None and tok.text_chunks("a b") is None and tok.explain("ab") is None
    assert tok.n_vocab_at(None) is None and tok.normalize("ab") is None and not tok.writes_token_text
    assert tok.parts_of(1) == [1] and dict(tok.special_tokens) == {} and tok.control_ids == frozenset()


def _probes(tree: ast.AST):
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr")
                and (n.func.id == "hasattr" or len(n.args) == 3) and "tok" in ast.unparse(n.args[0]).lower()):
            yield n.lineno, ast.unparse(n)


def test_no_code_probes_a_tokenizer_for_a_member():
    found = [f"{p.relative_to(PACKAGE)}:{line} {call}" for p in sorted(PACKAGE.rglob("*.py"))
             for line, call in _probes(ast.parse(p.read_text(encoding="utf-8")))]
    assert found == []
