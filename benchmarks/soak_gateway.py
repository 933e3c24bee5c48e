"""Soak of the gateway (issue 33): hostile requests against a live ``serve`` on 127.0.0.1.

    python benchmarks/soak_gateway.py [--requests 2000] [--seconds 600] [--seed 33]

Starts ``harmony-grammar serve`` (embedded backend, ``--model prior``: no network, fast) as
a subprocess on a free port of 127.0.0.1, then sends a bounded number of requests over raw
sockets (so nothing in a client library tidies them up), each one of these classes:

* ``body``: a valid Chat, Responses or ``/v1/completions`` body with fields replaced by
  random JSON, removed, nested deep, holding lone surrogates, huge numbers or control-token
  spellings; or bytes that are not JSON or not UTF-8; or a client grammar (chained deep,
  wide, nested, broken);
* ``headers``: foreign ``Host`` and ``Origin``, other ``Content-Type`` s, non-ASCII and
  malformed ``Authorization``, ``Content-Length`` too large or too small;
* ``chunked``: a body sent with ``Transfer-Encoding: chunked`` in random pieces, sometimes
  with a malformed chunk size, sometimes cut off mid-body;
* ``stream``: ``stream: true`` answers read whole (they must end properly: ``[DONE]`` or a
  ``response.completed``/``incomplete``/``failed`` event) or dropped part-way;
* ``grammar``: the shapes that once crashed llguidance, on every route that reads a grammar
  or schema (the render twins included): custom tools (Chat and Responses) whose Lark grammar
  chains rules or terminals deep, or holds a ``%json`` block with a long ``$ref`` chain
  (aliases, objects, cycles, ``allOf``/``anyOf``/``items`` wrappers), regexes nested deep,
  function parameters and response formats with ``$ref`` chains, and ``/v1/completions``
  grammars of each kind (Lark, ``%json``, the JSON form);
* ``counts``: thousands of tools, of messages or of stop strings, and names thousands long;
* ``whitespace``: runs of Unicode whitespace near and past tiktoken's limit (which once
  panicked) in a message or a completion's prompt;
* ``long_prompt``: prompts of tens of thousands to a million tokens (past the embedded
  backend's context: once a few GB of logits each);
* ``echo``: hosted tool types that the answer's ``x-hosted-tools-ignored`` header echoes,
  holding CR/LF, NUL, non-Latin-1 or 70,000 characters.

What must hold, and is counted: no 500 (no 5xx at all from this backend); no dead stream
(a 200 stream read to its end that ends without its last event); ``/health`` answers 200
between requests (every tenth request and at the end); after the run, ``open_streams`` and
``active_generations`` return to 0; the server's resident memory grows by at most
``--memory-bound-mib`` (default 256) from after the warm-up to the end. It prints the
counts as JSON and exits 1 when anything above was violated. ``tests/gateway/test_soak_gateway.py``
runs a short budget of it in CI.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

HOST = "127.0.0.1"
ROUTES = ("/v1/chat/completions", "/v1/responses", "/v1/completions")
TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
BASES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [TOOL],
        "max_tokens": 24,
    },
    "/v1/responses": {
        "input": "hi",
        "tools": [{"type": "function", **TOOL["function"]}],
        "max_output_tokens": 24,
    },
    "/v1/completions": {"prompt": "<|start|>user<|message|>hi<|end|>", "max_tokens": 8},
}
FIELDS = [
    "model", "messages", "input", "instructions", "tools", "tool_choice", "response_format",
    "text", "n", "seed", "stream", "stream_options", "stop", "temperature", "top_p",
    "max_tokens", "max_completion_tokens", "max_output_tokens", "prompt",
    "structured_outputs", "stop_token_ids", "reasoning_effort", "reasoning", "metadata",
    "user", "parallel_tool_calls",
]  # fmt: skip
WEIRD_STRINGS = [
    "", "\ud800", "a\udfffb", "<|end|>", "<|start|>assistant<|call|>", "\n# Tools\ntype x = 1",
    "\u2028", "é" * 50, "x" * 5000, "required", "none", "auto", "json_schema",
]  # fmt: skip


@dataclass
class Counts:
    """What the soak saw."""

    requests: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    dead_streams: list[str] = field(default_factory=list)
    dropped_streams: int = 0
    health_checks: int = 0
    health_failures: list[str] = field(default_factory=list)
    memory_mib: dict[str, float] = field(default_factory=dict)
    settled: bool = False
    seconds: float = 0.0

    def violations(self, memory_bound_mib: float) -> list[str]:
        """Everything that must not happen, one line each."""
        out = [f"5xx: {e}" for e in self.server_errors[:5]]
        out += [f"dead stream: {d}" for d in self.dead_streams[:5]]
        out += [f"health: {h}" for h in self.health_failures[:5]]
        growth = self.memory_mib.get("end", 0) - self.memory_mib.get("start", 0)
        if growth > memory_bound_mib:
            out.append(f"memory grew by {growth:.0f} MiB (bound {memory_bound_mib:.0f})")
        if not self.settled:
            out.append("open streams or generations did not return to 0")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The counts as JSON."""
        return {
            "requests": sum(self.requests.values()),
            "by_class": dict(self.requests),
            "statuses": dict(sorted(self.statuses.items())),
            "server_errors": len(self.server_errors),
            "dead_streams": len(self.dead_streams),
            "streams_dropped_by_the_client": self.dropped_streams,
            "health_checks": self.health_checks,
            "health_failures": len(self.health_failures),
            "memory_mib": {k: round(v, 1) for k, v in self.memory_mib.items()},
            "settled": self.settled,
            "seconds": round(self.seconds, 1),
        }


