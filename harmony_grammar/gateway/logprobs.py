"""Log-probabilities on the wire: the sampler's :class:`TokenLogprobs` in each API's shape.

The embedded backend scores every step, so it can say how likely each id it drew was
(:class:`~harmony_grammar.generation.sampling.TokenLogprobs`: the model's distribution over
the ids the grammar allowed at that step, before temperature). The APIs report them for the
answer's text only (Chat ``message.content``, a Responses ``output_text``): a
:class:`LogprobTrail` follows the ids as they are fed to a bridge and hands each text
payload the ids whose text it carries. Ids that spell a header, reasoning or a call's
arguments are not reported; a control token ends the run of ids that wait for their text.
``/v1/completions`` reports every id (:func:`completion_logprobs`, the legacy shape).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..format.tokens import FIRST_SPECIAL_ID
from ..format.vocabulary import load_encoding
from ..generation.sampling import TokenLogprobs

__all__ = ["LogprobTrail", "completion_logprobs", "token_entry"]


def _token(token_id: int) -> tuple[str, list[int]]:
    """An id's text (invalid UTF-8 replaced, as OpenAI shows a partial character) and bytes."""
    raw = load_encoding().decode_single_token_bytes(token_id)
    return raw.decode("utf-8", errors="replace"), list(raw)


def token_entry(logprobs: TokenLogprobs) -> dict[str, Any]:
    """One position as Chat's ``ChatCompletionTokenLogprob`` and the Responses API's
    ``Logprob`` (the same four fields)."""
    text, raw = _token(logprobs.id)
    top = []
    for token_id, value in logprobs.top:
        other, other_raw = _token(token_id)
        top.append({"token": other, "logprob": value, "bytes": other_raw})
    return {"token": text, "logprob": logprobs.logprob, "bytes": raw, "top_logprobs": top}


class LogprobTrail:
    """The ids fed since the last control token, waiting for the text payload they spell.

    :meth:`feed` takes the ids of one piece of output (with their log-probabilities) and the
    ``logprobs`` lists of the text payloads that piece produced, in order; the waiting ids go
    to the last of them. Exact when each piece holds one id (the embedded backend's): a text
    payload is then made by the id just fed, or by it and the ids the parser held back (a
    character split across ids).
    """

    def __init__(self) -> None:
        self._waiting: list[TokenLogprobs] = []

    def feed(
        self, ids: Sequence[int], logprobs: Sequence[TokenLogprobs], targets: list[list[Any]]
    ) -> None:
        """Note ``ids``; hand the waiting ones to ``targets[-1]`` when there is a target."""
        special = False
        for token_id, entry in zip(ids, logprobs, strict=False):
            if token_id >= FIRST_SPECIAL_ID:
                special = True
            else:
                self._waiting.append(entry)
        if targets:
            targets[-1].extend(token_entry(entry) for entry in self._waiting)
            self._waiting.clear()
        elif special:
            self._waiting.clear()  # they spelled a header, reasoning or a call, not text


def completion_logprobs(logprobs: Sequence[TokenLogprobs], offset: int) -> dict[str, Any]:
    """The legacy ``/v1/completions`` ``logprobs`` object for ``logprobs``, whose text begins
    ``offset`` characters into the completion (``tokens``, ``token_logprobs``,
    ``top_logprobs`` as ``{token: logprob}``, ``text_offset``)."""
    tokens: list[str] = []
    values: list[float] = []
    tops: list[dict[str, float]] = []
    offsets: list[int] = []
    for entry in logprobs:
        text, _ = _token(entry.id)
        tokens.append(text)
        values.append(entry.logprob)
        tops.append({_token(i)[0]: v for i, v in entry.top})
        offsets.append(offset)
        offset += len(text)
    return {
        "tokens": tokens,
        "token_logprobs": values,
        "top_logprobs": tops,
        "text_offset": offsets,
    }
