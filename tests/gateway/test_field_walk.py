"""Every request field the gateway reads, walked with what a careless or hostile client sends.

No field of a request may make a 5xx (issue 40, item 7). The fields are not a hand list:
each route's planner (:func:`plan_chat`, :func:`plan_responses`, :func:`plan_completion`)
reads a rich valid body through a recorder that notes every key it asks for, present or
not; the ``openai`` SDK's request types add every top-level field the API has. Each field
is then set to every value of a table (each wrong JSON type, out-of-range numbers, hostile
strings: digits ``int()`` refuses, NUL, CR/LF, non-Latin-1, 70,000 characters...), and each
mapping's keys are renamed to hostile keys; a Hypothesis test draws any JSON value for any
field besides. Every answer must be a 2xx or an OpenAI error object; a 400 names the field
(its ``param`` is the field or a path inside it); no response header carries anything a
header cannot hold.

The app runs in-process (httpx2's ASGI transport over the embedded ``prior`` backend), so
thousands of requests take seconds; the header check below is what uvicorn's h11 would
enforce on the wire (a CR/LF there dropped the connection, a non-Latin-1 value was a 500).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

pytest.importorskip("starlette")
httpx2 = pytest.importorskip("httpx2")
openai_types = pytest.importorskip("openai.types")

import anyio  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from openai.types import completion_create_params  # noqa: E402
from openai.types.chat import completion_create_params as chat_create_params  # noqa: E402
from openai.types.responses import response_create_params  # noqa: E402

from harmony_grammar.gateway import EmbeddedBackend, GatewayConfig  # noqa: E402
from harmony_grammar.gateway.app import create_app  # noqa: E402
from harmony_grammar.gateway.chat.protocol import plan_chat  # noqa: E402
from harmony_grammar.gateway.completions.protocol import plan_completion  # noqa: E402
from harmony_grammar.gateway.errors import GatewayError  # noqa: E402
from harmony_grammar.gateway.plan import Limits  # noqa: E402
from harmony_grammar.gateway.responses.protocol import plan_responses  # noqa: E402
from harmony_grammar.gateway.unsupported import UNHONOURED  # noqa: E402

Path = tuple[str | int, ...]
LIMITS = Limits(default_max_tokens=2, max_tokens=64)

_PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 1}},
    "required": ["city"],
}
_CALL = {"name": "get_weather", "arguments": '{"city": "x"}'}
#: A Chat Completions body with every kind of message and most sampling fields set.
CHAT: dict[str, Any] = {
    "model": "prior",
    "messages": [
        {"role": "system", "content": "s"},
        {"role": "developer", "content": "d"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "think",
            "tool_calls": [{"id": "c1", "type": "function", "function": _CALL}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "w", "parameters": _PARAMETERS},
        }
    ],
    "tool_choice": "auto",
    "max_tokens": 2,
    "temperature": 0.5,
    "top_p": 0.9,
    "seed": 1,
    "stop": ["zz"],
    "stream": False,
    "stream_options": {"include_usage": True},
    "metadata": {"k": "v"},
    "user": "u",
    "parallel_tool_calls": True,
    "reasoning_effort": "low",
    "logit_bias": {"5": 1},
    "presence_penalty": 0.5,
    "frequency_penalty": 0.5,
    "logprobs": True,
    "top_logprobs": 2,
    "response_format": {"type": "text"},
    "n": 1,
    "store": False,
}
#: A Responses body: message, call and output items, a function and a hosted tool.
RESPONSES: dict[str, Any] = {
    "model": "prior",
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "call_id": "c1", **_CALL},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ],
    "instructions": "be brief",
    "tools": [
        {"type": "function", "name": "get_weather", "parameters": _PARAMETERS},
        {"type": "web_search"},
    ],
    "tool_choice": "auto",
    "max_output_tokens": 2,
    "temperature": 0.5,
    "top_p": 0.9,
    "metadata": {"k": "v"},
    "user": "u",
    "reasoning": {"effort": "low"},
    "text": {"format": {"type": "text"}},
    "include": ["message.output_text.logprobs"],
    "top_logprobs": 2,
    "store": False,
    "parallel_tool_calls": True,
}
#: A vLLM-style ``/v1/completions`` body.
COMPLETION: dict[str, Any] = {
    "model": "prior",
    "prompt": "hi",
    "max_tokens": 2,
    "temperature": 0.5,
    "seed": 1,
    "stop_token_ids": [200012],
    "stream": False,
    "stream_options": {"include_usage": True},
    "logprobs": 1,
    "structured_outputs": {"grammar": "%llguidance {}\nstart: /[a-z]+/\n"},
}

#: Strings a client may send: empty, digits to ``isdigit()`` that ``int()`` refuses or reads
#: otherwise, NUL, CR/LF (header injection), non-Latin-1, bidi control, terminal escapes,
#: 70,000 characters, control-token spellings, numbers as text.
HOSTILE_STRINGS = (
    "",
    "²",
    "٣",
    "9" * 5000,
    "\x00",
    "a\r\nX-Evil: 1",
    "é中😀",
    "\u202e",
    "x" * 70_000,
    "<|end|>",
    "\x1b]52;c;aGk=\x07",
    "1e300",
    "-1",
)
#: Every JSON type, and numbers out of any range a field has.
VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**64,
    -(2**64),
    1e308,
    [],
    ["x"],
    [{}],
    {},
    {"a": 1},
    *HOSTILE_STRINGS,
)
#: Keys a mapping's key is renamed to (``logit_bias`` and ``metadata`` keys are data).
HOSTILE_KEYS = ("²", "٣", "9" * 5000, "\x00\r\n", "-1", "x" * 70_000)


# -- discovering the fields ---------------------------------------------------------------


class _Recorder(dict[str, Any]):
    """A JSON object that notes the path of every key a reader asks for (present or not)."""

    def __init__(self, value: Mapping[str, Any], path: Path, seen: set[Path]) -> None:
        super().__init__({k: _recorded(v, (*path, k), seen) for k, v in value.items()})
        self._path = path
        self._seen = seen

    def get(self, key: Any, default: Any = None) -> Any:
        self._note(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def __contains__(self, key: Any) -> bool:
        self._note(key)
        return super().__contains__(key)

    def _note(self, key: Any) -> None:
        if isinstance(key, str):
            self._seen.add((*self._path, key))


def _recorded(value: Any, path: Path, seen: set[Path]) -> Any:
    if isinstance(value, Mapping):
        return _Recorder(value, path, seen)
    if isinstance(value, list):
        return [_recorded(v, (*path, i), seen) for i, v in enumerate(value)]
    return value


def _paths(value: Any, path: Path = ()) -> Iterator[Path]:
    """Every path inside ``value`` (its fields, their items, and so on down)."""
    if path:
        yield path
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _reachable(body: Any, path: Path) -> bool:
    """Whether ``path``'s parent exists in ``body`` as an object (so the field can be set)."""
    node = body
    for key in path[:-1]:
        present = (isinstance(node, Mapping) and isinstance(key, str) and key in node) or (
            isinstance(node, list) and isinstance(key, int) and key < len(node)
        )
        if not present:
            return False
        node = node[key]
    return isinstance(node, Mapping)


