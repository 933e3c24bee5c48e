"""The reasoning budget and formatted answers: a forced call or answer starts in time.

Where ``tool_choice`` forces a call or ``response_format`` is set and the request gives its
token limit, the turn grammar bounds the analysis with llguidance's own ``max_tokens`` on the
analysis lexeme (``REASONING_SHARE`` of the limit by effort, or the ``reasoning_budget``
extension field), so the call or the answer fits; an answer bound to a format has no
preamble, so its content is exactly the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("torch")
openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")
pydantic = pytest.importorskip("pydantic")

import jsonschema  # noqa: E402
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harmony_grammar.bridges.chat import to_chat_completion  # noqa: E402
from harmony_grammar.format.vocabulary import load_encoding  # noqa: E402
from harmony_grammar.gateway.chat.protocol import plan_chat  # noqa: E402
from harmony_grammar.gateway.plan import Limits  # noqa: E402
from harmony_grammar.gateway.planning import reasoning_budget  # noqa: E402
from harmony_grammar.generation.sampling import Sampler  # noqa: E402
from harmony_grammar.generation.turn_grammar import completion_grammar  # noqa: E402

from ..support.serve_peers import deadline, tiny_client  # noqa: E402

BOUNDED = {
    "type": "object",
    "properties": {
        "city": {"enum": ["Paris", "Lyon", "Nice"]},
        "unit": {"enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": BOUNDED}}]
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


class Weather(pydantic.BaseModel):
    city: str
    unit: str


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(600):
        yield


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with tiny_client() as tiny:
        yield tiny


def test_required_call_within_max_tokens_with_the_random_model(client: Any) -> None:
    for seed in range(10):
        answer = client.chat.completions.create(
            model="tiny",
            messages=ASK,
            tools=TOOLS,
            tool_choice="required",
            max_tokens=200,
            temperature=0,
            seed=seed,
        )
        choice = answer.choices[0]
        assert choice.finish_reason == "tool_calls", (seed, choice)
        call = choice.message.tool_calls[0].function
        assert call.name == "get_weather"
        jsonschema.validate(json.loads(call.arguments), BOUNDED)
        assert answer.usage.completion_tokens <= 200


def test_formatted_answers_are_exactly_the_json(client: Any) -> None:
    schema = {**BOUNDED, "title": "Weather"}
    for seed in range(3):
        parsed = client.chat.completions.parse(
            model="tiny",
            messages=ASK,
            response_format=Weather,
            max_tokens=200,
            seed=seed,
            temperature=0,
        )
        choice = parsed.choices[0]
        assert choice.finish_reason == "stop"
        assert isinstance(choice.message.parsed, Weather)
        assert choice.message.content == json.dumps(
            json.loads(choice.message.content), separators=(",", ":")
        )
        response = client.responses.create(
            model="tiny",
            input="weather?",
            max_output_tokens=200,
            extra_body={"seed": seed},
            temperature=0,
            text={"format": {"type": "json_schema", "name": "weather", "schema": schema}},
        )
        assert response.status == "completed"
        jsonschema.validate(json.loads(response.output_text), BOUNDED)
        assert [item.type for item in response.output if item.type == "message"] == ["message"]


# Half the profile's budget: each example samples a whole turn under its grammar.
@settings(max_examples=settings.default.max_examples // 2)
@given(budget=st.integers(0, 40), seed=st.integers(0, 2**32 - 1))
@example(budget=2, seed=5548)  # two drawn tokens whose text re-encodes to three
def test_the_analysis_never_passes_its_budget(budget: int, seed: int) -> None:
    grammar = completion_grammar(TOOLS, tool_choice="required", reasoning_budget=budget)
    sample = Sampler(grammar, max_tokens=400).sample(np.random.default_rng(seed))
    encoding = load_encoding()
    ids = list(sample.ids)
    message, end = (encoding.encode_single_token(t) for t in ("<|message|>", "<|end|>"))
    header = ids[: ids.index(message)]
    # The budget is of the tokens the model draws (what max_tokens counts), so the analysis
    # is measured in the sampled ids: its text re-encoded may take more tokens than were
    # drawn (the sampler may spell "KPSQ" as KP+SQ, where BPE writes it in three).
    body = ids[len(header) + 1 :]
    analysis = body[: body.index(end)] if end in body else body
    if budget == 0:
        assert "analysis" not in encoding.decode(header)
    elif "analysis" in encoding.decode(header):
        assert len(analysis) <= budget
    assert to_chat_completion(ids)["finish_reason"] in ("tool_calls", "length")


def test_the_budget_rule() -> None:
    limits = Limits()
    base = {"messages": ASK, "tools": TOOLS}

    def budget(**fields: Any) -> int | None:
        request = {**base, **fields}
        return reasoning_budget(
            request,
            fields.get("max_tokens", 1024),
            forced=fields.get("tool_choice") in ("required",) or "response_format" in fields,
            limit_given="max_tokens" in fields,
        )

    assert budget(tool_choice="required", max_tokens=200) == 100  # medium: half
    assert budget(tool_choice="required", max_tokens=200, reasoning_effort="low") == 50
    assert budget(tool_choice="required", max_tokens=200, reasoning_effort="high") == 150
    assert budget(tool_choice="required") is None  # no limit given: nothing to fit in
    assert budget(max_tokens=200) is None  # not forced: the model may answer in text
    assert budget(max_tokens=200, reasoning_budget=7) == 7  # explicit wins
    plan = plan_chat(
        {**base, "tool_choice": "required", "max_tokens": 64}, model="m", limits=limits
    )
    assert "analysis_text[max_tokens=32]" in plan.grammar
    with pytest.raises(Exception, match="reasoning_budget"):
        plan_chat({**base, "max_tokens": 10, "reasoning_budget": 11}, model="m", limits=limits)
