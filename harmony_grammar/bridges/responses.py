"""Responses API out: a completion as streaming events, or as one response object.

:class:`ResponsesStream` turns a streamed completion into ``response.*`` events;
:func:`to_responses` is that stream fed the whole completion and closed, returning the
object its last event carries, so the whole response always equals the streamed one (items,
status, diagnostics). The shapes are the ``openai`` SDK's (``openai.types.responses``);
tests validate every payload with them. The request side (a Responses request body to a
conversation) is rendering's: :func:`~harmony_grammar.rendering.responses.from_responses`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..declarations.toolset import ToolSet
from ..format.events import HeaderComplete
from ..format.model import Diagnostic, Message, Severity
from ..format.options import ParseKeywords, ParseOptions
from ..rendering.chat import FUNCTIONS_PREFIX
from .stream import BridgeStream, bridge_options, feed_whole

if TYPE_CHECKING:
    from typing_extensions import Unpack
from .turn import FUNCTION_CALL, REASONING

__all__ = [
    "IdFactory",
    "ResponsesStream",
    "new_item",
    "random_id",
    "response_object",
    "to_responses",
]

#: Makes an id from its kind's prefix (``resp``, ``rs``, ``msg``, ``fc``, ``call``).
IdFactory = Callable[[str], str]


def random_id(prefix: str) -> str:
    """``{prefix}_`` and 32 random hex digits, the shape of OpenAI's ids."""
    return f"{prefix}_{secrets.token_hex(16)}"


