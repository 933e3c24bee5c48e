"""The replay backend: recorded completions played back through the request's turn grammar.

``serve --backend replay --replay FILE`` reads a JSON Lines file whose every line is one
completion, written as the model writes it after ``<|start|>assistant``: a JSON string of
Harmony text, or an object ``{"text": "..."}``. The n-th generation request plays the n-th
line, cycling back to the first after the last. Agent integrations (Codex, the Agents SDK)
can then be tested end to end without a model, through the gateway's real path: the line is
encoded to o200k_harmony ids, checked token by token against the request's own turn grammar
(llguidance's matcher, as an engine would mask it), and streamed to the app like an engine's
output, one id at a time. A line the grammar refuses fails that request with a 502 naming the
line, the token and the character where it left the grammar; nothing of it is streamed.

The turn grammar writes each body in its schema's declared key order, which is right for
generation; a recorded line was not generated under it. So where the grammar refuses a line
inside its last message's body (a call's arguments, or an answer bound to
``response_format``), the line is checked again with the body as any JSON (the turn's
checking grammar, ``completion_grammar(..., bodies="json")``), and the body by the JSON
Schema validator (the tools layer's checker, as the parser reports HG180-HG184): arguments
that list their keys in another order, or are spaced otherwise, are played, and arguments the
schema refuses are a 502 naming the problem. A request through ``/v1/completions`` brings
only a grammar, so its lines are checked against that grammar alone, as an engine would be.

The backend behaves as an honest engine: it stops at ``max_tokens`` (what an engine does
when its limit comes before the turn's end, so the gateway reports the cut), and it also
serves the vLLM-style ``/v1/completions`` (:meth:`ReplayBackend.tokens`), so a gateway with
``--backend vllm`` in front of it runs the engine backends' code path on the same lines.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from pathlib import Path

import anyio

from ..base.errors import HarmonyGrammarError
from ..format.bounded_encode import EncodeLimitError
from ..format.codes import CATALOGUE
from ..format.harmony_ids import encode_harmony
from ..format.vocabulary import load_encoding
from ..generation.sampling import llg_tokenizer
from ..generation.turn_grammar import completion_grammar
from ..schema.grammar_gate import GrammarLimitError, build_matcher
from ..tools.arguments import first_schema_error
from .backend import Output
from .errors import GatewayError, UpstreamError
from .plan import Plan

__all__ = ["ReplayBackend", "ReplayFileError", "read_replay"]


class ReplayFileError(HarmonyGrammarError, ValueError):
    """The replay file cannot be read: the message names the line and the fix."""


def read_replay(path: str | Path) -> list[tuple[int, tuple[int, ...]]]:
    """The completions of a replay file: ``(line number, token ids)`` each, blank lines skipped.

    Raises :class:`ReplayFileError` naming the line for a line that is not a JSON string or
    an object with a string ``text`` (and nothing else), and for a file with no line at all.
    """
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayFileError(f"--replay {path}: cannot read the file: {exc}") from None
    lines: list[tuple[int, tuple[int, ...]]] = []
    for number, line in enumerate(source.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"--replay {path}, line {number}"
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise ReplayFileError(
                f"{where}: not JSON ({exc}); write each completion as a JSON string of "
                'Harmony text, or {"text": "..."}'
            ) from None
        if isinstance(value, dict) and set(value) == {"text"}:
            value = value["text"]
        if not isinstance(value, str):
            raise ReplayFileError(
                f'{where}: must be a JSON string of Harmony text or {{"text": "..."}}; '
                f"got {type(value).__name__}"
            )
        try:
            lines.append((number, tuple(encode_harmony(value))))
        except EncodeLimitError as exc:
            raise ReplayFileError(f"{where}: {exc}") from None
    if not lines:
        raise ReplayFileError(f"--replay {path}: the file has no completion; write one a line")
    return lines


class ReplayBackend:
    """Plays the lines of a replay file, in order and cycling (see the module docstring)."""

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.lines = read_replay(path)
        llg_tokenizer()  # built once, here, rather than inside the first request
        self.played = 0  # generation requests so far: the next one plays line played % len

    async def ready(self) -> bool:
        """Always ready: the lines are in memory."""
        return True

    async def aclose(self) -> None:
        """Nothing to release."""

    def generate(self, plan: Plan) -> AsyncIterator[Output]:
        """The next line, checked against ``plan.grammar`` and cut at ``plan.max_tokens``."""
        return self._outputs(self._next_line(), plan)

    async def _outputs(self, line: int, plan: Plan) -> AsyncIterator[Output]:
        for token in await self._checked(line, plan.grammar, plan.max_tokens, plan):
            yield Output(ids=(token,))

    async def tokens(
        self,
        prompt: Sequence[int],
        grammar: str,
        *,
        max_tokens: int,
        temperature: float = 1.0,
        seed: int | None = None,
        stop_ids: frozenset[int] = frozenset(),
    ) -> AsyncGenerator[int, None]:
        """The next line's ids under ``grammar``, as :meth:`EmbeddedBackend.tokens` draws them.

        The same contract (the vLLM-style ``/v1/completions`` serves it): ends at the line's
        end, at ``max_tokens``, or after an id in ``stop_ids``; ``prompt``, ``temperature``
        and ``seed`` do not change a recorded line.
        """
        for token in await self._checked(self._next_line(), grammar, max_tokens):
            yield token
            if token in stop_ids:
                return

    def _next_line(self) -> int:
        # Counted when the request is planned into a generation, so the n-th request plays
        # the n-th line whatever order the streams are read in.
        line = self.played % len(self.lines)
        self.played += 1
        return line

    async def _checked(
        self, line: int, grammar: str, max_tokens: int, plan: Plan | None = None
    ) -> tuple[int, ...]:
        """The line's ids up to ``max_tokens``, all checked before any is played, in a worker
        thread (a large grammar takes seconds to build), behind the grammar gate: against
        ``grammar``, and with ``plan``, a body refused only for its spelling or key order is
        checked by the JSON Schema validator instead (the module docstring)."""
        return await anyio.to_thread.run_sync(self._check, line, grammar, max_tokens, plan)

    def _check(
        self, line: int, grammar: str, max_tokens: int, plan: Plan | None
    ) -> tuple[int, ...]:
        ids = self.lines[line][1][:max_tokens]
        accepted = _accepted(grammar, ids)
        refused = accepted < len(ids)
        if refused and (plan is None or not self._body_valid(line, ids, accepted, plan)):
            raise UpstreamError(self._refusal(line, ids, accepted))
        return ids

    def _body_valid(self, line: int, ids: tuple[int, ...], refused: int, plan: Plan) -> bool:
        """True when the refusal at token ``refused`` lies in the last message's body and the
        line holds under the checking grammar with a body the validator accepts; a body the
        validator refuses is a 502 naming its problem."""
        message = load_encoding().encode_single_token("<|message|>")
        if message not in ids[:refused] or message in ids[refused:]:
            return False  # refused outside the last message's body: the structure is wrong
        checking = completion_grammar(
            plan.toolset if plan.tool_choice != "none" else {},
            tool_choice=plan.tool_choice,
            response_format=plan.response_format,
            recipient_position=plan.recipient_position,
            bodies="json",
        )
        if _accepted(checking, ids) < len(ids):
            return False
        problem = self._body_problem(ids, plan)
        if problem is not None:
            raise UpstreamError(
                f"replay {self.path}, line {self.lines[line][0]}: {problem}; record a "
                "completion this request's tools and format allow"
            )
        return True

    @staticmethod
    def _body_problem(ids: tuple[int, ...], plan: Plan) -> str | None:
        """What the JSON Schema validator says of the last message's body (None: valid, or
        cut by ``max_tokens`` before it ends, which the gateway reports as a cut)."""
        from ..format import parse
        from ..format.model import Terminator

        text = load_encoding().decode(list(ids))
        result = parse(text, start="completion", tools=plan.toolset or None)
        last = result.messages[-1] if result.messages else None
        if last is None or last.terminator is None:
            return None
        for diagnostic in result.diagnostics:
            if CATALOGUE[diagnostic.code].argument_problem:
                return f"the arguments of {last.recipient} are refused: {diagnostic.message}"
        if last.terminator is Terminator.RETURN and plan.response_format is not None:
            from ..generation.turn_plan import response_schema

            found = first_schema_error(response_schema(plan.response_format), last.content)
            if found is not None:
                return f"the answer does not match response_format: {found}"
        return None

    def _refusal(self, line: int, ids: Sequence[int], index: int) -> str:
        encoding = load_encoding()
        offset = len(encoding.decode(list(ids[:index])))
        token = encoding.decode([ids[index]])
        before = encoding.decode(list(ids[max(index - 8, 0) : index]))
        return (
            f"replay {self.path}, line {self.lines[line][0]}: the request's turn grammar "
            f"refuses token {index} ({token!r}, id {ids[index]}) at character {offset}, "
            f"after {before!r}; record a completion this request's tools and format allow"
        )


def _accepted(grammar: str, ids: Sequence[int]) -> int:
    """How many of ``ids`` llguidance's matcher for ``grammar`` accepts, from the start (the
    matcher built behind the grammar gate, on a deep stack: :func:`build_matcher`)."""
    try:
        matcher = build_matcher(grammar, llg_tokenizer())
    except GrammarLimitError as exc:
        raise GatewayError(
            400,
            f"the grammar is past the gateway's {exc.limit} limit: {exc}",
            code=f"grammar_{exc.limit}_exceeded",
        ) from None
    except ValueError as exc:
        raise GatewayError(400, f"llguidance rejects the grammar: {exc}") from None
    return int(matcher.validate_tokens(list(ids)))
