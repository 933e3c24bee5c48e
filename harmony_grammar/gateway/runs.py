"""What a Chat Completions and a Responses run share: engine output fed to a stream bridge.

A run wraps the stream bridge of its API (:class:`~harmony_grammar.bridges.ChatCompletionStream`,
:class:`~harmony_grammar.bridges.ResponsesStream`) and adds what the bridge does not know:
token usage, the gateway's own count of ``max_tokens``, where the turn ends, and how an
engine fault ends it. :class:`TurnRun` is that shared part; each API's run is in its
``serving`` module (:class:`~.chat.serving.ChatRun`, :class:`~.responses.serving.ResponsesRun`),
and a whole (non-streamed) answer is the same run's payloads folded together, so a streamed
and a whole answer to the same output can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..bridges import ChatCompletionStream, ResponsesStream
from ..format.bounded_encode import EncodeLimitError
from ..format.tokens import CONTROL_SPELLING_RE, ControlToken
from .backend import Output
from .errors import UpstreamError
from .logprobs import LogprobTrail
from .plan import Plan
from .text_count import TextCount

__all__ = ["TurnRun"]


#: A read is fed to the bridge in pieces cut after each control token: the turn may end at
#: any of them (a stop token, or the header of a message the model must not write, HG170),
#: and nothing after the one where it ends may be read.
_CUT_IDS = frozenset(token.id for token in ControlToken)
#: How much of the text fed last a control token's spelling may straddle into the next read.
_CUT_OVERLAP = max(len(token.value) for token in ControlToken) - 1


class TurnRun:
    """What both APIs' runs share: feeding output, counting tokens, and how the turn ended.

    The gateway counts the tokens itself and takes none past ``max_tokens``, whatever the
    engine does; the turn was cut (:attr:`truncated`) when it did not reach its stop token
    and the gateway's count or the engine's own word says a limit ended it.

    The turn ends at its stop token (``<|call|>``, ``<|return|>``) or at the header of a
    message the model must not write (a forged tool result, HG170), and the gateway stops
    reading there, so a read is fed to the bridge a control token at a time, up to the
    stop: what an engine sent past it is never read, whether it came in the same read or a
    later one. The answer and
    its diagnostics then never depend on where the engine's reads end
    (tests/bridges/test_bridge_chunking.py).
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self._last_text = ""  # the end of the text fed last: a stop spelling may straddle
        self.prompt_tokens = len(plan.prompt_ids)
        self.completion_tokens = 0
        self._engine_count: int | None = None
        self._text: TextCount | None = None  # set once a text engine's output arrives
        #: Ids that arrived inside analysis (or a built-in tool's call): reasoning tokens.
        self.reasoning_tokens = 0
        #: The gateway's own count reached ``max_tokens``: nothing more is taken.
        self.exhausted = False
        #: The engine's own finish word (``length`` / ``stop``), where it gave one.
        self.engine_finish: str | None = None
        #: The fault that ended the run, if one did (after :meth:`close`).
        self.fault: UpstreamError | None = None
        #: Follows the answer's ids to its text payloads, where the plan asks for logprobs.
        self.trail = LogprobTrail() if plan.logprobs is not None else None

    @property
    def turn_ended(self) -> bool:
        """True once the turn reached its own end (``<|call|>``, ``<|return|>``, a stop)."""
        raise NotImplementedError

    @property
    def should_stop(self) -> bool:
        """True once the turn is over or the token limit is reached (stop the engine now)."""
        return self.turn_ended or self.exhausted

    @property
    def truncated(self) -> bool:
        """Whether the turn was cut before its end: at the gateway's count of ``max_tokens``,
        or where the engine stopped without saying it met a stop token."""
        if self.turn_ended:
            return False
        return self.exhausted or self.engine_finish != "stop"

    def _take(self, output: Output) -> Output:
        """``output`` up to ``max_tokens`` (counted here), the engine's words noted."""
        if output.finish_reason is not None:
            self.engine_finish = output.finish_reason
        if output.completion_tokens is not None:
            self._engine_count = output.completion_tokens
        room = self.plan.max_tokens - self.completion_tokens
        if output.ids:
            ids = output.ids[:room]
            self.completion_tokens += len(ids)
            output = Output(ids=ids, logprobs=output.logprobs[:room])
        elif output.text:
            if self._text is None:
                self._text = TextCount(self.plan.max_tokens)
            try:
                text = self._text.take(output.text)
            except EncodeLimitError:
                raise UpstreamError("the engine sent text too long to count") from None
            self.completion_tokens = self._text.count
            self.exhausted = self._text.full
            return Output(text=text)
        self.exhausted = self.completion_tokens >= self.plan.max_tokens
        return output

    def _settle(self, fault: UpstreamError | None) -> str:
        """Notes the fault; returns a text engine's held last characters (see TextCount)."""
        self.fault = fault
        if self._text is None:
            return ""
        rest = self._text.end()
        self.completion_tokens = self._text.count
        return rest

    def _pieces(self, output: Output) -> Iterator[str | tuple[int, ...]]:
        """``output`` cut after each control token (ids) or its spelling (text)."""
        if output.ids:
            ids, start = output.ids, 0
            for index, token_id in enumerate(ids):
                if token_id in _CUT_IDS:
                    yield ids[start : index + 1]
                    start = index + 1
            if start < len(ids):
                yield ids[start:]
            return
        text, before = output.text, self._last_text
        self._last_text = (before + text)[-_CUT_OVERLAP:]
        start = 0
        for match in CONTROL_SPELLING_RE.finditer(before + text):
            end = match.end() - len(before)
            if end > start:
                yield text[start:end]
                start = end
        if start < len(text):
            yield text[start:]

    def _read(self, bridge: ChatCompletionStream | ResponsesStream, output: Output) -> list[Any]:
        """What the bridge makes of ``output``, read up to the turn's stop."""
        out: list[Any] = []
        for piece in self._pieces(output):
            if bridge.should_stop:
                break
            out += bridge.feed(piece) if isinstance(piece, str) else bridge.feed_tokens(piece)
        return out

    @property
    def output_tokens(self) -> int:
        """Completion tokens: the ids taken, or a text engine's own count (unless the
        gateway cut its output: then what the client got)."""
        if self._text is not None and self._engine_count is not None and not self.exhausted:
            return self._engine_count
        return self.completion_tokens