# -- the server ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def live_serve(
    workers: int = 2, extra: Sequence[str] = ()
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """``harmony-grammar serve`` on a free port of 127.0.0.1; stopped when the block ends.
    ``extra`` options come last, so they override the soak's (``--backend replay ...``)."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [
        sys.executable, "-m", "harmony_grammar", "serve", "--model", "prior",
        "--host", HOST, "--port", str(port), "--workers", str(workers),
        "--max-tokens-limit", "64", "--max-request-bytes", str(4 * 1024 * 1024),
        "--log-level", "critical", *extra,
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if _request(port, "GET", "/health", b"", {}, timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                error = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"serve did not start: {error[-2000:]}")
            time.sleep(0.2)
        yield port, process
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- raw HTTP ------------------------------------------------------------------------------


def _request(
    port: int,
    method: str,
    path: str,
    body: bytes,
    headers: dict[str, bytes],
    *,
    timeout: float = 60,
    chunks: list[bytes] | None = None,
    read_limit: int | None = None,
    cut: bool = False,
) -> tuple[int, bytes, bool, str]:
    """(status, body read, whether the body was read to its end, content type) over a raw
    socket.

    ``chunks`` sends the body chunked (each item one chunk, written as given, so a malformed
    chunk can be sent); ``read_limit`` stops reading (closing the connection) after so
    many body bytes. ``cut`` half-closes the connection after the body: a client that sent
    less than it announced and stopped.
    """
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        lines = [f"{method} {path} HTTP/1.1".encode()]
        sent = {k.lower() for k in headers}
        if "host" not in sent:
            lines.append(f"Host: {HOST}:{port}".encode())
        lines += [k.encode() + b": " + v for k, v in headers.items()]
        if chunks is not None:
            lines.append(b"Transfer-Encoding: chunked")
        elif "content-length" not in sent and (body or method == "POST"):
            lines.append(f"Content-Length: {len(body)}".encode())
        lines.append(b"Connection: close")
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
        try:
            if chunks is None:
                sock.sendall(body)
            else:
                for chunk in chunks:
                    sock.sendall(chunk)
            if cut:
                sock.shutdown(socket.SHUT_WR)  # a body cut short: the client goes quiet
        except OSError:
            pass  # the server answered (413, 400) and closed before the body was sent
        response = http.client.HTTPResponse(sock)
        response.begin()
        data = b""
        complete = True
        try:
            while True:
                piece = response.read1(65536) if read_limit is None else response.read1(512)
                if not piece:
                    break
                data += piece
                if read_limit is not None and len(data) >= read_limit:
                    complete = False
                    break
        except (http.client.IncompleteRead, OSError):
            complete = False
        return response.status, data, complete, response.getheader("content-type") or ""


# -- the classes of requests ---------------------------------------------------------------


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(10 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, -1, 2**63, -(2**63) - 1, 10**400, rng.randrange(-100, 100)])
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e308, 2.5, float(rng.random())])
    if kind in (4, 5):
        return rng.choice(WEIRD_STRINGS)
    if kind in (6, 7):
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice([*FIELDS, "type", "name", "role", "content"]): _value(rng, depth + 1)
            for _ in range(rng.randrange(4))}  # fmt: skip


def _grammar(rng: random.Random) -> str:
    depth = rng.choice([10, 1500, 2500, 5000])
    shape = rng.randrange(4)
    if shape == 0:
        lines = [f"r{i}: r{i + 1}" for i in range(depth)] + [f'r{depth}: "a"']
        return "%llguidance {}\nstart: r0\n" + "\n".join(lines) + "\n"
    if shape == 1:
        return "%llguidance {}\nstart: " + "(" * depth + '"a"' + ")" * depth + "\n"
    if shape == 2:
        return "%llguidance {}\nstart: " + " | ".join(f'"w{i}"' for i in range(depth)) + "\n"
    return rng.choice(["start: (", "%llguidance {\nstart: a", "{" * 3000, '{"grammars": []}'])


def _json(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=True).encode()
    except (ValueError, RecursionError):
        return b"{}"


def body_case(rng: random.Random) -> tuple[str, bytes]:
    """A route and a hostile body for it."""
    path = rng.choice(ROUTES)
    body = json.loads(json.dumps(BASES[path]))
    move = rng.randrange(9)
    if move == 0:
        return path, rng.choice([b"", b"{", b"null", b"[]", b'"x"', b"{\xff}", b"\xef\xbb\xbf{}"])
    if move == 1:
        nested = "[" * rng.choice([200, 1200, 20000]) + "]" * rng.choice([0, 200, 20000])
        return path, b'{"messages": [], "metadata": ' + nested.encode() + b"}"
    if move == 2:
        body["structured_outputs"] = {"grammar": _grammar(rng)}
        return "/v1/completions", _json({**BASES["/v1/completions"], **body})
    for _ in range(rng.randrange(1, 4)):
        key = rng.choice(FIELDS)
        if rng.random() < 0.2:
            body.pop(key, None)
        else:
            body[key] = _value(rng)
    if move == 3:  # a tool field, not the top level
        tool = json.loads(json.dumps(TOOL))
        tool["function"][rng.choice(["name", "description", "parameters"])] = _value(rng)
        body["tools"] = [tool, tool] if rng.random() < 0.3 else [tool]
    return path, _json(body)


def header_case(rng: random.Random, port: int) -> tuple[str, bytes, dict[str, bytes]]:
    """A valid body with hostile headers."""
    path = rng.choice(ROUTES)
    body = _json(BASES[path])
    headers: dict[str, bytes] = {"Content-Type": b"application/json"}
    move = rng.randrange(6)
    if move == 0:
        headers["Host"] = rng.choice([b"evil.example", b"127.0.0.1.evil", b"", b"localhost:1",
                                      b"[::1]", f"{HOST}:{port}".encode()])  # fmt: skip
    elif move == 1:
        headers["Origin"] = rng.choice(
            [b"https://evil.example", b"null", f"http://{HOST}:{port}".encode()]
        )
    elif move == 2:
        headers["Content-Type"] = rng.choice([b"text/plain", b"application/x-www-form-urlencoded",
                                              b"multipart/form-data", b"application/json; charset=utf-8",
                                              b""])  # fmt: skip
    elif move == 3:
        headers["Authorization"] = rng.choice(["Bearer été".encode(), b"Bearer \xff\xfe", b"Basic x",
                                               b"Bearer " + b"k" * 5000])  # fmt: skip
    elif move == 4:
        headers["Content-Length"] = str(rng.choice([len(body) + 10, 10**12])).encode()
        if rng.random() < 0.5:
            headers["Content-Length"] = str(max(len(body) - 5, 0)).encode()
    else:
        headers["X-Request-Id"] = rng.choice(["é".encode(), b"\x01", b"x" * 9000])
    return path, body, headers


def echo_case(rng: random.Random) -> tuple[str, bytes]:
    """A hosted tool whose ``type`` the answer echoes in a header: CR/LF, NUL, non-Latin-1,
    70,000 characters, or many of them."""
    path = rng.choice(["/v1/responses", "/v1/responses/render"])
    kind = rng.choice(["web_search\r\nX-Evil: 1", "web\x00search", "火", "w" * 70_000, "é"])
    tools = [{"type": kind}] * rng.choice([1, 3]) + [
        {"type": f"h{i}"} for i in range(rng.choice([0, 40]))
    ]
    return path, body_bytes({**BASES["/v1/responses"], "tools": tools})


def chunked_case(rng: random.Random) -> tuple[str, list[bytes], bool]:
    """A body in random chunks; sometimes malformed, sometimes cut off."""
    path = rng.choice(ROUTES)
    body = _json(BASES[path])
    chunks: list[bytes] = []
    i = 0
    while i < len(body):
        size = rng.randrange(1, 40)
        piece = body[i : i + size]
        chunks.append(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        i += size
    move = rng.randrange(4)
    if move == 0:
        chunks.append(b"0\r\n\r\n")
    elif move == 1:
        chunks.insert(rng.randrange(len(chunks) + 1), b"zz\r\nnot hex\r\n")
    elif move == 2:
        chunks = chunks[: rng.randrange(len(chunks) + 1)]  # cut off
    else:
        chunks.append(b"0\r\nX-Trailer: 1\r\n\r\n")
    return path, chunks, move == 2


# -- the classes that once took the server down (issue 40) ---------------------------------

#: Every route that reads a client's grammar or schema, the render twins included.
GRAMMAR_ROUTES = (
    "/v1/chat/completions", "/v1/responses", "/v1/chat/completions/render",
    "/v1/responses/render", "/v1/completions",
)  # fmt: skip
#: Shapes of ``$ref`` chains: each level holds the next by reference.
REF_SHAPES = ("alias", "object", "cycle", "all_of", "any_of", "items")
#: Unicode's spaces (tiktoken's ``\s``), whose long runs made tiktoken panic.
SPACES = " \t\xa0\u1680\u2003\u202f\u205f\u3000"


def lark_chain(rng: random.Random, depth: int) -> str:
    """A Lark grammar whose rules (or terminals) chain ``depth`` deep, with some noise."""
    name = rng.choice(["r", "T"])
    noise = rng.choice(["", ' "x"', " /[a-z]/", ' "a: b"'])
    lines = [f"start: {name}0"] + [f"{name}{i}: {name}{i + 1}{noise}" for i in range(depth)]
    return "\n".join([*lines, f'{name}{depth}: "end"']) + "\n"


def ref_schema(rng: random.Random, levels: int, kind: str | None = None) -> dict[str, Any]:
    """A JSON schema whose ``$ref`` s chain ``levels`` deep, in one of :data:`REF_SHAPES`
    (``kind``, or one drawn)."""
    kind = kind or rng.choice(REF_SHAPES)

    def at(i: int) -> dict[str, str]:
        return {"$ref": f"#/$defs/d{i % levels if kind == 'cycle' else i}"}

    wrap = {
        "alias": lambda i: at(i + 1),
        "object": lambda i: {"type": "object", "properties": {"a": at(i + 1)}},
        "cycle": lambda i: {"type": "object", "properties": {"a": at(i + 1)}},
        "all_of": lambda i: {"allOf": [at(i + 1)]},
        "any_of": lambda i: {"anyOf": [at(i + 1), {"type": "null"}]},
        "items": lambda i: {"type": "array", "items": at(i + 1)},
    }[kind]
    defs: dict[str, Any] = {f"d{i}": wrap(i) for i in range(levels)}
    defs[f"d{levels}"] = {"type": "string"}
    return {"$ref": "#/$defs/d0", "$defs": defs}


def client_grammar(rng: random.Random) -> tuple[str, str]:
    """(syntax, definition) of a custom tool's grammar: deep, or within the limits."""
    depth = rng.choice([50, 1800, 2600, 6000, 15000])
    shape = rng.randrange(4)
    if shape == 0:
        return "lark", lark_chain(rng, depth)
    if shape == 1:
        return "lark", f"start: %json {json.dumps(ref_schema(rng, depth))}\n"
    if shape == 2:
        return "lark", 'start: "<" body ">"\nbody: %json ' + json.dumps(
            ref_schema(rng, depth)
        ) + "\n"
    return "regex", rng.choice(
        ["(" * depth + "a" + ")" * depth, "|".join("ab" for _ in range(depth))]
    )