def _sdk_fields(params: Any) -> set[str]:
    """The top-level fields of an ``openai`` SDK request type (its TypedDicts' keys)."""
    names: set[str] = set()
    for kind in params.__args__ if hasattr(params, "__args__") else (params,):
        names |= set(getattr(kind, "__annotations__", {}))
    return names


def _fields(body: dict[str, Any], planner: Any, sdk: Any) -> list[Path]:
    seen: set[Path] = set()
    try:
        planner(_recorded(body, (), seen))
    except GatewayError as exc:  # pragma: no cover - the valid body is valid
        raise AssertionError(f"the valid body is refused: {exc}") from None
    found = set(_paths(body)) | {p for p in seen if _reachable(body, p)}
    found |= {(name,) for name in _sdk_fields(sdk)}
    return sorted(found, key=lambda p: (len(p), [str(k) for k in p]))


ROUTES: dict[str, tuple[dict[str, Any], Any, Any]] = {
    "/v1/chat/completions/render": (
        CHAT,
        lambda body: plan_chat(body, model="prior", limits=LIMITS),
        chat_create_params.CompletionCreateParams,
    ),
    "/v1/responses/render": (
        RESPONSES,
        lambda body: plan_responses(body, model="prior", limits=LIMITS),
        response_create_params.ResponseCreateParams,
    ),
    "/v1/completions": (
        COMPLETION,
        lambda body: plan_completion(body, model="prior", limits=LIMITS),
        completion_create_params.CompletionCreateParams,
    ),
}
#: The generation routes plan as their render twins do; their bodies leave out what the
#: embedded backend refuses (a 400 naming that field would hide every other answer).
GENERATION = {"/v1/chat/completions": "chat", "/v1/responses": "responses"}


def _body(route: str) -> dict[str, Any]:
    api = GENERATION.get(route)
    if api is None:
        return ROUTES[route][0]
    base = CHAT if api == "chat" else RESPONSES
    body = {k: v for k, v in base.items() if k not in UNHONOURED[api] or k == "logprobs"}
    body.pop("include", None)
    return {**body, "logprobs": True} if api == "chat" else body


def _route_fields(route: str) -> list[Path]:
    render = route if route in ROUTES else route + "/render"
    _, planner, sdk = ROUTES[render]
    body = _body(route)
    return [p for p in _fields(ROUTES[render][0], planner, sdk) if _reachable(body, p)]


# -- the requests ---------------------------------------------------------------------------


def _set(body: Any, path: Path, value: Any) -> Any:
    out = copy.deepcopy(body)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _renamed(body: Any, path: Path, key: str) -> Any:
    out = copy.deepcopy(body)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[key] = node.pop(path[-1])
    return out


