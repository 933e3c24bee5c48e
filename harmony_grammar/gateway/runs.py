"""One generation on the wire: engine output in, Chat Completions chunks or Responses events out.

A run wraps the stream bridge of its API (:class:`ChatCompletionStream`,
:class:`ResponsesStream`) and adds what the bridge does not know: token usage, ``stop``
strings, and how an engine fault ends the turn. A whole (non-streamed) answer is the same
run's payloads folded together (:func:`chat_completion` / ``ResponsesRun.response``), so a
streamed and a whole answer to the same output can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import regex  # tiktoken's own dependency, for its pre-tokenizer's pattern

from ..bridges import ChatCompletionStream, ResponsesStream, accumulate
from ..format.bounded_encode import EncodeLimitError
from ..format.harmony_ids import encode_harmony
from ..format.lexer import split_text
from ..format.tokens import CONTROL_SPELLING_RE, CONTROL_SPELLINGS, ControlToken
from ..format.vocabulary import load_encoding
from ..rendering.chat import FUNCTIONS_PREFIX
from .backend import Output
from .errors import UpstreamError
from .logprobs import LogprobTrail
from .planning import Plan
from .reasoning_seal import INCLUDE_KEY, ReasoningSeal

__all__ = ["ChatRun", "ResponsesRun", "StopFilter", "TextCount", "chat_completion"]


class StopFilter:
    """Cuts text at the first of the ``stop`` strings, holding back a possible partial match.

    Text arrives in pieces, each with the log-probability entries of the ids that wrote it
    (none where none were asked for); a piece is held or sent whole, so each text sent goes
    with exactly the entries that spell it. ``feed(text, entries)`` returns what is safe to
    send and its entries; ``stopped`` turns true at a match, and what is sent then ends
    where the stop string begins: the piece it begins inside is sent up to there without
    its entries (they spell the stop string too), and nothing after it is sent at all.
    ``flush()`` returns what was held back (the stream ended without a match).
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = tuple(stops)
        self._hold = max((len(s) for s in stops), default=1) - 1
        self._pieces: list[tuple[str, list[Any]]] = []
        self.stopped = False

    def feed(self, text: str, entries: Sequence[Any] = ()) -> tuple[str, list[Any]]:
        """The part of the text so far that can go out now, and its entries."""
        if self.stopped:
            return "", []
        self._pieces.append((text, list(entries)))
        held = "".join(piece for piece, _ in self._pieces)
        hits = [i for i in (held.find(s) for s in self._stops) if i >= 0]
        if hits:
            self.stopped = True
            return self._take(min(hits), partial=True)
        return self._take(max(len(held) - self._hold, 0), partial=False)

    def _take(self, cut: int, *, partial: bool) -> tuple[str, list[Any]]:
        """The whole pieces before ``cut`` (and, when ``partial``, the text of the piece
        ``cut`` falls inside, without its entries); the rest stays held, or is dropped."""
        text: list[str] = []
        entries: list[Any] = []
        at = 0
        while self._pieces and at + len(self._pieces[0][0]) <= cut:
            piece, scores = self._pieces.pop(0)
            text.append(piece)
            entries.extend(scores)
            at += len(piece)
        if partial:
            if self._pieces and cut > at:
                text.append(self._pieces[0][0][: cut - at])
            self._pieces = []
        return "".join(text), entries

    def flush(self) -> tuple[str, list[Any]]:
        """What was held back, now that no more text comes, and its entries."""
        out = self._take(sum(len(piece) for piece, _ in self._pieces), partial=True)
        return out