def _custom_tool(path: str, syntax: str, definition: str) -> dict[str, Any]:
    if path.startswith("/v1/chat"):
        fmt = {"type": "grammar", "grammar": {"syntax": syntax, "definition": definition}}
        return {"type": "custom", "custom": {"name": "edit", "format": fmt}}
    return {"type": "custom", "name": "edit", "format": {"type": "grammar", "syntax": syntax,
                                                          "definition": definition}}  # fmt: skip


def grammar_case(rng: random.Random) -> tuple[str, bytes]:
    """A client grammar or schema of a shape that once crashed llguidance, on any route."""
    path = rng.choice(GRAMMAR_ROUTES)
    if path == "/v1/completions":
        body = json.loads(json.dumps(BASES[path]))
        depth = rng.choice([1800, 2600, 6000])
        body["structured_outputs"] = {"grammar": rng.choice([
            "%llguidance {}\n" + lark_chain(rng, depth),
            f"%llguidance {{}}\nstart: %json {json.dumps(ref_schema(rng, depth))}\n",
            json.dumps({"grammars": [{"json_schema": ref_schema(rng, depth)}]}),
            json.dumps({"grammars": [{"lark_grammar": lark_chain(rng, depth)}]}),
        ])}  # fmt: skip
        return path, _json(body)
    chat = path.startswith("/v1/chat")
    body = json.loads(json.dumps(BASES["/v1/chat/completions" if chat else "/v1/responses"]))
    move = rng.randrange(3)
    if move == 0:
        body["tools"] = [_custom_tool(path, *client_grammar(rng))]
    elif move == 1:
        schema = {"type": "object", "properties": {"x": ref_schema(rng, rng.choice([300, 3000]))}}
        function = {"name": "f", "parameters": schema}
        body["tools"] = [{"type": "function", "function": function} if chat else
                         {"type": "function", **function}]  # fmt: skip
    else:
        schema = ref_schema(rng, rng.choice([300, 3000]))
        if chat:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "r", "schema": schema},
            }
        else:
            body["text"] = {"format": {"type": "json_schema", "name": "r", "schema": schema}}
    return path, _json(body)


