"""What ``--stream`` shares: a completion as token ids, fed one id at a time, as JSON Lines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ..format.harmony_ids import encode_harmony
from .inputs import read_text, read_token_ids

__all__ = ["completion_ids", "stream_json_lines"]


class _Stream(Protocol):
    def feed_tokens(self, token_ids: Sequence[int]) -> list[dict[str, Any]]: ...

    def close(self) -> list[dict[str, Any]]: ...


def completion_ids(path: str, tokens: bool) -> list[int]:
    """The completion's o200k_harmony ids: read as ids, or Harmony text encoded (control
    spellings as their special ids), as a server's sampler would have produced them."""
    return read_token_ids(path) if tokens else encode_harmony(read_text(path))


def stream_json_lines(stream: _Stream, ids: Iterable[int]) -> None:
    """Feed ``ids`` one at a time, as a serving loop does, printing each payload as a line."""
    for token_id in ids:
        for payload in stream.feed_tokens([token_id]):
            print(json.dumps(payload, ensure_ascii=False))
    for payload in stream.close():
        print(json.dumps(payload, ensure_ascii=False))
    sys.stdout.flush()
