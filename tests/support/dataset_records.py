"""Generated Harmony records for the dataset tests: well-formed and deviating, completions and
conversations, text and token ids, with and without per-record tools."""

from __future__ import annotations

import json
import random

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
_CITIES = ["Paris", "Oslo", "Lima", "Kyoto"]


def conversation(rng: random.Random) -> str:
    """A conversation; about a third deviate (no channel, a stray text, a cut end)."""
    city = rng.choice(_CITIES)
    user = f"<|start|>user<|message|>Weather in {city}?<|end|>"
    roll = rng.random()
    if roll < 0.6:
        return f"{user}<|start|>assistant<|channel|>final<|message|>Sunny in {city}.<|return|>"
    if roll < 0.75:
        return f"{user}<|start|>assistant<|message|>Sunny.<|end|>"  # HG200
    if roll < 0.9:
        return f"{user}stray <|start|>assistant<|channel|>final<|message|>ok<|end|>"  # HG101
    return f"{user}<|start|>assistant<|channel|>final<|message|>cut"  # HG102


def completion(rng: random.Random) -> str:
    """A completion after ``<|start|>assistant``: an answer, or a call (sometimes off-schema)."""
    city = rng.choice(_CITIES)
    analysis = f"<|channel|>analysis<|message|>The user asks about {city}.<|end|>"
    roll = rng.random()
    if roll < 0.5:
        return f"{analysis}<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"
    arguments = json.dumps({"city": city} if roll < 0.85 else {"town": city})  # HG180 with tools
    return (
        f"{analysis}<|start|>assistant<|channel|>commentary to=functions.get_weather"
        f" <|constrain|>json<|message|>{arguments}<|call|>"
    )


def conversations(count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return [conversation(rng) for _ in range(count)]


def completions(count: int, seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    return [completion(rng) for _ in range(count)]
