"""What a user of an engine sees: a Chat Completions reading of model output, and its score.

An engine never hands its user Harmony messages: it hands a reply, ``content``, ``reasoning``
and ``tool_calls`` (each a function's ``name`` and ``arguments``), and the calls are either
dispatched or not. This module is how the engine matrix judges that reply.

* :func:`intended_view`: the reply the intended messages give, under the mapping
  docs/rendering.md states (and the gateway implements): final messages and commentary
  without a recipient are ``content``; analysis and messages to any recipient other than a
  ``functions.*`` one are ``reasoning``; each ``functions.*`` call is a tool call. Non-empty
  texts are joined by a newline. With ``nulls_unknown`` (the real-output corpus, where a
  null field means "cannot be told") a part any of whose messages has a null channel or
  content is not judged.
* :func:`view_problems`: what differs between an intended reply and an engine's, part by
  part (:data:`PARTS`). Texts are compared with whitespace runs collapsed (engines join and
  strip differently; a lost word still differs); arguments as JSON values where both parse.
* :func:`generations`: the model output a case holds, cut as engines see it. A generation
  ends at the first stop id (``<|return|>``, ``<|call|>``, ``<|endoftext|>``, the ids gpt-oss
  stops on); what follows is the next generation (after a tool's result, the model writes
  again after ``<|start|>assistant``, which the prompt holds, so a generation opening with it
  has it cut). A generation that opens with another author is not model output.
* :func:`reading_adapter`: a conformance adapter (a ``view`` request in, ``{"view": ...}``
  out) built from a reader of one generation; the readings of the generations are merged
  in order. A streaming reader is fed each generation in deltas, once per feed of
  :data:`STREAM_FEEDS` it names (:func:`stream_feed`), and judged on every feed.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from ..base.errors import HarmonyGrammarError
from ..format.harmony_ids import encode_harmony
from ..format.tokens import ControlToken
from ..format.vocabulary import load_encoding
from .cases import Case
from .interface import Adapter, Json, Unsupported

__all__ = [
    "ASSISTANT_ID",
    "ENDOFTEXT_ID",
    "PARTS",
    "STOP_IDS",
    "STREAM_FEEDS",
    "Generation",
    "Refused",
    "declared_tools",
    "generations",
    "intended_view",
    "merge_views",
    "reading_adapter",
    "stream_feed",
    "view_case",
    "view_problem",
    "view_problems",
    "wild_case",
]

#: The ids gpt-oss stops on (its generation config's ``eos_token_id``): ``<|return|>``,
#: ``<|call|>`` and ``<|endoftext|>``.
STOP_IDS = frozenset({ControlToken.RETURN.id, ControlToken.CALL.id, 199999})
#: ``<|endoftext|>``, the third id gpt-oss stops on.
ENDOFTEXT_ID = 199999
#: ``assistant`` as one ordinary id (after ``<|start|>`` in a prompt).
ASSISTANT_ID = 173781
#: The parts of a reply that are judged, in the order they are reported.
PARTS = ("content", "reasoning", "tool_calls", "dispatched")
#: How a streamed generation is fed, by name: the number of deltas it is cut into at id
#: boundaries (0: one delta per id, as every engine here streams a sampled id; 2 and 3:
#: several ids a delta, as a stream interval, speculative decoding or a relay deliver them).
#: A text engine gets each delta's text, a character split across deltas held back to the
#: next, as a detokenizer holds it.
STREAM_FEEDS = {"each id": 0, "2 deltas": 2, "3 deltas": 3}
_FUNCTIONS = "functions."


class Refused(HarmonyGrammarError):
    """An engine answered with an error instead of a reply (a 500, an exception)."""


#: One generation: the ids the engine produced, up to and including the stop id.
Generation = list[int]


def _joined(texts: Iterable[str]) -> str | None:
    kept = [text for text in texts if text]
    return "\n".join(kept) if kept else None


def intended_view(messages: Sequence[Mapping[str, Any]], *, nulls_unknown: bool = False) -> Json:
    """The reply ``messages`` give (see the module docstring); ``unknown`` lists the parts
    that cannot be told."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[Json] = []
    unknown: set[str] = set()
    for message in messages:
        recipient = message.get("recipient")
        text = message.get("content")
        if isinstance(recipient, str) and recipient.startswith(_FUNCTIONS):
            calls.append({"name": recipient[len(_FUNCTIONS) :], "arguments": text})
            continue
        analysis = recipient is not None or message.get("channel") == "analysis"
        part, texts = ("reasoning", reasoning) if analysis else ("content", content)
        if nulls_unknown and (text is None or message.get("channel") is None):
            unknown.add(part)
        elif text:
            texts.append(text)
    return {
        "content": _joined(content),
        "reasoning": _joined(reasoning),
        "tool_calls": calls,
        "unknown": sorted(unknown),
    }