class TextCount:
    """A text engine's output counted as the model's ids (control tokens as one id each).

    Incremental and exact: the text before the last whole control token is counted once;
    the text after it (the message being written) is encoded again with each piece, since
    its ids can change as it grows. A control token's spelling split across pieces (``<|mes``
    now, ``sage|>`` next) would count as several ordinary ids for a moment, so its start is
    held back until the next piece (or :meth:`end`) says what it is. :meth:`take` returns
    the text that fits in ``limit`` ids; at exactly ``limit`` more text is still taken while
    the count stays there (the last id's text may come in two pieces), past it the rest is
    cut off (:attr:`full`).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        #: Text past the limit arrived and was cut off: nothing more is taken.
        self.full = False
        self._fixed = 0  # ids of the text before the tail: final
        self._tail = ""  # counted and returned, after the last whole control token
        self._held = ""  # a control token's possible start: neither counted nor returned

    def take(self, text: str) -> str:
        """The part of what arrived (``text`` after any held start) within the limit."""
        if self.full:
            return ""
        current = self._tail + self._held + text
        start = current.rfind("<|")
        if start < 0 or not _control_prefix(current[start:]):
            start = len(current)
        # The last pre-tokenizer match can still grow (" worl" + "d" is one id, not two):
        # it waits too, so a count past the limit is never a word split across pieces.
        segment = 0
        for control, _, _, end in split_text(current[:start]):
            if control is not None:
                segment = end
        matches = regex.findall(load_encoding()._pat_str, current[segment:start])
        if matches:  # (never back into the tail: that text has been returned already)
            start = max(start - len(matches[-1]), len(self._tail))
        return self._count(current[:start], current[start:])

    def end(self) -> str:
        """The text is over: a held start is ordinary text after all; returns what of it fits."""
        if self.full or not self._held:
            return ""
        return self._count(self._tail + self._held, "")

    def _count(self, counted: str, held: str) -> str:
        old = self._tail
        ids = encode_harmony(counted)
        room = self.limit - self._fixed
        if len(ids) > room:
            kept = load_encoding().decode(ids[:room])
            self.count, self.full, self._held = self.limit, True, ""
            return kept[len(old) :] if kept.startswith(old) else ""
        self.count = self._fixed + len(ids)
        cut = 0
        for control, _, _, end in split_text(counted):
            if control is not None:
                cut = end  # a whole control token ends a run of text for the encoder
        if cut:
            self._fixed += len(encode_harmony(counted[:cut]))
        self._tail, self._held = counted[cut:], held
        return counted[len(old) :]


def _control_prefix(text: str) -> bool:
    """Whether ``text`` is a proper start of a control token's spelling."""
    return any(s.startswith(text) and s != text for s in CONTROL_SPELLINGS)


#: A read is fed to the bridge in pieces cut after each control token: the turn may end at
#: any of them (a stop token, or the header of a message the model must not write, HG170),
#: and nothing after the one where it ends may be read.
_CUT_IDS = frozenset(token.id for token in ControlToken)
#: How much of the text fed last a control token's spelling may straddle into the next read.
_CUT_OVERLAP = max(len(token.value) for token in ControlToken) - 1


class _Run:
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


class ChatRun(_Run):
    """Chat Completions chunks for one plan (the ``chat.completion.chunk`` stream)."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan)
        self.bridge = ChatCompletionStream(
            # Every callable, not only plan.tools: a namespace's calls are checked too.
            tools=plan.toolset if plan.toolset else None,
            model=plan.model,
            namespaces=plan.namespaces,
            custom=plan.toolset.custom,
        )
        self.stop = StopFilter(plan.stop) if plan.stop else None

    @property
    def turn_ended(self) -> bool:
        """The bridge's stop (``<|call|>``, ``<|return|>``), or a ``stop`` string matched."""
        return self.bridge.should_stop or (self.stop is not None and self.stop.stopped)

    def feed(self, output: Output) -> list[dict[str, Any]]:
        """The chunks that ``output`` completes (none past ``max_tokens``)."""
        output = self._take(output)
        if not output.ids and not output.text:
            return []
        chunks = self._read(self.bridge, output)
        if self.bridge.kind == "reasoning":
            self.reasoning_tokens += len(output.ids)
        if self.trail is not None:  # each content chunk's entries, before any stop cut
            targets = []
            for chunk in chunks:
                choice = chunk["choices"][0]
                if "content" in choice["delta"]:
                    choice["logprobs"] = {"content": [], "refusal": None}
                    targets.append(choice["logprobs"]["content"])
            self.trail.feed(output.ids, output.logprobs, targets)
        return _named(self._filtered(chunks))

    def close(self, fault: UpstreamError | None = None) -> list[dict[str, Any]]:
        """The last chunks: the bridge's rest, the ``finish_reason`` chunk, usage if asked.

        A turn cut before its stop token (:attr:`truncated`) ends with ``length``, and a call
        it was cut inside is never sent as a call: its partial name and arguments go under
        ``cut_tool_call`` (our addition) so that nothing the model wrote is hidden. A fault
        (the engine died, timed out, sent garbage or ended its stream early) ends the stream
        with an error chunk, ``{"error": {...}}`` as vLLM sends one, after the text read so
        far; the openai SDK raises it. :attr:`fault` is set for a whole answer (an HTTP error).
        """
        rest = self._settle(fault)
        early = self._filtered(self._read(self.bridge, Output(text=rest))) if rest else []
        truncated = fault is not None or self.truncated
        stopped = self.stop is not None and self.stop.stopped
        chunks = self.bridge.close(truncated=truncated)
        finish = chunks.pop()
        chunks = _named(early + self._filtered(chunks))
        if self.stop is not None and not stopped:
            rest, entries = self.stop.flush()
            if rest:
                chunks.append(self._content_chunk(finish, rest, entries))
        if fault is not None:
            chunks.append({"error": fault.body()["error"]})
            return chunks
        if self.stop is not None and self.stop.stopped:
            finish["choices"][0]["finish_reason"] = "stop"
        if self.trail is not None:  # asked for: a list, empty when the turn wrote no text
            finish["choices"][0]["logprobs"] = {"content": [], "refusal": None}
        cut_call = self._cut_call() if truncated else None
        if cut_call is not None:
            finish["cut_tool_call"] = cut_call
        diagnostics = self.bridge.diagnostics
        if diagnostics:
            finish["diagnostics"] = diagnostics
        chunks.append(finish)
        if self.plan.include_usage:
            usage = {**finish, "choices": [], "usage": self.usage()}
            usage.pop("diagnostics", None)
            usage.pop("cut_tool_call", None)
            chunks.append(usage)
        return chunks

    def _cut_call(self) -> dict[str, str] | None:
        """The call the output was cut inside: its name and arguments so far, or None."""
        messages = self.bridge.parser.result().messages
        last = messages[-1] if messages else None
        if last is None or self.bridge.last_cut is not True:
            return None
        recipient = last.recipient or ""
        if not recipient.startswith(FUNCTIONS_PREFIX):
            return None
        return {"name": recipient[len(FUNCTIONS_PREFIX) :], "arguments": last.content}

    def usage(self) -> dict[str, Any]:
        """``usage`` from the token counts."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.prompt_tokens + self.output_tokens,
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }

    def _filtered(self, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.stop is None:
            return chunks
        out = []
        for chunk in chunks:
            choice = chunk["choices"][0]
            delta = choice["delta"]
            if "content" in delta:
                scores = choice.get("logprobs")
                text, entries = self.stop.feed(
                    delta["content"], scores["content"] if scores else ()
                )
                if not text:
                    continue
                delta["content"] = text
                if scores:  # exactly the entries of the text it now carries
                    choice["logprobs"] = {"content": entries, "refusal": None}
            elif self.stop.stopped:
                continue  # nothing after the stop string
            out.append(chunk)
        return out

    def _content_chunk(
        self, template: dict[str, Any], text: str, entries: list[Any]
    ) -> dict[str, Any]:
        scores = None if self.trail is None else {"content": entries, "refusal": None}
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None, "logprobs": scores}
        return {**template, "choices": [choice]}


def _named(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reasoning under both names: ``reasoning`` (vLLM 0.31 on, most gateways) and
    ``reasoning_content`` (older clients, DeepSeek's name), the same text in each."""
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            delta = choice["delta"]
            if "reasoning_content" in delta:
                delta["reasoning"] = delta["reasoning_content"]
    return chunks