def count_case(rng: random.Random) -> tuple[str, bytes]:
    """Large counts: many tools, many messages, many stop strings, long names."""
    path = rng.choice(ROUTES[:2])
    body = json.loads(json.dumps(BASES[path]))
    many = rng.choice([129, 1000, 5000])
    move = rng.randrange(4)
    if move == 0:
        tools = [{**TOOL, "function": {**TOOL["function"], "name": f"t{i}"}} for i in range(many)]
        body["tools"] = tools if path.startswith("/v1/chat") else [
            {"type": "function", **t["function"]} for t in tools]  # fmt: skip
    elif move == 1:
        turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}] * many
        if path.startswith("/v1/chat"):
            body["messages"] = [*turns, {"role": "user", "content": "go"}]
        else:
            body["input"] = [*turns, {"role": "user", "content": "go"}]
    elif move == 2:
        body["stop"] = ["x"] * many
    else:
        body["tools"] = [{**TOOL, "function": {**TOOL["function"], "name": "n" * many}}]
    return path, _json(body)


def _user_text(path: str, text: str) -> tuple[str, bytes]:
    """``path``'s base body with ``text`` as the user's words (a message, the input, or the
    completion's prompt), as UTF-8 JSON."""
    body = json.loads(json.dumps(BASES[path]))
    if path == "/v1/completions":
        body["prompt"] = "<|start|>user<|message|>" + text + "<|end|>"
    elif path == "/v1/responses":
        body["input"] = text
    else:
        body["messages"] = [{"role": "user", "content": text}]
    return path, body_bytes(body)


