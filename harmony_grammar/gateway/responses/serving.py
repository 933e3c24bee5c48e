"""Responses out: one plan's run as ``response.*`` events, and the route.

:class:`ResponsesRun` turns the engine's output into events (the bridge's, with usage,
log-probabilities, sealed reasoning where ``include`` asks, and how a cut or a fault ends
the response); its last event carries the whole response object. :class:`ResponsesServing`
answers ``POST /v1/responses`` and its ``/render`` twin through the gateway's shared steps
(:mod:`..service`), planning with :func:`~.protocol.plan_responses` (sealed reasoning sent
back is opened under the gateway's key).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...bridges import ResponsesStream
from ..backend import Output
from ..errors import UpstreamError
from ..plan import Plan
from ..reasoning_seal import ReasoningSeal
from ..render_endpoints import rendered, report_headers
from ..runs import TurnRun
from ..service import Gateway
from ..validation import grammar_field
from .protocol import plan_responses

__all__ = ["ResponsesRun", "ResponsesServing"]


class ResponsesServing:
    """``POST /v1/responses`` and ``/v1/responses/render`` over a gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def plan(self, body: Any) -> Plan:
        """The plan of a Responses body, sealed reasoning opened under the gateway's key
        (in a worker thread)."""
        seal = self.gateway.config.reasoning_seal
        return await self.gateway.plan(plan_responses, body, seal=seal)

    async def create(self, request: Request) -> Response:
        """``POST /v1/responses``: the response, whole or streamed."""
        gateway = self.gateway
        plan = await self.plan(await gateway.admitted(request, "responses"))
        run = ResponsesRun(plan, seal=gateway.config.reasoning_seal)
        return await gateway.answer(
            request,
            run,
            gateway.backend.generate(plan),
            stream=plan.stream,
            named=True,
            whole=lambda _: run.response(),
            grammar_param=grammar_field(plan.api, plan.response_format is not None),
            headers=report_headers(plan),
        )

    async def render(self, request: Request) -> Response:
        """``POST /v1/responses/render``: the prompt, planned as for ``create``."""
        self.gateway.check_key(request)
        return rendered(await self.plan(await self.gateway.body(request)))


class ResponsesRun(TurnRun):
    """Responses API events for one plan; :meth:`response` is the whole object.

    With ``seal``, and ``reasoning.encrypted_content`` in the request's ``include``, each
    reasoning item carries its text sealed as ``encrypted_content`` (:mod:`.reasoning_seal`).
    """

    def __init__(self, plan: Plan, seal: ReasoningSeal | None = None) -> None:
        super().__init__(plan)
        self.bridge = ResponsesStream(
            request=plan.echo,
            tools=plan.toolset,
            model=plan.model,
            seal=seal.seal if seal is not None and plan.seal_reasoning else None,
        )
        self._final: dict[str, Any] | None = None
        #: Per message item, its text's log-probabilities so far (where asked for).
        self._logprobs: dict[str, list[dict[str, Any]]] = {}

    @property
    def turn_ended(self) -> bool:
        """The bridge's stop (``<|call|>``, ``<|return|>``)."""
        return self.bridge.should_stop

    def feed(self, output: Output) -> list[dict[str, Any]]:
        """The events that ``output`` completes (none past ``max_output_tokens``)."""
        output = self._take(output)
        if not output.ids and not output.text:
            return []
        events = self._read(self.bridge, output)
        if self.bridge.kind == "reasoning":
            self.reasoning_tokens += len(output.ids)
        if self.trail is not None:
            self._with_logprobs(events, output)
        return events

    def _with_logprobs(self, events: list[dict[str, Any]], output: Output) -> None:
        """The answer's log-probabilities on its text deltas, and on each event that repeats
        a whole ``output_text`` (its ``.done``, its part's, its item's)."""
        assert self.trail is not None
        targets = [e["logprobs"] for e in events if e["type"] == "response.output_text.delta"]
        self.trail.feed(output.ids, output.logprobs, targets)
        self._fill_events(events)

    def _fill_events(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            if event["type"] == "response.output_text.delta":
                self._logprobs.setdefault(event["item_id"], []).extend(event["logprobs"])
            elif event["type"] == "response.output_text.done":
                event["logprobs"] = list(self._logprobs.get(event["item_id"], ()))
            else:
                self._fill(event.get("part"), event.get("item_id"))
                self._fill_item(event.get("item"))

    def _fill(self, part: Any, item_id: Any) -> None:
        if isinstance(part, dict) and part.get("type") == "output_text":
            part["logprobs"] = list(self._logprobs.get(item_id, ()))

    def _fill_item(self, item: Any) -> None:
        if isinstance(item, dict) and item.get("type") == "message":
            for part in item.get("content") or ():
                self._fill(part, item.get("id"))

    def close(self, fault: UpstreamError | None = None) -> list[dict[str, Any]]:
        """The last events; the final one carries the whole response, usage included.

        A turn cut before its stop token (:attr:`truncated`) is ``incomplete``
        (``incomplete_details.reason`` ``max_output_tokens``), the item it was cut inside too
        (a call included: never ``completed``). A fault makes it ``response.failed`` with
        the fault as ``error`` and the items written so far as ``output``, the cut one
        ``incomplete``.
        """
        rest = self._settle(fault)
        early = self._read(self.bridge, Output(text=rest)) if rest else []
        truncated = fault is not None or self.truncated
        events = early + self.bridge.close(truncated=truncated)
        final = events[-1]
        response = final["response"]
        response["usage"] = self.usage()
        if self.trail is not None:
            self._fill_events(events)
            for item in response["output"]:
                self._fill_item(item)
        if truncated and fault is None and response["status"] == "failed":
            # What the cut broke (a call's name cut to one no tool has) is the cut, told as
            # such: incomplete, the diagnostics still listing what the parse found.
            final["type"] = "response.incomplete"
            response["status"] = "incomplete"
            response["error"] = None
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        if fault is not None:
            final["type"] = "response.failed"
            response["status"] = "failed"
            response["error"] = {"code": "server_error", "message": fault.message}
            response["incomplete_details"] = None
        self._final = response
        return events

    def response(self) -> dict[str, Any]:
        """The whole response object (after :meth:`close`)."""
        if self._final is None:
            raise RuntimeError("the run is not closed")
        return self._final

    def usage(self) -> dict[str, Any]:
        """``usage`` from the token counts, in the Responses API's shape."""
        return {
            "input_tokens": self.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.prompt_tokens + self.output_tokens,
        }