def merge_views(views: Iterable[Mapping[str, Any]]) -> Json:
    """One reply from the replies to consecutive generations, in order."""
    views = list(views)
    return {
        "content": _joined(v.get("content") or "" for v in views),
        "reasoning": _joined(v.get("reasoning") or "" for v in views),
        "tool_calls": [call for v in views for call in v.get("tool_calls") or []],
    }


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _arguments(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return ("json", json.loads(value))
    except ValueError:
        return ("text", _text(value))


def _show(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _names(calls: Sequence[Mapping[str, Any]]) -> str:
    return "[" + ", ".join(str(call.get("name")) for call in calls) + "]"


def _calls_problem(want: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]]) -> str:
    if len(want) != len(got):
        return f"expected {len(want)} calls {_names(want)}, got {len(got)} {_names(got)}"
    for index, (intended, made) in enumerate(zip(want, got, strict=True)):
        if intended.get("name") != made.get("name"):
            return f"call {index}: expected {intended.get('name')!r}, got {made.get('name')!r}"
        wanted = intended.get("arguments")
        if wanted is not None and _arguments(wanted) != _arguments(made.get("arguments")):
            return (
                f"call {index} arguments: expected {_show(wanted)}, "
                f"got {_show(made.get('arguments'))}"
            )
    return ""


def view_problems(want: Mapping[str, Any], got: Mapping[str, Any]) -> dict[str, str]:
    """What differs, by part (:data:`PARTS`); an empty mapping when the replies agree.

    ``want`` is an :func:`intended_view` (its ``unknown`` parts are not judged), ``got`` an
    engine's reply. ``dispatched``: the reply makes a call exactly when one was meant.
    """
    problems: dict[str, str] = {}
    unknown = set(want.get("unknown", ()))
    for part in ("content", "reasoning"):
        if part not in unknown and _text(want.get(part)) != _text(got.get(part)):
            problems[part] = f"expected {_show(want.get(part))}, got {_show(got.get(part))}"
    want_calls = list(want.get("tool_calls") or [])
    got_calls = list(got.get("tool_calls") or [])
    problem = _calls_problem(want_calls, got_calls)
    if problem:
        problems["tool_calls"] = problem
    if bool(want_calls) != bool(got_calls):
        problems["dispatched"] = (
            "a call was meant and none was dispatched"
            if want_calls
            else f"dispatched {_names(got_calls)} where no call was meant"
        )
    return problems


def declared_tools(
    given: Sequence[Mapping[str, Any]] | None, messages: Sequence[Mapping[str, Any]]
) -> list[Json]:
    """The functions the host declared: the case's own, else one per function the intended
    messages call (an engine reads a call only to a declared function; any arguments)."""
    if given:
        return [dict(tool) for tool in given]
    names: list[str] = []
    for message in messages:
        recipient = message.get("recipient")
        if isinstance(recipient, str) and recipient.startswith(_FUNCTIONS):
            name = recipient[len(_FUNCTIONS) :]
            if name and name not in names:
                names.append(name)
    return [{"name": name, "parameters": {"type": "object"}} for name in names]


def generations(ids: Sequence[int], mode: str, role: str = "assistant") -> list[Generation]:
    """The generations ``ids`` hold, as the engine produced them (see the module docstring).

    Raises :class:`~.interface.Unsupported` for what is not model output: a prompt, a
    completion by another author than the assistant, a conversation that does not open with
    ``<|start|>assistant``, a generation opened by another author.
    """
    if mode == "prompt":
        raise Unsupported("a prompt is not model output")
    if mode == "completion" and role != "assistant":
        raise Unsupported(f"a completion by {role} is not model output")
    cut: list[Generation] = []
    current: Generation = []
    for token in ids:
        current.append(token)
        if token in STOP_IDS:
            cut.append(current)
            current = []
    if current:
        cut.append(current)
    start = ControlToken.START.id
    out: list[Generation] = []
    for index, generation in enumerate(cut):
        if generation[:2] == [start, ASSISTANT_ID]:
            generation = generation[2:]
        elif generation[:1] == [start]:
            raise Unsupported("a generation opens with <|start|> and another author")
        elif mode == "conversation" and index == 0:
            raise Unsupported("the conversation does not open with <|start|>assistant")
        out.append(generation)
    return out


