"""The gateway under load: 1, 8 and 64 concurrent streaming clients, against the upstream direct.

    python benchmarks/bench_serve.py [--clients 1,8,64] [--max-tokens 200] [--shape long|call|text]
    python benchmarks/bench_serve.py --upstream URL --backend llamacpp|vllm --model NAME ...

Two real servers on 127.0.0.1, each its own process: the upstream, an embedded
``harmony-grammar serve --model prior`` (the torch-free sampler: the fastest engine this
machine has, so the gateway's share is as large as it can be), and the gateway,
``serve --backend vllm --upstream`` in front of it. In the same run, each level of
concurrency streams the same requests (same prompt ids, grammar and seeds, so the same
tokens) twice: straight from the upstream's ``/v1/completions``, and through the gateway's
``/v1/chat/completions``. Reported per level:

* throughput: completion tokens per second over all clients (the gateway's from ``usage``),
  and the ratio gateway / direct;
* per token: each request's time from its first piece to its last over its tokens after the
  first, p50 and p99 over the requests, direct and through the gateway, and the difference
  (the added latency per token); and the p99 gap between consecutive pieces;
* per request: time to first piece and total time, p50, and the gateway's addition;
* memory: the gateway process's peak resident memory during the level, less its resident
  memory idle, divided by the open streams;
* the gateway's CPU: its process's user and system seconds during the level's gateway phase
  over the tokens it sent (ms per token), and its inverse, the tokens per second one core of
  gateway sustains: the figure that sizes a deployment (how many gateway cores per engine).

Each level runs ``--repeat`` times (direct, then gateway, each time); the table shows each
figure's median and the median of the run-by-run throughput ratios.

``--shape long`` (the default) asks for an answer that cannot end before ``max_tokens``, so
every request streams the same number of tokens and the figures are per token; ``--shape
call`` asks for a tool call, a few tens of tokens, where per-request costs dominate.

``--upstream URL`` measures a running engine instead (``--backend`` names its kind,
``--model`` the model it serves): no embedded upstream is started, the gateway is ``serve
--backend B --upstream URL --model NAME``, and "direct" sends the exact body the backend
would send to the engine's own endpoint. ``--shape text`` asks for a free-text answer (for
llama.cpp, whose GBNF reader refuses the long shape's 20,000-character string); the random
model may end it early, and the figures per token divide by the tokens each request got.

``--mode whole`` sends the same requests unstreamed (``stream: false``): the figures per
token are then each request's total time over its tokens. ``--plugin`` (vLLM only) adds a
third side, vLLM's own ``/v1/chat/completions`` where vLLM runs with
``VLLM_PLUGINS=harmony_grammar`` (the endpoint plugin: the gateway's code in vLLM's process,
no second hop), on the same requests; its ratio is plugin / direct.

A fourth figure isolates the gateway's own CPU per token: the parse and serialisation of one
token (``ChatRun.feed`` and ``json.dumps``), timed in this process, p50 and p99.

The machine's cores are shared by the client, the gateway and the upstream: what the
gateway costs in CPU is taken from the upstream and shows in both figures.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harmony_grammar.gateway.backend import Output  # noqa: E402
from harmony_grammar.gateway.chat.protocol import plan_chat  # noqa: E402
from harmony_grammar.gateway.chat.serving import ChatRun  # noqa: E402
from harmony_grammar.gateway.engines import BACKENDS  # noqa: E402
from harmony_grammar.gateway.http_engine import HttpBackend  # noqa: E402
from harmony_grammar.gateway.plan import Limits  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(args: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "harmony_grammar", "serve", *args, "--port", str(port),
         "--log-level", "warning"],
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx2.get(url + "/health", timeout=2).status_code == 200:
                return process, url
        except httpx2.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"serve {' '.join(args)} did not start")


#: ``long``: an answer that cannot end before max_tokens (a JSON string of at least 20,000
#: characters), so every request streams exactly max_tokens tokens and the figures are per
#: token; ``call``: a tool call, which ends after a few tens of tokens (per-request costs).
SHAPES = ("long", "call", "text")
LONG = {"type": "json_schema", "json_schema": {"name": "long", "schema": {"type": "string", "minLength": 20000}}}


def _request(
    seed: int, max_tokens: int, shape: str = "long", model: str = "prior", stream: bool = True
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": f"What is the weather in city number {seed}?"}],
        "seed": seed,
        "max_tokens": max_tokens,
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if shape == "call":
        body["tools"] = TOOLS
    elif shape == "long":
        body["response_format"] = LONG
    return body


async def _stream(
    client: httpx2.AsyncClient, path: str, body: dict[str, Any], gateway: bool, engine: HttpBackend
) -> tuple[list[float], int, float]:
    """Arrival times of the pieces, completion tokens, and the start time."""
    started = time.perf_counter()
    arrivals: list[float] = []
    tokens = 0
    if not body.get("stream"):
        # A whole answer: one arrival, its tokens from usage (ours) or the engine's record.
        response = await client.post(path, json=body)
        if response.status_code != 200:
            raise SystemExit(f"{path} answered {response.status_code}: {response.text[:400]!r}")
        record = response.json()
        arrivals.append(time.perf_counter())
        if gateway:
            tokens = record["usage"]["completion_tokens"]
        else:
            output = engine.read(record)
            tokens = len(output.ids) if output is not None else 0
        return arrivals, tokens, started
    async with client.stream("POST", path, json=body) as response:
        if response.status_code != 200:
            raise SystemExit(f"{path} answered {response.status_code}: {(await response.aread())[:400]!r}")
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            record = json.loads(line[6:])
            if record.get("usage") and gateway:
                tokens = record["usage"]["completion_tokens"]
                continue
            choices = record.get("choices") or []
            if gateway and not choices:
                continue
            if gateway:
                delta = choices[0]["delta"]
                if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls"):
                    arrivals.append(time.perf_counter())
            else:
                output = engine.read(record)
                if output is not None and output.ids:
                    arrivals.append(time.perf_counter())
                    tokens += len(output.ids)
    return arrivals, tokens, started


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _level(
    clients: int,
    max_tokens: int,
    direct_url: str,
    gateway_url: str,
    gateway_pid: int,
    shape: str = "long",
    engine: str = "vllm",
    model: str = "prior",
    stream: bool = True,
    plugin: bool = False,
) -> dict[str, Any]:
    bodies = [_request(1000 * clients + i, max_tokens, shape, model, stream) for i in range(clients)]
    backend = BACKENDS[engine](direct_url, model="" if model == "prior" else model)
    direct_bodies = [
        {**backend.body(plan_chat(b, model=model, limits=Limits())), "stream": stream}
        for b in bodies
    ]
    await backend.aclose()
    process = psutil.Process(gateway_pid)
    results: dict[str, Any] = {"clients": clients}
    limits = httpx2.Limits(max_connections=clients + 4)
    sides = [
        ("direct", direct_url, backend.path, direct_bodies, False),
        ("gateway", gateway_url, "/v1/chat/completions", bodies, True),
    ]
    if plugin:  # vLLM's own port, its Chat route served by the endpoint plugin
        sides.append(("plugin", direct_url, "/v1/chat/completions", bodies, True))
    for name, url, path, payloads, gateway in sides:
        idle = process.memory_info().rss
        peak = idle
        stop = threading.Event()

        def watch() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, process.memory_info().rss)
                time.sleep(0.01)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        cpu_before = sum(process.cpu_times()[:2])  # the gateway's user + system seconds
        async with httpx2.AsyncClient(base_url=url, timeout=300, limits=limits) as client:
            began = time.perf_counter()
            runs = await asyncio.gather(
                *(_stream(client, path, body, gateway, backend) for body in payloads)
            )
            elapsed = time.perf_counter() - began
        stop.set()
        watcher.join()
        # Only the gateway phase is charged: the gateway process is idle otherwise.
        cpu = sum(process.cpu_times()[:2]) - cpu_before
        charged = name == "gateway"
        gaps = [b - a for arrivals, _, _ in runs for a, b in itertools.pairwise(arrivals)]
        tokens = sum(count for _, count, _ in runs)
        if stream:
            # Per token, per request: from the first piece to the last, over the tokens after
            # the first (time to first piece is reported apart: it holds the grammar's build).
            per_token = [(a[-1] - a[0]) / (n - 1) for a, n, _ in runs if len(a) > 1 and n > 1]
        else:  # a whole answer: its total time over its tokens
            per_token = [(a[-1] - s) / n for a, n, s in runs if a and n > 0]
        results[name] = {
            "tokens": tokens,
            "tokens_per_s": tokens / elapsed,
            "per_token_p50_ms": 1000 * _percentile(per_token, 0.50),
            "per_token_p99_ms": 1000 * _percentile(per_token, 0.99),
            "gap_p50_ms": 1000 * _percentile(gaps, 0.50),
            "gap_p99_ms": 1000 * _percentile(gaps, 0.99),
            "first_p50_ms": 1000 * statistics.median(a[0] - s for a, _, s in runs if a),
            "total_p50_ms": 1000 * statistics.median(a[-1] - s for a, _, s in runs if a),
            "memory_per_stream_kib": (peak - idle) / 1024 / clients if charged else None,
            # The gateway process's CPU per token it sent, and so the tokens per second one
            # core of it sustains: the figure that sizes a deployment (the engine is apart).
            "cpu_ms_per_token": 1000 * cpu / tokens if charged and tokens else None,
            "tokens_per_core_s": tokens / cpu if charged and cpu > 0 else None,
        }
    return results


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the runs of one level (the ratio too, run by run)."""
    row: dict[str, Any] = {"clients": runs[0]["clients"]}
    for side in ("direct", "gateway", "plugin"):
        if side not in runs[0]:
            continue
        row[side] = {
            key: statistics.median(r[side][key] for r in runs)
            for key in runs[0][side]
            if runs[0][side][key] is not None
        }
        if side != "direct":
            row[f"{side}_ratio"] = statistics.median(
                r[side]["tokens_per_s"] / r["direct"]["tokens_per_s"] for r in runs
            )
    row["ratio"] = row["gateway_ratio"]
    return row


