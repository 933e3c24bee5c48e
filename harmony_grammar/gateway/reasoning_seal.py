"""Sealed chain of thought: the Responses API's ``encrypted_content``, for a stateless gateway.

A client that sends ``store: false`` and ``include: ["reasoning.encrypted_content"]`` (Codex
does) keeps the model's reasoning itself: each ``reasoning`` item comes back with an opaque
``encrypted_content``, and the client sends the items back on the next request. The gateway
stores nothing, so the blob *is* the analysis, sealed with authenticated encryption (AES-GCM
from the ``cryptography`` package) under a server key: the client can neither read nor
alter it, and a blob sealed under another key (another deployment, or a restart with a
random key) fails to open. Opened, it becomes the analysis message it was, and the
renderer's drop rule decides whether the prompt keeps it.

The key comes from an environment variable (``serve --reasoning-key-env VAR``: any secret
text, stretched to 256 bits with HKDF-SHA256), so every replica of a deployment opens every
other's blobs; without one, each process draws a random key.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..base.errors import HarmonyGrammarError
from .errors import bad_request

__all__ = ["INCLUDE_KEY", "ReasoningSeal", "SealError", "open_reasoning"]

#: The ``include`` entry that asks for sealed reasoning.
INCLUDE_KEY = "reasoning.encrypted_content"
#: The blob's version prefix, and the associated data every blob is bound to.
_PREFIX = "hg1."
_CONTEXT = b"harmony-grammar reasoning encrypted_content v1"
_NONCE_BYTES = 12


class SealError(HarmonyGrammarError, ValueError):
    """A blob that does not open: altered, truncated, or sealed under another key."""


class ReasoningSeal:
    """Seals and opens reasoning text under one 256-bit key (AES-GCM, a fresh nonce each)."""

    def __init__(self, key: bytes | None = None) -> None:
        if key is not None and len(key) != 32:
            raise ValueError("the reasoning key must be 32 bytes")
        self._aead = AESGCM(key if key is not None else AESGCM.generate_key(bit_length=256))

    @classmethod
    def from_secret(cls, secret: str) -> ReasoningSeal:
        """The seal whose key HKDF-SHA256 derives from ``secret`` (any non-empty text)."""
        if not secret:
            raise ValueError("the reasoning key secret is empty")
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_CONTEXT)
        return cls(hkdf.derive(secret.encode("utf-8")))

    @classmethod
    def from_env(cls, variable: str | None) -> ReasoningSeal:
        """The seal of ``--reasoning-key-env VAR`` (a random key when ``variable`` is None);
        ``ValueError`` naming the variable when it is unset or empty."""
        if variable is None:
            return cls()
        secret = os.environ.get(variable)
        if not secret:
            raise ValueError(
                f"--reasoning-key-env {variable}: the variable is unset or empty; export a "
                "secret in it (every replica needs the same one)"
            )
        return cls.from_secret(secret)

    def seal(self, text: str) -> str:
        """``text`` sealed: ``hg1.`` and the URL-safe base64 of nonce and ciphertext."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, text.encode("utf-8"), _CONTEXT)
        return _PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def open(self, blob: object) -> str:
        """The text a blob of :meth:`seal` holds; :class:`SealError` when it does not open."""
        if not isinstance(blob, str) or not blob.startswith(_PREFIX):
            raise SealError("it was not sealed by this gateway (no hg1. prefix)")
        try:
            raw = base64.urlsafe_b64decode(blob[len(_PREFIX) :].encode("ascii"))
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise SealError("it is not URL-safe base64") from None
        if len(raw) <= _NONCE_BYTES:
            raise SealError("it is too short to hold a sealed text")
        try:
            text = self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _CONTEXT)
        except InvalidTag:
            raise SealError(
                "it was altered, or sealed under another key (a restarted gateway without "
                "--reasoning-key-env draws a new one)"
            ) from None
        return text.decode("utf-8")


def open_reasoning(request: Mapping[str, Any], seal: ReasoningSeal) -> Mapping[str, Any]:
    """``request`` with every sealed reasoning item of ``input`` opened into its text.

    An item's ``encrypted_content`` replaces whatever ``content`` it carries (the sealed text
    is the authentic one). A blob that does not open is a 400 naming the item. The request
    is returned as is when no item is sealed.
    """
    items = request.get("input")
    if not isinstance(items, list) or not any(_sealed(item) for item in items):
        return request
    opened: list[Any] = []
    for i, item in enumerate(items):
        if not _sealed(item):
            opened.append(item)
            continue
        try:
            text = seal.open(item["encrypted_content"])
        except SealError as exc:
            raise bad_request(
                f"the reasoning item's encrypted_content does not open: {exc}; send back "
                "the items this gateway returned, unchanged",
                f"input[{i}].encrypted_content",
            ) from None
        opened.append({**item, "content": [{"type": "reasoning_text", "text": text}]})
    return {**request, "input": opened}


def _sealed(item: Any) -> bool:
    return (
        isinstance(item, Mapping)
        and item.get("type") == "reasoning"
        and item.get("encrypted_content") is not None
    )
