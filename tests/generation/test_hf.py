"""The Hugging Face tokenizer equals tiktoken's o200k_harmony id for id; the tiny model fits it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="the generate extra is not installed")
pytest.importorskip("torch", reason="the generate extra is not installed")

from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.format.tokens import FIRST_SPECIAL_ID, ControlToken
from harmony_grammar.generation.hf import hf_tokenizer, outlines_model, stop_token_ids, tiny_model

PACKAGE = Path(__file__).resolve().parents[2] / "harmony_grammar"

#: Text that exercises every branch of the o200k pre-tokenizer pattern.
EDGE_TEXTS = [
    "",
    "hello world",
    "Hello, World! It's THE'S they'll we'VE",
    "x's y'S z'Re",
    "12345678 3.14159 -0.5e-10 1,000,000",
    "   leading and trailing   ",
    "tabs\tand\r\nnewlines\n\n\n  \n",
    "héllo wörld naïve café",
    "日本語のテキストと中文文本",
    "Здравствуй, мир! Ελληνικά",
    "emoji 🙂👍🏽 and ZWJ 👨‍👩‍👧",
    "مرحبا بالعالم",
    "def f(x):\n    return {'a': [1, 2]}  # comment\n",
    '{"location":"San Francisco, CA","unit":"celsius"}',
    "<|not a token|> <| start |> <|start",
    "a\u00a0b\u2028c\u3000d",
    "\x00\x01\x7f control bytes",
]


@pytest.fixture(scope="module")
def tokenizer():
    return hf_tokenizer()


def test_vocabulary_size_matches_tiktoken(tokenizer, encoding):
    assert len(tokenizer) == encoding.n_vocab == 201088


def test_every_special_id_is_tiktokens(tokenizer, encoding):
    for token_id in range(FIRST_SPECIAL_ID, encoding.n_vocab):
        spelling = tokenizer.convert_ids_to_tokens(token_id)
        assert encoding.encode_single_token(spelling) == token_id, spelling
        assert tokenizer.convert_tokens_to_ids(spelling) == token_id
        assert tokenizer.decode([token_id]) == encoding.decode([token_id])


@pytest.mark.parametrize("token", list(ControlToken), ids=lambda t: t.name)
def test_control_tokens_encode_to_their_special_id(tokenizer, token):
    ids = tokenizer.encode(f"a{token.value}b", add_special_tokens=False)
    assert ids[1] == token.id
    assert len(ids) == 3


def test_special_flags_and_stop_tokens(tokenizer, encoding):
    assert tokenizer.eos_token_id == ControlToken.RETURN.id
    assert tokenizer.pad_token_id == encoding.eot_token
    assert stop_token_ids() == sorted([ControlToken.CALL.id, ControlToken.RETURN.id])
    text = "<|start|>assistant<|channel|>final<|message|>hi<|return|>"
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids, skip_special_tokens=True) == "assistantfinalhi"
    assert tokenizer.decode(ids) == text


def test_ordinary_ids_decode_to_tiktokens_bytes(tokenizer, encoding):
    # Every ordinary id, through the Hugging Face vocabulary's byte-level names.
    names = tokenizer.convert_ids_to_tokens(list(range(FIRST_SPECIAL_ID)))
    byte_decoder = {char: byte for byte, char in _bytes_to_unicode().items()}
    for token_id, name in enumerate(names):
        assert bytes(byte_decoder[c] for c in name) == encoding.decode_single_token_bytes(
            token_id
        ), token_id


def _bytes_to_unicode():
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return bytes_to_unicode()


@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_edge_texts_tokenize_as_tiktoken(tokenizer, encoding, text):
    assert tokenizer.encode(text, add_special_tokens=False) == encoding.encode_ordinary(text)


def test_source_corpus_tokenizes_as_tiktoken(tokenizer, encoding):
    # The package's own source and docs: code, prose, and literal control-token spellings.
    corpus = "\n".join(path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py")))
    assert len(corpus) > 100_000
    # tiktoken also reads "<|reserved_200018|>" as <|endofprompt|>'s id; the Hugging Face
    # vocabulary has one spelling per id, so that alias is the one spelling left out.
    allowed = set(encoding.special_tokens_set) - {"<|reserved_200018|>"}
    expected = encoding.encode(corpus, allowed_special=allowed, disallowed_special=())
    got = tokenizer.encode(corpus, add_special_tokens=False)
    assert got == expected
    assert any(token.id in got for token in ControlToken)
    assert tokenizer.decode(got) == corpus


@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=120))
def test_random_text_tokenizes_as_tiktoken(tokenizer, encoding, text):
    if "<|" in text:
        return  # special spellings are covered above
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert ids == encoding.encode_ordinary(text)
    assert tokenizer.decode(ids) == text


def test_llguidance_reads_the_same_vocabulary_from_both_tokenizers(tokenizer):
    # outlines hands llguidance the Hugging Face tokenizer; the torch-free sampler hands it
    # tiktoken's. They must be the same vocabulary, specials included.
    import llguidance.hf

    from harmony_grammar.generation.sampling import llg_tokenizer

    from_hf = llguidance.hf.from_tokenizer(tokenizer)
    from_tiktoken = llg_tokenizer()
    assert from_hf.vocab_size >= len(tokenizer)
    for token_id in range(0, FIRST_SPECIAL_ID, 97):
        assert from_hf.decode_bytes([token_id]) == from_tiktoken.decode_bytes([token_id])
    for token in ControlToken:
        assert from_hf.is_special_token(token.id)
        assert from_tiktoken.is_special_token(token.id)
        assert from_hf.decode_str([token.id]) == from_tiktoken.decode_str([token.id])
    text = '{"a": "Grüße 🙂"}'
    assert from_hf.tokenize_str(text) == from_tiktoken.tokenize_str(text)


def test_tiny_model_matches_the_tokenizer(tokenizer):
    import torch

    model = tiny_model(seed=3)
    embeddings = model.get_input_embeddings().weight
    assert embeddings.shape[0] == len(tokenizer)
    assert model.get_output_embeddings().weight.data_ptr() == embeddings.data_ptr()
    assert sum(p.numel() for p in model.parameters()) < 8_000_000
    assert model.generation_config.eos_token_id == stop_token_ids()
    with torch.no_grad():
        logits = model(torch.tensor([[ControlToken.START.id, 1, 2]])).logits
    assert logits.shape == (1, 3, len(tokenizer))


def test_tiny_model_seed_names_the_weights():
    import torch

    first, again, other = tiny_model(seed=5), tiny_model(seed=5), tiny_model(seed=6)
    weight = first.get_input_embeddings().weight
    assert torch.equal(weight, again.get_input_embeddings().weight)
    assert not torch.equal(weight, other.get_input_embeddings().weight)


def test_outlines_model_wraps_the_tiny_model(tokenizer):
    import outlines

    model = outlines_model(seed=0)
    assert isinstance(model, outlines.models.Transformers)
    assert model.hf_tokenizer is tokenizer
    assert model.model.config.vocab_size == len(tokenizer)