def _ids(request: Mapping[str, Any]) -> list[int]:
    if "tokens" in request:
        return [int(token) for token in request["tokens"]]
    return encode_harmony(request["text"])


def stream_feed(ids: Sequence[int], feed: str) -> list[list[int]]:
    """``ids`` cut into the deltas of the feed named ``feed`` (:data:`STREAM_FEEDS`); the
    cuts are at evenly spaced id boundaries, so every run cuts a generation the same way."""
    pieces = STREAM_FEEDS[feed]
    if pieces == 0:
        return [[token] for token in ids]
    cuts = sorted({round(len(ids) * k / pieces) for k in range(1, pieces)} - {0, len(ids)})
    bounds = [0, *cuts, len(ids)]
    return [list(ids[a:b]) for a, b in pairwise(bounds) if b > a]


def _delta_texts(encoding: Any, deltas: Sequence[Sequence[int]]) -> list[str]:
    """Each delta's text as an incremental detokenizer gives it (bytes of a character split
    across deltas wait for the rest; an id outside the vocabulary is Unsupported)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        texts = [decoder.decode(encoding.decode_bytes(list(delta))) for delta in deltas]
    except KeyError:
        raise Unsupported("an id outside the model's vocabulary") from None
    if texts:
        texts[-1] += decoder.decode(b"", final=True)
    return texts


def reading_adapter(
    read: Callable[[Json], Json],
    *,
    trimmed: Collection[int] = (),
    feeds: Sequence[str] = (),
) -> Adapter:
    """An adapter answering ``view`` requests by ``read``-ing each generation.

    ``read`` gets ``{"tokens", "text", "stop", "tools", "strict", "from_text"}`` for one
    generation (its ids, and their text as a detokenizer that keeps special tokens gives it;
    without its stop id when that is one of ``trimmed``, the stop ids the engine cuts from
    what it reads, the id cut then being ``stop``;
    ``from_text`` when the case holds only text, its ids being that text encoded) and returns
    a reply
    (``content``, ``reasoning``, ``tool_calls``), raises :class:`Refused` for an error
    answered instead, or :class:`~.interface.Unsupported`. Other requests are unsupported.

    With ``feeds`` (names of :data:`STREAM_FEEDS`) the reader streams: it is called once per
    feed and generation, the piece also holding ``deltas`` (``[{"tokens", "text"}]``, the
    generation cut as the feed cuts it), and the answer holds every feed's reply under
    ``feeds`` (``{name: {"view": ...}}`` or ``{name: {"view": None, "refused": why}}``), the
    first feed's also as the answer's own ``view``.
    """
    encoding = load_encoding()

    def one_feed(request: Json, feed: str | None) -> Json:
        replies = []
        for generation in generations(
            _ids(request), request["mode"], request.get("role", "assistant")
        ):
            cut = bool(generation[-1:]) and generation[-1] in trimmed
            ids = generation[:-1] if cut else generation
            (text,) = _delta_texts(encoding, [ids])
            piece = {
                "tokens": ids,
                "stop": generation[-1] if cut else None,
                "text": text,
                "tools": request.get("tools") or [],
                "strict": request.get("strict", False),
                "from_text": "tokens" not in request,
            }
            if feed is not None:
                deltas = stream_feed(ids, feed)
                texts = _delta_texts(encoding, deltas)
                piece["deltas"] = [
                    {"tokens": d, "text": t} for d, t in zip(deltas, texts, strict=True)
                ]
            try:
                replies.append(read(piece))
            except Refused as exc:
                return {"view": None, "refused": str(exc)}
        return {"view": merge_views(replies)}

    def adapter(request: Json) -> Json:
        if request.get("kind") != "view":
            raise Unsupported("an engine is judged on its reply only")
        if not feeds:
            return one_feed(request, None)
        answers = {feed: one_feed(request, feed) for feed in feeds}
        return {**answers[feeds[0]], "feeds": answers}

    return adapter


def view_problem(expected: Mapping[str, Any], response: Mapping[str, Any]) -> str | None:
    """Why ``response`` (``{"view": reply}``, or ``{"view": None, "refused": why}``) is not
    the reply the ``messages`` of ``expected`` give, or None when it is.

    The reason opens with the differing parts in brackets (``[content, dispatched]``, or
    ``[refused]``), so a reason cut to length still names them all, then each part's
    difference, ``; ``-joined. A streamed answer (``feeds``) is judged on every feed; the
    first that differs is named after the brackets (``fed 3 deltas:``).
    """
    if "feeds" in response:
        for feed, answer in response["feeds"].items():
            problem = view_problem(expected, answer)
            if problem is not None:
                parts, _, details = problem.partition("] ")
                return f"{parts}] fed {feed}: {details}"
        return None
    if response.get("view") is None:
        return f"[refused] {response.get('refused', 'no reply')}"
    want = intended_view(expected["messages"], nulls_unknown=expected.get("nulls_unknown", False))
    problems = view_problems(want, response["view"])
    if not problems:
        return None
    details = "; ".join(f"{part}: {why}" for part, why in problems.items())
    return f"[{', '.join(problems)}] {details}"


def _reading(data: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]] | None, str]:
    """The messages the model meant (the lenient reading where valid, else the strict one)."""
    for key in ("lenient", "expected"):
        reading = data.get(key)
        if isinstance(reading, Mapping) and reading.get("valid") and "messages" in reading:
            return list(reading["messages"]), ""
    return None, "the case expects an error: no reading to judge a reply by"


def _assistant_tail(
    base: Json, messages: list[Mapping[str, Any]], data: Mapping[str, Any]
) -> tuple[list[Mapping[str, Any]] | None, str]:
    """A conversation's model output: the assistant messages after its prompt.

    A conversation that opens with other authors' messages (the prompt) and then holds only
    the assistant's is judged on those; the prompt's ids are cut from ``base`` where the
    strict reading is valid (then every message opens with ``<|start|>``, so the first
    assistant message opens at the prompt's count of them).
    """
    head = 0
    while head < len(messages) and messages[head].get("role") != "assistant":
        head += 1
    authors = sorted({m["role"] for m in messages[head:] if m.get("role") != "assistant"})
    if head == len(messages):
        return None, "the reading holds no assistant message: no model output"
    if authors:
        return None, f"the reading holds messages by {', '.join(authors)} after the output"
    if head == 0:
        return messages, ""
    strict = data.get("expected")
    if not (isinstance(strict, Mapping) and strict.get("valid")):
        return None, "a prompt before the output, in an input the strict reading rejects"
    ids = _ids(base)
    starts = [at for at, token in enumerate(ids) if token == ControlToken.START.id]
    if len(starts) <= head:
        return None, "a prompt before the output whose messages cannot be cut"
    base.pop("text", None)
    base["tokens"] = ids[starts[head] :]
    return messages[head:], ""


def view_case(case: Case) -> Case:
    """The case as a ``view`` case: its input, the tools declared and the reading to judge
    a reply by; ``unjudged`` (the reason) where it has none or is not model output."""
    data = case.data
    base: Json = {"description": data.get("description", ""), "mode": data.get("mode")}
    for key in ("text", "tokens", "role"):
        if key in data:
            base[key] = data[key]
    if case.is_render:
        return Case(case.topic, case.id, {**base, "unjudged": "a rendering case"})
    messages, why = _reading(data)
    if messages is None:
        return Case(case.topic, case.id, {**base, "unjudged": why})
    if data.get("mode") == "conversation":
        messages, why = _assistant_tail(base, messages, data)
        if messages is None:
            return Case(case.topic, case.id, {**base, "unjudged": why})
    base["tools"] = declared_tools(data.get("tools"), messages)
    return Case(case.topic, case.id, {**base, "view": messages})


def wild_case(record: Mapping[str, Any], topic: str = "wild") -> Case:
    """A real-output corpus record (``id``, ``mode``, ``text``, ``intended``) as a ``view``
    case of ``topic``; null fields of ``intended`` mean "cannot be told"."""
    intended = list(record["intended"])
    data: Json = {
        "description": record.get("note") or record.get("engine") or "",
        "mode": record["mode"],
        "text": record["text"],
        "tools": declared_tools(None, intended),
        "view": intended,
        "nulls_unknown": True,
    }
    return Case(topic, str(record["id"]), data)
