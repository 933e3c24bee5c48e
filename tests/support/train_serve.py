"""Train a tiny gpt-oss on ``prepare``'s output, serve it, and count the tool calls it makes.

The pieces of issue 41's end-to-end check, shared by ``benchmarks/train_then_serve.py`` (a
moderate run, figures for docs/training.md) and ``tests/training/test_train_then_serve.py``
(a small run in CI):

* :func:`asks` draws user requests over a catalog of six tools (:data:`CATALOG`): each
  request declares two to four of them in a random order, and either calls for one of them
  (its arguments taken from the words of the request) or for none (a greeting, a sum);
* :func:`record` turns a request into a chat record with the assistant's answer (the call,
  arguments as compact JSON as gpt-oss writes them, sometimes the tool's result and a final
  answer after it; or the final answer alone), the input of ``harmony-grammar prepare``;
* :func:`train` fits a model to the Parquet ``prepare`` wrote, on its ``labels`` column: a
  plain torch loop that computes the output layer only where a label is masked in (the
  201,088-wide vocabulary projection is nearly all the cost of a tiny model, and the masked
  positions are a tenth of the ids), then ``save_pretrained``;
* :func:`served` starts ``harmony-grammar serve --model DIR`` (the embedded backend) as a
  process on a free port of 127.0.0.1;
* :func:`score` sends each request through the ``openai`` SDK with its tools and reads the
  answer: a call to the tool the request called for, with arguments that are valid for its
  schema (:class:`Tally`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.real_engines import stop_process

__all__ = [
    "CATALOG",
    "POSITIONS",
    "Ask",
    "Tally",
    "TrainReport",
    "asks",
    "held_out",
    "record",
    "save_untrained",
    "score",
    "served",
    "train",
    "write_records",
]

_CITIES = ["Paris", "Oslo", "Lima", "Cairo", "Tokyo", "Berlin", "Quito", "Perth", "Dakar", "Hanoi"]
_CURRENCIES = ["USD", "EUR", "JPY", "GBP", "NOK", "CHF", "INR", "BRL"]
_TASKS = ["buy milk", "call mom", "pay rent", "book dentist", "water plants", "renew passport"]
_TICKERS = ["AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "IBM", "ORCL", "SAP"]
_DATES = ["2026-01-15", "2026-02-03", "2026-03-21", "2026-05-09", "2026-07-30", "2026-11-12"]


def _function(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


#: The tools a request may declare (Chat Completions' shape), each schema with a constraint
#: of its own: an enum, a number, bounds on an integer, a pattern, a date format.
CATALOG: dict[str, dict[str, Any]] = {
    tool["function"]["name"]: tool
    for tool in (
        _function(
            "get_weather",
            "Current weather for a city.",
            {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            ["city"],
        ),
        _function(
            "convert_currency",
            "Convert an amount between currencies.",
            {
                "amount": {"type": "number"},
                "source": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "target": {"type": "string", "pattern": "^[A-Z]{3}$"},
            },
            ["amount", "source", "target"],
        ),
        _function(
            "set_timer",
            "Start a countdown timer.",
            {
                "minutes": {"type": "integer", "minimum": 1, "maximum": 180},
                "label": {"type": "string"},
            },
            ["minutes"],
        ),
        _function(
            "search_flights",
            "Find flights between two cities.",
            {
                "origin": {"type": "string"},
                "destination": {"type": "string"},
                "date": {"type": "string", "format": "date"},
            },
            ["origin", "destination"],
        ),
        _function(
            "add_todo",
            "Add an item to the user's todo list.",
            {
                "task": {"type": "string"},
                "priority": {"type": "string", "enum": ["low", "normal", "high"]},
            },
            ["task"],
        ),
        _function(
            "get_stock_price",
            "Latest price of a stock.",
            {"ticker": {"type": "string", "pattern": "^[A-Z]{1,5}$"}},
            ["ticker"],
        ),
    )
}


@dataclass(frozen=True)
class Ask:
    """One user request: its messages (a system message sometimes, then the user's), the tools
    it declares, and what answers it: a call to ``tool`` with ``arguments``, or (``tool`` None)
    the final answer ``reply`` alone."""

    messages: tuple[dict[str, str], ...]
    tools: tuple[dict[str, Any], ...]
    tool: str | None
    arguments: dict[str, Any] | None
    reply: str


def _call(name: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """A user's words that call for tool ``name``, and the arguments they give."""
    if name == "get_weather":
        city = rng.choice(_CITIES)
        if rng.random() < 0.4:
            unit = rng.choice(["celsius", "fahrenheit"])
            text = rng.choice(
                ["What's the weather in {c} in {u}?", "Weather for {c}, in {u} please."]
            )
            return text.format(c=city, u=unit), {"city": city, "unit": unit}
        text = rng.choice(
            [
                "What's the weather in {c}?",
                "Is it raining in {c} right now?",
                "How warm is it in {c}?",
            ]
        )
        return text.format(c=city), {"city": city}
    if name == "convert_currency":
        amount = rng.choice([5, 12, 40, 99, 250, 1000, 7.5, 19.99])
        source, target = rng.sample(_CURRENCIES, 2)
        text = rng.choice(
            ["Convert {a} {s} to {t}.", "How much is {a} {s} in {t}?", "{a} {s} in {t}?"]
        )
        return text.format(a=amount, s=source, t=target), {
            "amount": amount,
            "source": source,
            "target": target,
        }
    if name == "set_timer":
        minutes = rng.choice([1, 3, 5, 10, 15, 25, 45, 90])
        if rng.random() < 0.4:
            label = rng.choice(["tea", "pasta", "laundry", "break"])
            return f"Set a {minutes} minute timer for the {label}.", {
                "minutes": minutes,
                "label": label,
            }
        text = rng.choice(
            ["Set a timer for {m} minutes.", "Start a {m} minute countdown.", "Timer: {m} minutes."]
        )
        return text.format(m=minutes), {"minutes": minutes}
    if name == "search_flights":
        origin, destination = rng.sample(_CITIES, 2)
        if rng.random() < 0.4:
            date = rng.choice(_DATES)
            return f"Any flights from {origin} to {destination} on {date}?", {
                "origin": origin,
                "destination": destination,
                "date": date,
            }
        text = rng.choice(
            ["Find flights from {o} to {d}.", "I need to fly {o} to {d}.", "Flights {o} to {d}?"]
        )
        return text.format(o=origin, d=destination), {"origin": origin, "destination": destination}
    if name == "add_todo":
        task = rng.choice(_TASKS)
        if rng.random() < 0.4:
            priority = rng.choice(["low", "high"])
            return f"Add '{task}' to my todo list, {priority} priority.", {
                "task": task,
                "priority": priority,
            }
        text = rng.choice(
            ["Add '{t}' to my todo list.", "Remind me to '{t}' on my list.", "Todo: '{t}'."]
        )
        return text.format(t=task), {"task": task}
    ticker = rng.choice(_TICKERS)
    text = rng.choice(["What's {t} trading at?", "Price of {t} stock?", "How is {t} doing today?"])
    return text.format(t=ticker), {"ticker": ticker}


def _chat(rng: random.Random) -> tuple[str, str]:
    """A user's words that call for no tool, and the answer."""
    kind = rng.randrange(4)
    if kind == 0:
        a, b = rng.randrange(2, 50), rng.randrange(2, 50)
        return f"What is {a} plus {b}?", str(a + b)
    if kind == 1:
        return rng.choice(["Hi there!", "Hello!", "Good morning."]), "Hello! How can I help?"
    if kind == 2:
        return rng.choice(
            ["Thanks, that's all.", "Thank you!", "Great, thanks."]
        ), "You're welcome."
    return rng.choice(["Who are you?", "What can you do?"]), "I am an assistant with a few tools."


def asks(count: int, *, seed: int, chat_share: float = 0.2) -> list[Ask]:
    """``count`` requests drawn with ``seed``: about ``chat_share`` of them call for no tool,
    the others for one tool of the catalog, spread evenly."""
    rng = random.Random(seed)
    names = sorted(CATALOG)
    drawn: list[Ask] = []
    for i in range(count):
        chat = rng.random() < chat_share
        target = None if chat else names[i % len(names)]
        others = [n for n in names if n != target]
        declared = rng.sample(others, rng.randrange(1, 4) if target else rng.randrange(2, 5))
        declared = declared + ([target] if target else [])
        rng.shuffle(declared)
        if target is None:
            text, reply = _chat(rng)
            arguments = None
        else:
            text, arguments = _call(target, rng)
            reply = "Done."
        messages: tuple[dict[str, str], ...] = ({"role": "user", "content": text},)
        if rng.random() < 0.3:
            messages = ({"role": "system", "content": "You are a helpful assistant."}, *messages)
        drawn.append(Ask(messages, tuple(CATALOG[n] for n in declared), target, arguments, reply))
    return drawn


def held_out(
    training: Sequence[Ask], count: int, *, seed: int, chat_share: float = 0.2
) -> list[Ask]:
    """``count`` requests drawn as :func:`asks` draws them, with ``seed`` and ``chat_share``,
    leaving out any equal to one of ``training`` (the same messages and tools)."""

    def key(ask: Ask) -> str:
        return json.dumps([ask.messages, ask.tools])

    seen = {key(a) for a in training}
    drawn = asks(4 * count + 20, seed=seed, chat_share=chat_share)
    fresh = [a for a in drawn if key(a) not in seen]
    if len(fresh) < count:
        raise ValueError(f"only {len(fresh)} requests differ from the training ones")
    return fresh[:count]


def record(ask: Ask, *, rng: random.Random) -> dict[str, Any]:
    """The chat record ``prepare`` reads for ``ask``: the request and its answer. A call's
    arguments are compact JSON text, as gpt-oss writes them (the gateway's grammar takes JSON
    without spaces); half of the calls go on with the tool's result and a final answer."""
    messages: list[dict[str, Any]] = [dict(m) for m in ask.messages]
    if ask.tool is None:
        messages.append({"role": "assistant", "content": ask.reply})
    else:
        arguments = json.dumps(ask.arguments, separators=(",", ":"))
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": ask.tool, "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        if rng.random() < 0.5:
            messages.append({"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}'})
            messages.append({"role": "assistant", "content": ask.reply})
    return {"messages": messages, "tools": list(ask.tools)}


def write_records(path: Path, drawn: Sequence[Ask], *, seed: int) -> None:
    """The records of ``drawn`` as JSON Lines, ``prepare``'s input."""
    rng = random.Random(seed)
    path.write_text("".join(json.dumps(record(a, rng=rng)) + "\n" for a in drawn), encoding="utf-8")


@dataclass
class TrainReport:
    """What :func:`train` did: optimiser steps, epochs over the data, seconds, and the mean
    loss of the first and the last tenth of the steps."""

    steps: int = 0
    epochs: float = 0.0
    seconds: float = 0.0
    first_loss: float = math.nan
    last_loss: float = math.nan
    losses: list[float] = field(default_factory=list)


def _masked_loss(model: Any, input_ids: Any, labels: Any, attention: Any) -> Any:
    """Next-token cross-entropy where the target is masked in (its label is not -100): the
    output layer is applied to those positions only."""
    import torch

    hidden = model.model(input_ids=input_ids, attention_mask=attention).last_hidden_state
    targets = labels[:, 1:]
    where = targets != -100
    logits = model.lm_head(hidden[:, :-1][where])
    return torch.nn.functional.cross_entropy(logits.float(), targets[where])


def train(
    parquet: Path,
    output: Path,
    *,
    seed: int,
    epochs: float,
    batch_size: int = 4,
    learning_rate: float = 1e-2,
) -> TrainReport:
    """Fit :func:`~harmony_grammar.generation.hf.tiny_gpt_oss` (seeded by ``seed``) to the
    ``input_ids`` and ``labels`` of ``prepare``'s Parquet for ``epochs`` passes (AdamW, a
    fixed order drawn with ``seed``, linear decay), and ``save_pretrained`` it to ``output``.
    Runs torch on one thread: the sums then add up in one order whatever the machine's core
    count, so a seed names one model (and a second OpenMP thread on a shared machine mostly
    waits for a busy core)."""
    import pyarrow.parquet as pq
    import torch

    from harmony_grammar.format.vocabulary import load_encoding
    from harmony_grammar.generation.hf import PAD_TOKEN

    table = pq.read_table(parquet, columns=["input_ids", "labels"])
    rows = list(zip(table.column("input_ids").to_pylist(), table.column("labels").to_pylist()))
    pad = load_encoding().encode_single_token(PAD_TOKEN)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model, report = _fit(rows, pad, seed, epochs, batch_size, learning_rate)
    finally:
        torch.set_num_threads(threads)
    model.save_pretrained(output)
    return report


def _fit(
    rows: list[tuple[list[int], list[int]]],
    pad: int,
    seed: int,
    epochs: float,
    batch_size: int,
    learning_rate: float,
) -> tuple[Any, TrainReport]:
    import torch

    from harmony_grammar.generation.hf import tiny_gpt_oss

    model = tiny_gpt_oss(seed=seed)
    model.train()
    steps = max(1, round(epochs * len(rows) / batch_size))
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 1 - step / steps)
    rng = random.Random(seed)
    order: list[int] = []
    report = TrainReport()
    start = time.perf_counter()
    for _ in range(steps):
        if len(order) < batch_size:
            fresh = list(range(len(rows)))
            rng.shuffle(fresh)
            order += fresh
        batch = [rows[i] for i in order[:batch_size]]
        del order[:batch_size]
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in batch])
        labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in batch])
        attention = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in batch])
        loss = _masked_loss(model, input_ids, labels, attention)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        report.losses.append(loss.item())
    report.seconds = time.perf_counter() - start
    report.steps = steps
    report.epochs = steps * batch_size / len(rows)
    tenth = max(1, steps // 10)
    report.first_loss = sum(report.losses[:tenth]) / tenth
    report.last_loss = sum(report.losses[-tenth:]) / tenth
    model.eval()
    return model, report


def save_untrained(output: Path, *, seed: int) -> None:
    """The model :func:`train` starts from (``tiny_gpt_oss(seed=seed)``), saved untrained."""
    from harmony_grammar.generation.hf import tiny_gpt_oss

    tiny_gpt_oss(seed=seed).save_pretrained(output)


#: ``serve --recipient-position``'s choices, the default first.
POSITIONS = ("either", "role", "channel")


@contextlib.contextmanager
def served(
    model: Path, *, recipient_position: str = "either", startup_seconds: float = 120
) -> Iterator[str]:
    """``harmony-grammar serve --model MODEL`` (the embedded backend) on a free port of
    127.0.0.1, as a process; yields its base URL (``.../v1``). The port is read from serve's
    ``ready at`` line."""
    # One torch thread: on a shared machine a second OpenMP thread mostly waits for a core.
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        "OMP_NUM_THREADS": "1",
    }
    command = [
        sys.executable, "-m", "harmony_grammar", "serve", "--model", str(model), "--port", "0",
        "--recipient-position", recipient_position, "--workers", "1", "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + startup_seconds
        lines: list[str] = []
        for line in process.stderr:
            lines.append(line)
            found = re.search(r"ready at (http://\S+/v1)", line)
            if found:
                # The rest of serve's log is read on, so that a full pipe never stalls it.
                stderr = process.stderr
                threading.Thread(target=stderr.read, daemon=True).start()
                yield found.group(1)
                return
            if time.monotonic() > deadline:
                break
        raise RuntimeError(f"serve did not start: {''.join(lines)[-2000:]}")
    finally:
        stop_process(process)


@dataclass
class Tally:
    """How a served model answered requests (each count is of answers).

    ``right``: a call to the tool the request called for, with arguments valid for its schema;
    ``exact``: those whose arguments are the request's own; ``declared``: calls to any
    declared tool with valid arguments; ``calls``: answers that call (whatever they call);
    ``quiet``: requests that call for no tool, answered without a call.
    """

    asked: int = 0
    right: int = 0
    exact: int = 0
    declared: int = 0
    calls: int = 0
    chats: int = 0
    quiet: int = 0
    seconds: float = 0.0

    def rate(self, count: int, of: int | None = None) -> str:
        whole = self.asked if of is None else of
        return f"{count}/{whole} ({100 * count / whole:.0f}%)" if whole else "-"


def score(base_url: str, drawn: Sequence[Ask], *, max_tokens: int = 96) -> Tally:
    """Send each request of ``drawn`` to the gateway at ``base_url`` with the ``openai`` SDK
    (its tools, ``tool_choice`` auto, greedy) and count its answers (:class:`Tally`)."""
    import jsonschema
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="unused", timeout=300, max_retries=0)
    model = client.models.list().data[0].id
    tally = Tally()
    start = time.perf_counter()
    for ask in drawn:
        answer = client.chat.completions.create(
            model=model,
            messages=list(ask.messages),  # type: ignore[arg-type]
            tools=list(ask.tools),  # type: ignore[arg-type]
            temperature=0,
            max_tokens=max_tokens,
        )
        message = answer.choices[0].message
        calls = [c for c in message.tool_calls or [] if c.type == "function"]
        if ask.tool is None:
            tally.chats += 1
            tally.quiet += not calls
            continue
        tally.asked += 1
        tally.calls += bool(calls)
        if not calls:
            continue
        name, text = calls[0].function.name, calls[0].function.arguments
        declared = {t["function"]["name"]: t["function"]["parameters"] for t in ask.tools}
        try:
            arguments = json.loads(text)
            jsonschema.validate(
                arguments, declared[name], format_checker=jsonschema.FormatChecker()
            )
        except (KeyError, ValueError, jsonschema.ValidationError):
            continue
        tally.declared += 1
        if name == ask.tool:
            tally.right += 1
            tally.exact += arguments == ask.arguments
    tally.seconds = time.perf_counter() - start
    return tally
