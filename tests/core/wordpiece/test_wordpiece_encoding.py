"""WordPiece encoding: greedy longest-match-first, [UNK], word length limit, steps, spans,
decoding, explain(), and Hugging Face's WordPiece model as a reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import EncodeError, parse_split
from tokviz.core.wordpiece.timeline import WordPieceSettings, WordPieceTokenizer, train_wordpiece

HYPOTHESIS = settings(max_examples=150, deadline=None, database=None)


def tokenizer_with(pieces: list[str], *, specials=(), max_word_chars=100) -> WordPieceTokenizer:
    """A tokenizer whose vocabulary holds `pieces` (plus every intermediate merge needed to build
    them left to right, and the base characters)."""
    chars_first = sorted({p[0] for p in pieces if not p.startswith("##")})
    chars_rest = sorted({c for p in pieces for c in (p[2:] if p.startswith("##") else p[1:])}
                        | {p[2] for p in pieces if p.startswith("##")})
    symbols = chars_first + ["##" + c for c in chars_rest]
    n_special = 1 + len(specials)
    forms = list(symbols)
    ids = {f: n_special + i for i, f in enumerate(forms)}
    merges = []
    for p in pieces:
        cont = p.startswith("##")
        text = p[2:] if cont else p
        cur = ("##" if cont else "") + text[0]
        for c in text[1:]:
            nxt = cur + c
            if nxt not in ids:
                merges.append((ids[cur], ids["##" + c]))
                ids[nxt] = n_special + len(forms)
                forms.append(nxt)
            cur = nxt
    return WordPieceTokenizer(symbols, merges, parse_split("whitespace"), special_tokens=specials,
                              max_word_chars=max_word_chars)


@pytest.fixture(scope="module")
def unbelievable():
    return tokenizer_with(["un", "##believ", "##able", "unbe", "##lie", "believe"])


def test_greedy_longest_match_first(unbelievable):
    """unbelievable: at 0 the longest plain piece that is a prefix is "unbe" (not "un"); then
    "##lie" (not "##l"), then "##v", "##able"."""
    tok = unbelievable
    enc = tok.encode("unbelievable")
    assert [tok.token_str(i) for i in enc.ids] == ["unbe", "##lie", "##v", "##able"]
    assert enc.tokens == [b"unbe", b"##lie", b"##v", b"##able"]
    assert enc.spans == [(0, 4), (4, 7), (7, 8), (8, 12)]
    assert [tok.token_str(i) for i in tok.encode_ids("believe unable")] == ["believe", "un", "##able"]


def test_explain_lists_the_tried_candidates(unbelievable):
    matches = unbelievable.explain("unbelievable")
    assert [(m.start, m.end, m.token) for m in matches] == [(0, 4, "unbe"), (4, 7, "##lie"), (7, 8, "##v"), (8, 12, "##able")]
    # the longest piece has 7 characters ("believe"), so 7 candidates are tried at 0 first
    assert matches[0].tried == ("unbelie", "unbeli", "unbel")
    assert matches[2].tried == ("##vable", "##vabl", "##vab", "##va")
    assert all(m.reason == "" for m in matches)


def test_unknown_word_is_one_unk(unbelievable):
    """"unbelievably": no continuation piece starts with "y", so the whole word is [UNK]."""
    tok = unbelievable
    enc = tok.encode("so unbelievably un")
    assert enc.ids[1:2] == [0] and enc.tokens[1] == b"[UNK]"
    assert enc.spans[:2] == [(0, 2), (3, 15)] and enc.unknown == [0, 1]
    assert not enc.lossless
    matches = tok.explain("unbelievably")
    assert matches[-1].id == 0 and "no piece matches at character 11" in matches[-1].reason
    assert tok.decode(enc.ids) == "[UNK] [UNK] un"  # "so": s and o are not pieces either


def test_max_word_chars():
    tok = tokenizer_with(["ab", "##a", "##b"], max_word_chars=6)
    assert tok.encode_ids("ababab") != [0]
    assert tok.encode_ids("abababa") == [0]
    assert "longer than 6" in tok.explain("abababa")[0].reason
    default = tokenizer_with(["a", "##a"])
    assert default.encode_ids("a" * 100) != [0] and default.encode_ids("a" * 101) == [0]


def test_steps_use_the_first_k_merges():
    tl = train_wordpiece(WordPieceSettings(merges=3), texts=["hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5])
    tok = tl.tokenizer()
    forms = lambda ids: [tok.token_str(i) for i in ids]  # noqa: E731
    assert forms(tok.encode_ids("hugs", step=0)) == ["h", "##u", "##g", "##s"]
    assert forms(tok.encode_ids("hugs", step=1)) == ["h", "##u", "##gs"]
    assert forms(tok.encode_ids("hugs", step=2)) == ["hu", "##gs"]
    assert forms(tok.encode_ids("hugs")) == ["hugs"]
    assert tok.n_vocab_at(0) == 1 + 7 and tok.n_vocab == 1 + 7 + 3
    assert len(tok.vocab(step=1)) == 9 and tok.vocab()[-1] == b"hugs"


def test_specials_and_decoding():
    tok = tokenizer_with(["un", "##able"], specials=("<sep>",))
    enc = tok.encode("unable<sep> un", allowed_special="all")
    assert [tok.token_str(i) for i in enc.ids] == ["un", "##able", "<sep>", "un"]
    assert enc.special == [2] and enc.spans == [(0, 2), (2, 6), (6, 11), (12, 14)]
    with pytest.raises(EncodeError, match="allowed_special"):
        tok.encode("a<sep>")
    assert tok.decode(enc.ids) == "unable <sep> un"
    assert tok.decode_tokens_bytes(enc.ids) == [b"un", b"able", b" <sep>", b" un"]
    assert tok.decode_bytes(enc.ids) == b"unable <sep> un"
    assert tok.decode_with_offsets(enc.ids) == ("unable <sep> un", [0, 2, 6, 12])
    with pytest.raises(EncodeError, match="not in the vocabulary"):
        tok.decode([999])


def test_matches_hugging_face_wordpiece(corpus_text):
    """Hugging Face's WordPiece model (greedy longest-match-first, [UNK] per word, 100-char limit)
    with the same vocabulary and whitespace splitting gives the same tokens and offsets."""
    tokenizers = pytest.importorskip("tokenizers")
    text = corpus_text("tinyshakespeare.txt", 60_000)
    tl = train_wordpiece(WordPieceSettings(vocab_size=1500), texts=[text[:40_000]])
    tok = tl.tokenizer()
    vocab: dict[str, int] = {}
    for i in range(tok.n_vocab):
        vocab.setdefault(tok.token_str(i), i)  # duplicate strings: the lowest id, as we do
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    sample = text[40_000:] + " " + "x" * 101 + " Zzyzx 123"
    ours = tok.encode(sample)
    theirs = hf.encode(sample)
    assert ours.ids == theirs.ids
    assert ours.spans == [tuple(o) for o in theirs.offsets]


alphabet = st.text(alphabet="abcé😀 \n", min_size=0, max_size=60)


@HYPOTHESIS
@given(corpus=st.text(alphabet="abcé😀 ", min_size=1, max_size=80), text=alphabet, merges=st.integers(0, 30))
def test_round_trip_when_every_character_is_known(corpus, text, merges):
    """Trained on corpus + text, every character is known as a first and as an inner character,
    so decoding gives back the text with its whitespace normalized (BERT's rule)."""
    training = corpus + " " + text + " " + " ".join(text.replace(" ", "").replace("\n", ""))
    if not training.split():
        return
    tl = train_wordpiece(WordPieceSettings(merges=merges), texts=[training])
    tok = tl.tokenizer()
    for step in (0, merges // 2, None):
        enc = tok.encode(text, step=step)
        assert tok.decode(enc.ids) == " ".join(text.split())
        assert enc.unknown == []
        assert b"".join(tok.decode_tokens_bytes(enc.ids)) == tok.decode_bytes(enc.ids)
        assert tok.encode_ids(text, step=step) == enc.ids
        # spans tile each word: the pieces of a word, without "##", spell it
        pieces = [tok.token_str(i).removeprefix("##") for i in enc.ids]
        assert [text[a:b] for a, b in enc.spans] == pieces
