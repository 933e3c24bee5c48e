"""Agent frameworks and probes against a live ``serve``: the OpenAI Agents SDK's tool round
trip (Responses and Chat Completions models) and canitoolcall's live probe.

The embedded gateway runs the torch-free ``prior`` model here: these tests are about what the
clients send and read, and the prior keeps them fast. With a random model, which scenario
calls a tool is chance; what must hold is structural (see test_canitoolcall_probe).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
agents = pytest.importorskip("agents")
openai = pytest.importorskip("openai")

from harmony_grammar.gateway import EmbeddedBackend, GatewayConfig, Limits, serving  # noqa: E402

from ..support.serve_peers import deadline  # noqa: E402

TEST_SECONDS = 300


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    """No test may hang: each gets TEST_SECONDS, then fails."""
    with deadline(TEST_SECONDS):
        yield


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(EmbeddedBackend("prior", workers=4), GatewayConfig(model="prior")) as base:
        yield base


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_agents_sdk_tool_round_trip(url: str, api: str) -> None:
    from agents import (
        Agent,
        AgentHooks,
        ModelSettings,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)  # the SDK would send traces to OpenAI: nothing leaves the machine
    calls: list[str] = []

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return json.dumps({"city": city, "sky": "clear", "temp_c": 18})

    class AnswerAfterTheTool(AgentHooks[Any]):
        # The first turn must call the tool; once its result is in, the next turn must
        # answer (tool_choice none), so the round trip ends in a final message, not chance.
        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: str) -> None:
            agent.model_settings = ModelSettings(
                tool_choice="none", max_tokens=200, extra_body={"seed": 12}
            )

    async def run() -> Any:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="x", timeout=60, max_retries=0)
        model_class = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
        agent = Agent(
            name="weather",
            instructions="Answer with the weather.",
            tools=[get_weather],
            model=model_class(model="prior", openai_client=client),
            # Seeded: the same draws every run, so the test cannot flake on a draw.
            model_settings=ModelSettings(
                tool_choice="required", max_tokens=300, extra_body={"seed": 11}
            ),
            reset_tool_choice=False,
            hooks=AnswerAfterTheTool(),
        )
        async with client:
            return await Runner.run(agent, "What is the weather in Paris?", max_turns=4)

    result = asyncio.run(run())
    kinds = [item.type for item in result.new_items]
    assert len(calls) == 1, kinds
    assert kinds.index("tool_call_item") < kinds.index("tool_call_output_item")
    assert kinds[-1] == "message_output_item"
    assert isinstance(result.final_output, str)
    assert len(result.raw_responses) == 2  # two model calls: the call, then the answer


#: Problems the probe reports that depend on what the model chose to do, not on the server:
#: a random model calls a tool or answers by chance, and writes any bytes it likes.
CHANCE = (
    "expected at least",
    "expected calls",
    "expected no tool call",
    "expected a content answer",
    "expected no content",
    "expected reasoning_content",
    "expected no reasoning_content",
    "argument values lost",
    "call is missing argument",
    "U+FFFD replacement character",
)


def test_canitoolcall_probe_structure() -> None:
    """``canitoolcall probe`` against a live embedded serve (the tiny random gpt-oss).

    Every scenario runs whole and streamed. Structural checks must all pass: no Harmony
    marker in content, tool names or arguments; every call names an offered tool with
    schema-valid JSON arguments; stream equals non-stream (greedy, temperature 0); no
    request errors. Whether a scenario's expected call or answer came is the model's
    choice (random weights), so those problems are listed, not failed.
    """
    from canitoolcall.probe import EQUIVALENCE_CHECK, probe

    config = GatewayConfig(model="tiny", limits=Limits(default_max_tokens=48))
    with serving(EmbeddedBackend("tiny", workers=2), config) as base:
        report = probe(base + "/v1", "tiny", timeout_s=120, concurrency=2)
    print(report.render_text())  # the table, for -s runs and the closing note
    outcomes = report.outcomes
    assert outcomes, "the probe ran no scenario"
    assert not [o for o in outcomes if o.status == "error"], report.render_text()
    equivalence = [o for o in outcomes if o.check == EQUIVALENCE_CHECK]
    assert equivalence and all(o.status == "pass" for o in equivalence), report.render_text()
    for outcome in outcomes:
        if outcome.status != "fail":
            continue
        problems = [p for p in (outcome.detail or "").split("; ") if not p.startswith("hint:")]
        structural = [p for p in problems if not any(p.startswith(c) or c in p for c in CHANCE)]
        assert not structural, f"{outcome.scenario_id}: {structural}"