def new_item(
    kind: str,
    ids: IdFactory,
    *,
    recipient: str | None,
    channel: str | None,
    custom: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """An empty, in-progress output item of ``kind`` (see :func:`~.turn.item_kind`).

    A call to one of the ``custom`` recipients is a ``custom_tool_call`` (raw ``input``);
    a call into a namespace other than ``functions`` carries its ``namespace``.
    """
    if kind == FUNCTION_CALL:
        namespace, _, name = (recipient or "").partition(".")
        item: dict[str, Any] = {
            "type": "function_call",
            "id": ids("fc"),
            "call_id": ids("call"),
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        if recipient in custom:
            item = {
                "type": "custom_tool_call",
                "id": ids("ctc"),
                "call_id": item["call_id"],
                "name": name,
                "input": "",
            }
        if namespace != FUNCTIONS_PREFIX.rstrip("."):
            item["namespace"] = namespace
        return item
    if kind == REASONING:
        return {
            "type": "reasoning",
            "id": ids("rs"),
            "summary": [],
            "content": [{"type": "reasoning_text", "text": ""}],
            "status": "in_progress",
        }
    return {
        "type": "message",
        "id": ids("msg"),
        "role": "assistant",
        "status": "in_progress",
        "content": [{"type": "output_text", "text": "", "annotations": []}],
        "phase": "commentary" if channel == "commentary" else "final_answer",
    }


def _snapshot(value: Any) -> Any:
    """A copy of a payload built of dicts, lists and immutable leaves (deepcopy's result, in
    a fraction of its time: no memo, no dispatch on types that cannot occur)."""
    if isinstance(value, dict):
        return {key: _snapshot(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_snapshot(item) for item in value]
    return value


def response_object(
    response_id: str,
    items: Sequence[dict[str, Any]],
    diagnostics: Sequence[Diagnostic],
    *,
    finish: str | None,
    request: Mapping[str, Any] | None = None,
    model: str = "gpt-oss",
    created_at: float | None = None,
) -> dict[str, Any]:
    """The response object around ``items``.

    ``status`` is ``in_progress`` while ``finish`` (the turn's end, :func:`~.turn.finish_reason`)
    is None; then ``failed`` when a diagnostic is an error (``error`` says which),
    ``incomplete`` (``incomplete_details.reason`` ``max_output_tokens``) when the turn ended
    with ``length``, else ``completed``. The request's ``instructions``, ``tools``,
    ``tool_choice``, ``text`` and ``reasoning`` are echoed, as OpenAI does. ``diagnostics``
    (our addition) lists what the lenient parse repaired or found.
    """
    request = request or {}
    error = next((d for d in diagnostics if d.severity is Severity.ERROR), None)
    if finish is None:
        status = "in_progress"
    elif error is not None:
        status = "failed"
    else:
        status = "incomplete" if finish == "length" else "completed"
    response: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": created_at if created_at is not None else time.time(),
        "model": request.get("model", model),
        "status": status,
        "output": [_snapshot(item) for item in items],
        "error": (
            {"code": "server_error", "message": f"{error.code}: {error.message}"}
            if status == "failed" and error is not None
            else None
        ),
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": request.get("instructions"),
        "tools": list(request.get("tools") or []),
        "tool_choice": request.get("tool_choice", "auto"),
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", False)),
        "diagnostics": [d.to_dict() for d in diagnostics],
    }
    for key in ("text", "reasoning"):
        if key in request:
            response[key] = request[key]
    return response


class ResponsesStream(BridgeStream):
    """Responses API streaming events for a streamed completion.

    ``response.created`` and ``response.in_progress`` first; per output item
    ``response.output_item.added``, then ``response.content_part.added`` and
    ``response.reasoning_text.delta`` / ``response.output_text.delta`` with their ``.done``
    events and ``response.content_part.done``, or ``response.function_call_arguments.delta``
    and ``.done`` for a call, then ``response.output_item.done`` (the item's ``status``
    ``incomplete`` when it was cut, :func:`~.turn.message_cut`). :meth:`close` ends with
    ``response.completed`` (``response.incomplete`` for a turn that ended with ``length``,
    ``response.failed`` for an error the lenient parse cannot repair), carrying the object
    :func:`to_responses` returns: every item streamed, in every case. ``request`` is echoed
    (its function tools check the calls unless ``tools`` is given; a call into one of its
    namespaces is a ``function_call`` with ``namespace``, a call to one of its custom tools a
    ``custom_tool_call`` whose ``input`` streams as ``response.custom_tool_call_input.*``);
    the parse options are one :class:`~harmony_grammar.format.options.ParseOptions` and its fields
    as keywords (:func:`~.stream.bridge_options`: a completion, lenient unless ``lenient=False``);
    ``ids(prefix)`` makes the ids (default: random). ``seal(text)``, when given, adds
    ``encrypted_content`` to each reasoning item as it ends (the gateway's sealed chain of thought,
    which a stateless client sends back).
    """

    def __init__(
        self,
        options: ParseOptions | None = None,
        *,
        request: Mapping[str, Any] | None = None,
        ids: IdFactory | None = None,
        model: str = "gpt-oss",
        created_at: float | None = None,
        seal: Callable[[str], str] | None = None,
        **keywords: Unpack[ParseKeywords],
    ) -> None:
        opts = bridge_options(options, keywords)
        # The request's tools, read once (a ToolSet, as the gateway's plan has it, is taken
        # as it is): its namespaces and custom tools, and the calls' checks unless tools
        # were given apart from the request.
        given = keywords.get("tools")
        listed = (request or {}).get("tools")
        toolset = ToolSet.read(
            given if isinstance(given, ToolSet) else listed if isinstance(listed, list) else None
        )
        if isinstance(given, ToolSet) or opts.tools is None:
            # Without callable tools no call is checked (an empty list would flag every
            # call); with them, calls into functions and the declared namespaces are.
            opts = replace(opts, tools=toolset if toolset else None)
        super().__init__(opts, toolset.namespaces)
        self._custom = toolset.custom
        self._seal = seal
        self._ids = ids or random_id
        self._request = request
        self._model = model
        self._created_at = created_at if created_at is not None else time.time()
        self._response_id = self._ids("resp")
        self._items: list[dict[str, Any]] = []
        self._sequence = 0
        self._opened = False

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        # Items keep growing while they stream: an event carries a snapshot of each (a
        # response object is built fresh, its items copied, by response_object).
        for key in ("item", "part"):
            if key in fields:
                fields[key] = _snapshot(fields[key])
        event = {"type": f"response.{kind}", "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event

    def response(self) -> dict[str, Any]:
        """The response object as it stands (final after :meth:`close`)."""
        return response_object(
            self._response_id,
            self._items,
            self.parse_diagnostics() if self.finish is not None else (),
            finish=self.finish,
            request=self._request,
            model=self._model,
            created_at=self._created_at,
        )

    def _on_open(self) -> list[dict[str, Any]]:
        if self._opened:
            return []
        self._opened = True
        response = self.response()
        return [
            self._event("created", response=response),
            self._event("in_progress", response=response),
        ]

    def _where(self) -> dict[str, Any]:
        return {"item_id": self._items[-1]["id"], "output_index": len(self._items) - 1}

    def _on_header(self, event: HeaderComplete) -> list[dict[str, Any]]:
        assert self.kind is not None
        item = new_item(
            self.kind,
            self._ids,
            recipient=event.recipient,
            channel=event.channel,
            custom=self._custom,
        )
        self._items.append(item)
        out = [self._event("output_item.added", output_index=len(self._items) - 1, item=item)]
        if self.kind != FUNCTION_CALL:
            part = item["content"][0]
            out.append(
                self._event("content_part.added", **self._where(), content_index=0, part=part)
            )
        return out

    def _on_delta(self, text: str) -> list[dict[str, Any]]:
        item = self._items[-1]
        if item["type"] == "custom_tool_call":
            item["input"] += text
            return [self._event("custom_tool_call_input.delta", **self._where(), delta=text)]
        if self.kind == FUNCTION_CALL:
            item["arguments"] += text
            return [self._event("function_call_arguments.delta", **self._where(), delta=text)]
        item["content"][0]["text"] += text
        where = {**self._where(), "content_index": 0, "delta": text}
        if self.kind == REASONING:
            return [self._event("reasoning_text.delta", **where)]
        return [self._event("output_text.delta", **where, logprobs=[])]

    def _on_message_end(self, message: Message, cut: bool) -> list[dict[str, Any]]:
        item = self._items[-1]
        if "status" in item:  # a custom_tool_call has none (the SDK's type)
            item["status"] = "incomplete" if cut else "completed"
        where = self._where()
        if item["type"] == "custom_tool_call":
            out = [self._event("custom_tool_call_input.done", **where, input=item["input"])]
        elif self.kind == FUNCTION_CALL:
            out = [
                self._event("function_call_arguments.done", **where, arguments=item["arguments"])
            ]
        else:
            part = item["content"][0]
            if self.kind == REASONING and self._seal is not None:
                # The chain of thought, sealed for the client to send back (stateless).
                item["encrypted_content"] = self._seal(part["text"])
            if self.kind == REASONING:
                done = self._event(
                    "reasoning_text.done", **where, content_index=0, text=part["text"]
                )
            else:
                done = self._event(
                    "output_text.done", **where, content_index=0, text=part["text"], logprobs=[]
                )
            out = [done, self._event("content_part.done", **where, content_index=0, part=part)]
        out.append(self._event("output_item.done", output_index=where["output_index"], item=item))
        return out

    def close(self, *, truncated: bool = False) -> list[dict[str, Any]]:
        """End of output: the remaining events, then ``response.completed`` (or
        ``response.incomplete`` / ``response.failed``).

        ``truncated=True`` says generation stopped at the token limit (``max_output_tokens``),
        not at a stop token: the response is ``incomplete`` and an item the output ends
        inside (a call included) is ``incomplete`` too.
        """
        if self.closed:
            return []
        out = self._end(truncated)
        response = self.response()
        kind = {"failed": "failed", "incomplete": "incomplete"}.get(response["status"], "completed")
        return [*out, self._event(kind, response=response)]


def to_responses(
    source: str | Sequence[int],
    options: ParseOptions | None = None,
    *,
    request: Mapping[str, Any] | None = None,
    ids: IdFactory | None = None,
    model: str = "gpt-oss",
    created_at: float | None = None,
    truncated: bool = False,
    **keywords: Unpack[ParseKeywords],
) -> dict[str, Any]:
    """The Responses API response object for a completion (text or ids after
    ``<|start|>assistant``): the object :class:`ResponsesStream`'s last event carries for the
    same output (it is that stream fed everything and closed), with the same arguments and
    defaults.

    Each assistant message becomes an output item, in order: analysis (and built-in tool
    calls) a ``reasoning`` item with its text, a ``functions.*`` call a ``function_call``
    with ``call_id``, ``name`` and ``arguments`` verbatim, a final answer or preamble a
    ``message`` with one ``output_text`` (``phase`` ``final_answer`` or ``commentary``). The
    turn ends at a message the model should not write (a tool's result). A turn that stopped
    at the token limit (``truncated``) is ``incomplete``, its last item too; one whose output
    just ends inside a message (its stop token dropped or stripped) is ``completed``, and a
    call whose ``<|call|>`` was dropped is a completed call, as in
    :func:`~.chat.to_chat_completion`.

    The parse is lenient unless ``lenient=False``: the usual model deviations are repaired, and
    every diagnostic is listed under ``diagnostics``; an error that cannot be repaired makes
    the status ``failed`` (with every item read). ``tools`` (default: the ``request``'s)
    checks each call's arguments. Never raises on bad output. The parse options are
    :class:`ResponsesStream`'s; ``stripped_dialect`` is as for :func:`~harmony_grammar.parse`
    (token ids are authoritative unless it is True).
    """
    stream = ResponsesStream(
        bridge_options(options, keywords),
        request=request,
        ids=ids,
        model=model,
        created_at=created_at,
    )
    feed_whole(stream, source, "to_responses()")
    stream.close(truncated=truncated)
    return stream.response()