def whitespace_case(rng: random.Random) -> tuple[str, bytes]:
    """A run of Unicode whitespace near or past tiktoken's limit, in a message or a prompt."""
    run = rng.choice(SPACES) * rng.choice([400_000, 600_000, 1_100_000])
    return _user_text(rng.choice(ROUTES), "a" + run + "b")


def long_prompt_case(rng: random.Random) -> tuple[str, bytes]:
    """A prompt of tens of thousands of tokens: past the embedded backend's context."""
    return _user_text(rng.choice(ROUTES), "word " * rng.choice([20_000, 200_000, 600_000]))


def body_bytes(body: Any) -> bytes:
    """The body as UTF-8 JSON (not ASCII-escaped: a space stays one to three bytes)."""
    return json.dumps(body, ensure_ascii=False).encode()


def _stream_ended_properly(path: str, data: bytes) -> bool:
    text = data.decode("utf-8", errors="replace")
    if path == "/v1/responses":
        return (
            any(f'"type":"response.{end}"' in text for end in ("completed", "incomplete", "failed"))
            or '"type":"error"' in text
        )
    return text.rstrip().endswith("data: [DONE]")


# -- the run -------------------------------------------------------------------------------


def _health(port: int, counts: Counts) -> dict[str, Any] | None:
    counts.health_checks += 1
    try:
        status, data, _, _ = _request(port, "GET", "/health", b"", {}, timeout=30)
    except OSError as exc:
        counts.health_failures.append(f"no answer: {exc}")
        return None
    if status != 200:
        counts.health_failures.append(f"status {status}")
        return None
    health: dict[str, Any] = json.loads(data)
    return health