def chat_completion(chunks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``chat.completion`` object that a run's chunks add up to: the bridge's one fold
    (:func:`~harmony_grammar.bridges.chat.accumulate`) with the gateway's additions (reasoning
    under both names, ``usage``, ``diagnostics`` and ``cut_tool_call``)."""
    first = chunks[0]
    folded = accumulate(chunks)
    message = folded["message"]
    message["reasoning"] = message["reasoning_content"]
    message["tool_calls"] = message["tool_calls"] or None
    usage = next((chunk["usage"] for chunk in reversed(chunks) if chunk.get("usage")), None)
    extra: dict[str, Any] = {
        key: chunk[key]
        for chunk in chunks
        for key in ("diagnostics", "cut_tool_call")
        if key in chunk
    }
    choice = {"index": 0, "message": message, "finish_reason": folded["finish_reason"]}
    return {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [{**choice, "logprobs": _logprobs(chunks)}],
        "usage": usage,
        **extra,
    }


def _logprobs(chunks: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Choice 0's log-probabilities, the chunks' added up as one ``{"content", "refusal"}``,
    or None when no chunk carried any (none asked for)."""
    content: list[dict[str, Any]] | None = None
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) == 0 and choice.get("logprobs"):
                content = (content or []) + choice["logprobs"]["content"]
    return None if content is None else {"content": content, "refusal": None}


class ResponsesRun(_Run):
    """Responses API events for one plan; :meth:`response` is the whole object.

    With ``seal``, and ``reasoning.encrypted_content`` in the request's ``include``, each
    reasoning item carries its text sealed as ``encrypted_content`` (:mod:`.reasoning_seal`).
    """

    def __init__(self, plan: Plan, seal: ReasoningSeal | None = None) -> None:
        super().__init__(plan)
        include = plan.request.get("include")
        wanted = seal is not None and isinstance(include, list) and INCLUDE_KEY in include
        self.bridge = ResponsesStream(
            request=plan.request,
            tools=plan.toolset,
            model=plan.model,
            seal=seal.seal if wanted and seal else None,
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