def _head(path: str | Path) -> str:
    """The top-level field of a ``param`` (``messages[4].tool_call_id``) or a path."""
    if isinstance(path, tuple):
        return str(path[0])
    return re.split(r"[.\[]", path, maxsplit=1)[0]


#: Fields other fields need: without ``logprobs: true``, Chat's ``top_logprobs`` is the
#: field in the wrong (as OpenAI answers), and the error names it.
_NEEDED_BY = {"logprobs": ("top_logprobs",)}

#: A header value as HTTP carries it: visible Latin-1 and spaces, no CR, LF or NUL.
_HEADER_VALUE = re.compile(r"[\x20-\x7e\x80-\xff\t]*")


def _check(answer: Any, path: Path, what: str) -> None:
    where = f"{'.'.join(map(str, path))} = {what}"
    assert answer.status_code < 500, f"{where}: {answer.status_code} {answer.text[:300]}"
    for name, value in answer.headers.raw:
        shown = value[:80]
        assert _HEADER_VALUE.fullmatch(value.decode("latin-1")), f"{where}: {name!r}: {shown!r}"
        assert len(value) <= 8192, f"{where}: header {name!r} is {len(value)} bytes"
    if answer.status_code >= 400:
        error = answer.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}, where
        if answer.status_code == 400:
            param = error["param"]
            assert param is not None, f"{where}: a 400 naming no field: {error['message']}"
            named = {_head(path), *_NEEDED_BY.get(_head(path), ())}
            assert _head(param) in named, f"{where}: names {param!r}: {error['message']}"


def _all_pass(cases: Iterator[tuple[Any, Path, str]]) -> None:
    """:func:`_check` on every case; the failures are reported together (at most 20 shown)."""
    failures = []
    for answer, path, what in cases:
        try:
            _check(answer, path, what)
        except AssertionError as exc:
            failures.append(str(exc).splitlines()[0])
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:20])


class _Client:
    """The app in-process: requests through httpx2's ASGI transport, on one event loop."""

    def __init__(self) -> None:
        config = GatewayConfig(model="prior", limits=LIMITS)
        self.backend = EmbeddedBackend("prior", workers=1)
        self.app = create_app(self.backend, config)

    async def _post(self, route: str, body: Any) -> Any:
        # A crash comes back as the 500 a client would get, and is counted with the rest.
        transport = httpx2.ASGITransport(app=self.app, raise_app_exceptions=False)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return await c.post(route, json=body, timeout=60)

    def post(self, route: str, body: Any) -> Any:
        return anyio.run(self._post, route, body)

    def close(self) -> None:
        anyio.run(self.backend.aclose)


@pytest.fixture(scope="module")
def client() -> Iterator[_Client]:
    made = _Client()
    yield made
    made.close()


ALL_ROUTES = [*ROUTES, *GENERATION]


def test_the_walk_finds_the_fields_each_reader_reads() -> None:
    """The recorder sees the readers' fields, nested ones and absent ones included: were it
    blind, the walk below would test only the valid bodies' own paths."""
    chat = set(_route_fields("/v1/chat/completions/render"))
    assert {("logit_bias",), ("messages", 4, "tool_call_id"), ("top_p",)} <= chat
    assert ("messages", 3, "tool_calls", 0, "function", "arguments") in chat
    assert ("max_completion_tokens",) in chat  # read though the body leaves it out
    assert ("web_search_options",) in chat  # the SDK's field, read or not
    responses = set(_route_fields("/v1/responses/render"))
    assert {("input", 2, "call_id"), ("tools", 1, "type"), ("previous_response_id",)} <= responses
    completions = set(_route_fields("/v1/completions"))
    assert {("prompt",), ("structured_outputs", "grammar"), ("suffix",)} <= completions


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_the_valid_bodies_are_served(client: _Client, route: str) -> None:
    answer = client.post(route, _body(route))
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_every_field_with_every_wrong_value_is_a_400_naming_it_never_a_5xx(
    client: _Client, route: str
) -> None:
    body = _body(route)
    _all_pass(
        (client.post(route, _set(body, path, value)), path, repr(value)[:40])
        for path in _route_fields(route)
        for value in VALUES
    )


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_every_key_renamed_to_a_hostile_key_is_never_a_5xx(client: _Client, route: str) -> None:
    body = _body(route)
    _all_pass(
        (client.post(route, _renamed(body, path, key)), path, f"key {key[:20]!r}")
        for path in _paths(body)
        if isinstance(path[-1], str)
        for key in HOSTILE_KEYS
    )


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(HOSTILE_STRINGS),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(
    max_examples=3 * settings.default.max_examples,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), route=st.sampled_from(ALL_ROUTES), value=_JSON)
def test_any_value_in_any_field_is_never_a_5xx(
    client: _Client, data: st.DataObject, route: str, value: Any
) -> None:
    path = data.draw(st.sampled_from(_route_fields(route)), label="field")
    _check(client.post(route, _set(_body(route), path, value)), path, repr(value)[:40])