def _rss_mib(process: subprocess.Popen[bytes]) -> float:
    """The process's resident memory (Linux's /proc: no dependency for one number)."""
    with open(f"/proc/{process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


#: The classes of bodies, each a function of the random source.
BODY_CLASSES = {
    "body": body_case,
    "grammar": grammar_case,
    "counts": count_case,
    "whitespace": whitespace_case,
    "long_prompt": long_prompt_case,
    "echo": echo_case,
}
#: How often each class is drawn (bodies twice as often as the rest).
CLASSES = ["body", "body", "grammar", "grammar", "counts", "whitespace", "long_prompt",
           "echo", "headers", "chunked", "stream"]  # fmt: skip


def _one(rng: random.Random, port: int, counts: Counts) -> None:
    kind = rng.choice(CLASSES)
    counts.requests[kind] += 1
    headers = {"Content-Type": b"application/json"}
    chunks = None
    read_limit = None
    cut = False
    if kind in BODY_CLASSES:
        path, body = BODY_CLASSES[kind](rng)
    elif kind == "headers":
        path, body, headers = header_case(rng, port)
        announced = headers.get("Content-Length")
        cut = announced is not None and int(announced) > len(body)
    elif kind == "chunked":
        path, chunks, cut = chunked_case(rng)
        body = b""
    else:
        path = rng.choice(ROUTES)
        base = {**BASES[path], "stream": True}
        if rng.random() < 0.5:
            base[rng.choice(FIELDS)] = _value(rng)
        body = _json(base)
        if rng.random() < 0.3:
            read_limit = rng.randrange(1, 2000)
    try:
        status, data, complete, content_type = _request(
            port,
            "POST",
            path,
            body,
            headers,
            chunks=chunks,
            read_limit=read_limit,
            cut=cut,
            timeout=60,
        )
    except (OSError, http.client.HTTPException) as exc:
        # The server may close a connection whose request it cannot frame (a malformed
        # chunk, a body shorter than its Content-Length): h11 ends it without a response.
        counts.statuses[f"closed ({type(exc).__name__})"] += 1
        return
    counts.statuses[str(status)] += 1
    where = f"{kind} {path} {body[:120]!r}"
    if status >= 500:
        counts.server_errors.append(f"{status} {where}: {data[:200]!r}")
    if status == 200 and content_type.startswith("text/event-stream"):
        if not complete:
            counts.dropped_streams += 1
        elif not _stream_ended_properly(path, data):
            counts.dead_streams.append(f"{where}: ...{data[-200:]!r}")


def _settle(port: int, counts: Counts) -> None:
    for _ in range(300):
        health = _health(port, counts)
        if health and health["open_streams"] == 0 and health.get("active_generations", 0) == 0:
            counts.settled = True
            return
        time.sleep(0.1)


def run(requests: int, seconds: float, seed: int, *, workers: int = 2) -> Counts:
    """Soak a fresh ``serve`` with up to ``requests`` requests or ``seconds``, whichever first."""
    rng = random.Random(seed)
    counts = Counts()
    started = time.monotonic()
    with live_serve(workers) as (port, process):
        for _ in range(5):  # warm-up: the first requests build caches
            _request(port, "POST", "/v1/chat/completions", _json(BASES["/v1/chat/completions"]),
                     {"Content-Type": b"application/json"})  # fmt: skip
        counts.memory_mib["start"] = _rss_mib(process)
        peak = counts.memory_mib["start"]
        for i in range(requests):
            if time.monotonic() - started > seconds:
                break
            _one(rng, port, counts)
            if i % 10 == 0:
                _health(port, counts)
                peak = max(peak, _rss_mib(process))
        _settle(port, counts)
        counts.memory_mib["end"] = _rss_mib(process)
        counts.memory_mib["peak"] = max(peak, counts.memory_mib["end"])
        if process.poll() is not None:
            counts.health_failures.append(f"the server exited with {process.returncode}")
    counts.seconds = time.monotonic() - started
    return counts


def main() -> int:
    """Run the soak; exit 1 on any violation."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--memory-bound-mib", type=float, default=256)
    args = parser.parse_args()
    counts = run(args.requests, args.seconds, args.seed)
    print(json.dumps(counts.to_dict(), indent=2))
    violations = counts.violations(args.memory_bound_mib)
    for line in violations:
        print(line, file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
