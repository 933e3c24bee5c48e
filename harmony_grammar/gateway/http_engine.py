"""The shared driver of an engine's streaming HTTP endpoint: :class:`HttpBackend`.

What every engine over HTTP needs once: the connection pool and its timeouts, one retry of a
pooled connection the engine closed as it was handed out, status codes, stream framing
(server-sent events or one JSON object a line), records of one network read merged into one
:class:`~.backend.Output`, an engine's error records, a stream cut before its end marker, and
closing the upstream response when the client leaves. Each engine's dialect (its request body,
how to read one record) is a subclass in :mod:`.engines`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

import httpx2

from ..schema.versions import version_tuple
from .backend import Output
from .errors import UpstreamError
from .plan import Plan

__all__ = ["HttpBackend"]

#: The ``data: [DONE]`` line, read as a record.
_DONE: Mapping[str, Any] = {}


class HttpBackend:
    """The shared driver of an engine's streaming HTTP endpoint.

    ``grammar`` picks the form of the turn's grammar for engines that take more than one
    (one of :attr:`grammars`; None is the first: ``llguidance`` text, exact, or an xgrammar
    ``structural-tag``; llama.cpp: ``gbnf`` or ``llguidance``). ``timeout`` bounds the
    connection and every wait for the next piece of output (a slow or hung engine is a 504,
    or an ended stream once output has started). ``engine_version`` (``--engine-version``)
    is the engine's release, for engines whose pinned grammar library the exports must
    target (:attr:`xgrammar_pins`); None: one with today's libraries.
    """

    name: ClassVar[str]
    path: ClassVar[str]
    health_path: ClassVar[str] = "/health"
    #: ``sse`` (``data: {...}`` lines) or ``ndjson`` (one JSON object a line).
    framing: ClassVar[str] = "sse"
    #: The grammar forms the engine takes (``--grammar``); the first is the default.
    grammars: ClassVar[tuple[str, ...]] = ("llguidance", "structural-tag")
    #: What ends a whole stream; one that ends without it was cut (an UpstreamError).
    end_marker: ClassVar[str] = "data: [DONE]"
    #: Engine releases (major, minor) whose xgrammar is older than the one the exports
    #: target by default, with that xgrammar's version: the structural tag is written for it.
    xgrammar_pins: ClassVar[Mapping[tuple[int, int], str]] = {}

    def __init__(
        self,
        upstream: str,
        *,
        model: str = "",
        grammar: str | None = None,
        timeout: float = 60.0,
        api_key: str | None = None,
        engine_version: str | None = None,
    ) -> None:
        grammar = grammar or self.grammars[0]
        #: The xgrammar the engine compiles structural tags with (None: today's).
        self.xgrammar_version: str | None = None
        if engine_version is not None:
            if not self.xgrammar_pins:
                raise ValueError(
                    f"--engine-version is for --backend vllm, whose grammar libraries are "
                    f"pinned per release; --backend {self.name} takes none"
                )
            major, minor = (*version_tuple(engine_version), 0, 0)[:2]
            self.xgrammar_version = self.xgrammar_pins.get((major, minor))
        if grammar not in self.grammars:
            raise ValueError(
                f"--grammar for --backend {self.name} must be one of {', '.join(self.grammars)};"
                f" not {grammar}"
            )
        self.upstream = upstream.rstrip("/")
        self.model = model
        self.grammar = grammar
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.AsyncClient(
            base_url=self.upstream,
            headers=headers,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            # Streams stay open for a whole generation: allow many at once.
            # Idle connections are dropped before the engine's own keep-alive limit (uvicorn's
            # is 5 s), so the pool rarely hands out one the engine is closing.
            limits=httpx2.Limits(
                max_connections=1024, max_keepalive_connections=256, keepalive_expiry=2.0
            ),
        )

    def body(self, plan: Plan) -> dict[str, Any]:
        """The engine's request body for ``plan``."""
        raise NotImplementedError

    def read(self, record: Mapping[str, Any]) -> Output | None:
        """One streamed record as output (None when it carries none)."""
        raise NotImplementedError

    async def ready(self) -> bool:
        """Whether the engine's health endpoint answers 200."""
        try:
            response = await self._client.get(self.health_path, timeout=5.0)
        except httpx2.HTTPError:
            return False
        return response.status_code == 200

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def generate(self, plan: Plan) -> AsyncIterator[Output]:
        """Stream the engine's output for ``plan``; faults raise :class:`UpstreamError`.

        A connection that fails before any output came is tried once more: a pooled
        keep-alive connection the engine closed at the same moment (uvicorn closes idle ones
        after 5 s) is no fault of the engine, and nothing was sent to the client yet.
        """
        where = f"{self.name} at {self.upstream}{self.path}"
        body = self.body(plan)
        for attempt in (1, 2):
            started = False
            try:
                async for output in self._stream(body, where):
                    started = True
                    yield output
                return
            except httpx2.TimeoutException:
                raise UpstreamError(f"{where} timed out", timeout=True) from None
            except httpx2.TransportError as exc:
                if started or attempt == 2 or isinstance(exc, httpx2.ConnectError):
                    raise UpstreamError(f"{where} failed: {type(exc).__name__}: {exc}") from None
            except httpx2.HTTPError as exc:
                raise UpstreamError(f"{where} failed: {type(exc).__name__}: {exc}") from None

    async def _stream(self, body: dict[str, Any], where: str) -> AsyncIterator[Output]:
        async with self._client.stream("POST", self.path, json=body) as response:
            if response.status_code != 200:
                detail = (await response.aread()).decode("utf-8", "replace")[:300]
                raise UpstreamError(f"{where} answered {response.status_code}: {detail}")
            # Every record that one network read completes is read together and handed on
            # as one Output: under load a read carries many tokens, and one parse step and
            # one chunk for all of them is what keeps the gateway's cost per token low. A
            # lone token still goes out the moment it arrives.
            pending = ""
            ended = False
            async for text in response.aiter_text():
                lines = (pending + text).split("\n")
                pending = lines.pop()
                outputs = []
                for line in lines:
                    output, end = self._line(line, where)
                    ended = ended or end
                    if output is not None:
                        outputs.append(output)
                merged = self.merge(outputs)
                if merged is not None:
                    yield merged
            if pending.strip():
                output, end = self._line(pending, where)
                ended = ended or end
                if output is not None:
                    yield output
            if not ended:
                # A connection closed cleanly mid-answer (a proxy's timeout, an engine that
                # died between records) is a fault, never a short answer.
                raise UpstreamError(
                    f"{where} ended its stream without its end marker ({self.end_marker}): "
                    "the output was cut"
                )

    def merge(self, outputs: list[Output]) -> Output | None:
        """The records of one read as one output (ids and text joined); None if empty."""
        if not outputs:
            return None
        if len(outputs) == 1:
            return outputs[0]
        counts = [o.completion_tokens for o in outputs if o.completion_tokens is not None]
        finishes = [o.finish_reason for o in outputs if o.finish_reason is not None]
        return Output(
            ids=tuple(i for o in outputs for i in o.ids),
            text="".join(o.text for o in outputs),
            completion_tokens=counts[-1] if counts else None,
            finish_reason=finishes[-1] if finishes else None,
        )

    def ends(self, record: Mapping[str, Any]) -> bool:
        """Whether ``record`` is the stream's last (engines without a ``[DONE]`` line)."""
        return False

    def _line(self, line: str, where: str) -> tuple[Output | None, bool]:
        """One line's output, and whether it ends the stream."""
        record = self._record(line.rstrip("\r"), where)
        if record is None:
            return None, False
        if record is _DONE:
            return None, True
        if isinstance(record.get("error"), (Mapping, str)):
            raise UpstreamError(f"{where} reported an error: {record['error']}")
        return self.read(record), self.ends(record)

    def _record(self, line: str, where: str) -> Mapping[str, Any] | None:
        if self.framing == "sse":
            if not line.startswith("data:"):
                return None  # blank separators, comments, event names
            line = line[5:].strip()
            if line == "[DONE]":
                return _DONE
        elif not line.strip():
            return None
        try:
            record = json.loads(line)
        except ValueError:
            raise UpstreamError(f"{where} sent a line that is not JSON: {line[:120]!r}") from None
        if not isinstance(record, Mapping):
            raise UpstreamError(f"{where} sent JSON that is not an object: {line[:120]!r}")
        return record

    def _grammar_field(self, llguidance_key: str, tag_key: str, plan: Plan) -> dict[str, Any]:
        if self.grammar == "structural-tag":
            return {tag_key: plan.structural_tag_for(self.xgrammar_version)}
        return {llguidance_key: plan.grammar}