def _cpu_per_token(max_tokens: int) -> tuple[float, float]:
    """The gateway's own work per token, in this process: parse, map and serialise."""
    import numpy as np

    from harmony_grammar.generation.sampling import Sampler

    plan = plan_chat(_request(7, max_tokens), model="prior", limits=Limits())
    ids = list(Sampler(plan.grammar, max_tokens=max_tokens).stream(np.random.default_rng(7)))
    times: list[float] = []
    for _ in range(20):
        run = ChatRun(plan)
        for token in ids:
            started = time.perf_counter()
            for chunk in run.feed(Output(ids=(token,))):
                json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))
            times.append(time.perf_counter() - started)
        run.close()
    return 1000 * _percentile(times, 0.5), 1000 * _percentile(times, 0.99)


def _table(rows: list[dict[str, Any]], mode: str) -> None:
    sides = [side for side in ("gateway", "plugin") if side in rows[0]]
    print(f"{mode}:")
    print()
    print("| clients | through | direct tok/s | its tok/s | ratio | per token p50 direct / it (ms) | "
          "per token p99 direct / it (ms) | added per token p50 / p99 (ms) | "
          "piece gap p99 direct / it (ms) | "
          "TTFT p50 direct / it (ms) | total p50 direct / it (ms) | memory / stream (KiB) | "
          "gateway CPU / token (ms) | tok/s per gateway core |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        d = row["direct"]
        for side in sides:
            g = row[side]
            own = side == "gateway"  # the gateway process's memory and CPU are measured apart
            print(
                f"| {row['clients']} | {side} | {d['tokens_per_s']:.0f} | {g['tokens_per_s']:.0f} | "
                f"{row[side + '_ratio']:.2f} | "
                f"{d['per_token_p50_ms']:.2f} / {g['per_token_p50_ms']:.2f} | "
                f"{d['per_token_p99_ms']:.2f} / {g['per_token_p99_ms']:.2f} | "
                f"{g['per_token_p50_ms'] - d['per_token_p50_ms']:.2f} / "
                f"{g['per_token_p99_ms'] - d['per_token_p99_ms']:.2f} | "
                f"{d['gap_p99_ms']:.2f} / {g['gap_p99_ms']:.2f} | "
                f"{d['first_p50_ms']:.0f} / {g['first_p50_ms']:.0f} | "
                f"{d['total_p50_ms']:.0f} / {g['total_p50_ms']:.0f} | "
                + (f"{g['memory_per_stream_kib']:.0f} | {g['cpu_ms_per_token']:.3f} | "
                   f"{g['tokens_per_core_s']:.0f} |" if own else "- | - | - |")
            )
            if d["tokens"] != g["tokens"]:
                print(f"  note: {row['clients']} clients: {d['tokens']} tokens direct, {g['tokens']} "
                      f"through the {side} (it stops at <|call|>/<|return|>)")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,8,64")
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--shape", default="long", choices=SHAPES)
    parser.add_argument(
        "--mode", default="streamed", help="streamed, whole, or both (streamed,whole)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per level; the table shows each figure's median"
    )
    parser.add_argument("--upstream", metavar="URL", help="a running engine to measure instead")
    parser.add_argument("--backend", default="vllm", choices=sorted(BACKENDS), help="its kind")
    parser.add_argument("--model", default="prior", help="the model the engine serves")
    parser.add_argument(
        "--plugin", action="store_true",
        help="also the upstream's own /v1/chat/completions (vLLM with VLLM_PLUGINS=harmony_grammar)",
    )
    args = parser.parse_args()
    modes = args.mode.split(",")
    if not set(modes) <= {"streamed", "whole"}:
        parser.error("--mode takes streamed, whole or streamed,whole")
    if args.plugin and not (args.upstream and args.backend == "vllm"):
        parser.error("--plugin measures a running vLLM: it needs --upstream URL --backend vllm")
    upstream = None
    if args.upstream:
        direct_url = args.upstream.rstrip("/")
    else:
        upstream, direct_url = _start(["--model", "prior", "--workers", "64"])
    gateway = None
    options = (args.shape, args.backend, args.model)
    tables: dict[str, list[dict[str, Any]]] = {}
    try:
        # The engine's queue may hold a request longer than serve's default wait (a 504):
        # the benchmark waits as long as its own client does.
        gateway, gateway_url = _start(
            ["--backend", args.backend, "--upstream", direct_url, "--model", args.model,
             "--upstream-timeout", "300"]
        )
        # Warm every path (grammar and schema caches, connection pools) before measuring.
        asyncio.run(_level(2, args.max_tokens, direct_url, gateway_url, gateway.pid, *options,
                           plugin=args.plugin))
        for mode in modes:
            rows = []
            for n in args.clients.split(","):
                runs = [
                    asyncio.run(
                        _level(int(n), args.max_tokens, direct_url, gateway_url, gateway.pid,
                               *options, stream=mode == "streamed", plugin=args.plugin)
                    )
                    for _ in range(args.repeat)
                ]
                rows.append(_median(runs))
            tables[mode] = rows
    finally:
        for process in (gateway, upstream):
            if process is not None:
                process.kill()
                process.wait(timeout=10)
    cpu50, cpu99 = _cpu_per_token(args.max_tokens)
    upstream_name = args.upstream or "embedded, --model prior"
    print(f"bench_serve: gateway ({args.backend} backend) vs its upstream ({upstream_name}) direct;"
          f" max_tokens {args.max_tokens}, {os.cpu_count()} cores shared by client, gateway, upstream;"
          f" medians of {args.repeat} runs per level; requests shaped {args.shape!r}; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    print()
    for mode, rows in tables.items():
        _table(rows, mode)
    print(f"gateway CPU per token (parse + map + serialise, in-process): p50 {cpu50:.3f} ms, "
          f"p99 {cpu99:.3f} ms")


if __name__ == "__main__":
    main()
