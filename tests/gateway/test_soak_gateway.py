"""The gateway soak (benchmarks/soak_gateway.py) on a short budget: a live ``serve`` on
127.0.0.1 takes hostile bodies, headers, chunked transfers, dropped streams, the grammar
shapes that once crashed llguidance, large counts, whitespace runs past tiktoken's limit,
long prompts and echoed header values with no 5xx, no dead stream, ``/health`` answering
throughout, every generation ended, and memory within the stated bound (256 MiB). The
README quotes a longer run's counts."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from ..support.soak import load_soak


@pytest.mark.parametrize("seed", [1, 2])
def test_a_short_soak_of_a_live_gateway_finds_nothing(seed: int) -> None:
    soak = load_soak()
    counts = soak.run(60, 300, seed)
    assert counts.violations(256) == [], counts.to_dict()
    summary = counts.to_dict()
    assert summary["requests"] == 60
    assert summary["health_checks"] >= 6 and summary["settled"]
    # Every class ran, and hostile input was answered as such, not only served.
    assert set(summary["by_class"]) == set(soak.CLASSES)
    assert summary["statuses"].get("400", 0) > 0 and summary["statuses"].get("200", 0) > 0
