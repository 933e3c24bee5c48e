"""llama.cpp's own Harmony handling as a conformance reader: a real ``llama-server`` replaying
each generation, its reply the server's own chat parsing of it.

The server (``.engines/llama.cpp``, made by ``scripts/engines/llama-server.sh``) runs the tiny
gpt-oss with the model's chat template (``--jinja``), so it parses output with its gpt-oss
parser. A generation reaches that parser in one of two replays:

* **forced** (``llamacpp``, ``llamacpp-stream``): the model is forced by a GBNF grammar
  naming each id (``<[200005]>``) to write exactly the generation, and the server parses
  what it wrote, as it parses any generation. A request may not carry both a grammar and
  tools (the server answers 400 "Cannot use custom grammar constraints with tools."), so a
  case that declares tools is not run; each forced id costs a pass of the grammar over the
  whole vocabulary, so neither is a generation over ``max_ids`` ids.
* **continued** (``llamacpp-continued``, which runs the cases that declare tools too): the
  server's assistant prefill. The request, with the case's tools, ends with an assistant
  message whose ``reasoning_content`` is the generation after its opening
  ``<|channel|>analysis<|message|>`` (``continue_final_message: "reasoning_content"``, no
  generation prompt); the template renders it right after the generation prompt's
  ``<|start|>assistant``, so the prompt ends with exactly the generation's text, and the
  server parses that prefill with what the model writes next, one id forced by
  ``logit_bias``: the generation's stop id (which never reaches the parsed text). Before each
  replay the rendered prompt (``/apply-template``) is checked to be the generation prompt
  followed by the generation's text. A generation that opens with another channel follows
  an empty analysis message (``<|channel|>analysis<|message|><|end|><|start|>assistant``,
  which adds nothing to a reply, and which the template itself writes before a continued
  ``content``); one that opens with no ``<|channel|>`` is not run. It is the server's own
  parser on the generation's text, but not quite its generation path: on the cases both
  replays run, the continued one shows no raw text the parser left unread (a call to a
  recipient outside ``functions.``, a header cut short) where the forced one puts it in
  ``content`` (docs/engine-matrix.md lists the cases).

Streamed (``stream``), the forced replay asks for server-sent events and the reply is their
deltas accumulated as a client does. A continuation is not streamed: the server streams
only what follows its prefill (it diffs against it), which is no streamed generation.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ..format.tokens import ControlToken
from .interface import Adapter, Json, Unsupported
from .references import ReferenceUnavailable
from .views import STOP_IDS, Refused, reading_adapter

__all__ = ["ANALYSIS_HEADER", "EMPTY_ANALYSIS", "LlamaServer", "llamacpp_adapter"]

#: Where llama-server's environment lives: ``.engines/llama.cpp`` at the checkout's top.
_FOLDER = Path(__file__).resolve().parents[2] / ".engines" / "llama.cpp"
#: The header a continued replay opens with: the template's own for ``reasoning_content``.
ANALYSIS_HEADER = "<|channel|>analysis<|message|>"
#: An empty analysis message, before a continued generation that opens with another channel
#: (the template writes the same before a continued ``content``).
EMPTY_ANALYSIS = ANALYSIS_HEADER + "<|end|><|start|>assistant"
_CHANNEL = "<|channel|>"

Reader = Callable[[Json], Json]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _template() -> Path:
    from importlib import resources

    try:
        path = Path(str(resources.files("trl").joinpath("chat_templates/gptoss.jinja")))
    except ModuleNotFoundError:
        path = Path("/nonexistent")
    if not path.is_file():
        raise ReferenceUnavailable(
            "llama-server needs the model's chat template, which trl ships "
            "(pip install 'harmony-grammar[train]')"
        )
    return path


class LlamaServer:
    """A ``llama-server`` with the tiny gpt-oss and the model's chat template, started on a
    free port of 127.0.0.1 on first use in each process (so it dies with the runner's
    worker), stopped at exit."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or _FOLDER
        self.binary = self.folder / "bin" / "llama-server"
        self.model = self.folder / "tiny-gpt-oss.gguf"
        if not (self.binary.is_file() and self.model.is_file()):
            raise ReferenceUnavailable(
                f"no llama-server in {self.folder}: run scripts/engines/llama-server.sh"
            )
        self.template = _template()
        self.pid = -1
        self.url = ""
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        """The server's URL, starting it in this process when needed."""
        if self.process is not None and self.pid == os.getpid():
            return self.url
        port = _free_port()
        self.url, self.pid = f"http://127.0.0.1:{port}", os.getpid()
        command = [str(self.binary), "-m", str(self.model), "--host", "127.0.0.1"]
        command += ["--port", str(port), "-c", "8192", "-np", "1", "-t", "2"]
        command += ["--jinja", "--chat-template-file", str(self.template)]
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        atexit.register(self.stop)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        return self.url
            except (urllib.error.URLError, OSError):
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                tail = self.log.read().decode(errors="replace")[-500:]
                raise RuntimeError(f"llama-server did not start: {tail}")
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop the server this process started."""
        if self.process is not None and self.pid == os.getpid() and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
                self.process.kill()
                self.process.wait()
            self.log.close()

    def post(self, path: str, body: Json, timeout: float) -> tuple[int, Json]:
        """POST ``body`` as JSON; the status and the JSON answer (an HTTP error's too)."""
        request = urllib.request.Request(
            self.start() + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def post_stream(self, path: str, body: Json, timeout: float) -> tuple[int, list[Json]]:
        """POST ``body`` asking for server-sent events; the status and the events' JSON
        (an HTTP error's answer as the one event)."""
        request = urllib.request.Request(
            self.start() + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
        )
        events: list[Json] = []
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                for raw in answer:
                    line = raw.decode("utf-8").strip()
                    if line.startswith("data:") and line[5:].strip() != "[DONE]":
                        events.append(json.loads(line[5:]))
                    elif line.startswith("error:"):
                        events.append({"error": json.loads(line[6:])})
                return answer.status, events
        except urllib.error.HTTPError as error:
            return error.code, [json.loads(error.read() or b"{}")]

    def get(self, path: str) -> Json:
        """GET ``path``'s JSON answer."""
        with urllib.request.urlopen(self.start() + path, timeout=30) as answer:
            result: Json = json.loads(answer.read())
            return result


def _forcing_grammar(ids: list[int]) -> str:
    """GBNF that lets the model write exactly ``ids``, each named by id (llama.cpp PR #17816);
    it ends before the stop id (a grammar ending on one makes the server answer 500), and
    an exhausted grammar leaves the model nothing but an end-of-generation token."""
    return "root ::= " + " ".join(f"<[{token}]>" for token in ids)


def _forced_body(piece: Json, max_ids: int) -> Json:
    """The forced replay's request body, or Unsupported (empty, over the budget)."""
    ids = piece["tokens"]
    if not ids:
        raise Unsupported("an empty generation: nothing to force")
    if len(ids) > max_ids:
        raise Unsupported(f"not run: {len(ids)} ids, over the replay budget of {max_ids}")
    return {
        "messages": [{"role": "user", "content": "hi"}],
        "grammar": _forcing_grammar(ids),
        "temperature": 0,
        "max_tokens": len(ids) + 2,
    }


class _Continuation:
    """The continued replay's request bodies, each checked against the rendered prompt."""

    def __init__(self, server: LlamaServer) -> None:
        self.server = server
        self.prompts: dict[str, str] = {}  # the generation prompt, by the tools' JSON

    def _render(self, body: Json) -> str:
        status, answer = self.server.post("/apply-template", body, timeout=60)
        if status != 200:
            raise RuntimeError(f"/apply-template answered {status}: {answer}")
        return str(answer["prompt"])

    def body(self, piece: Json) -> Json:
        """The request continuing ``piece``'s generation, its rendering checked."""
        text = piece["text"]
        if text.startswith(ANALYSIS_HEADER):
            prefill, reasoning = text, text[len(ANALYSIS_HEADER) :]
        elif text.startswith(_CHANNEL):
            prefill = EMPTY_ANALYSIS + text
            reasoning = prefill[len(ANALYSIS_HEADER) :]
        else:
            raise Unsupported(
                "a continued replay (the one the server takes beside tools) renders a "
                "generation that opens with <|channel|>; this one does not"
            )
        tools = [
            {"type": "function", "function": {"name": t["name"], "parameters": t["parameters"]}}
            for t in piece["tools"]
        ]
        user = {"role": "user", "content": "hi"}
        key = json.dumps(tools, sort_keys=True)
        if key not in self.prompts:
            opening = {"messages": [user], "tools": tools, "add_generation_prompt": True}
            self.prompts[key] = self._render(opening)
        assistant = {"role": "assistant", "content": "", "reasoning_content": reasoning}
        body: Json = {
            "messages": [user, assistant],
            "tools": tools,
            "continue_final_message": "reasoning_content",
            "add_generation_prompt": False,
        }
        if self._render(body) != self.prompts[key] + prefill:
            raise Unsupported("the chat template renders the continued generation otherwise")
        stop = piece.get("stop") or ControlToken.RETURN.id
        return {**body, "temperature": 0, "max_tokens": 1, "logit_bias": [[stop, 100]]}


def _failed(status: int, answer: Json) -> None:
    """Raise what a non-200 answer means: a refusal (the parser's 500) or a broken replay."""
    message = str(answer.get("error", {}).get("message", answer))
    if status >= 500 and "grammar" in message:  # the replay failed, not the parsing
        raise RuntimeError(f"the forced replay failed: HTTP {status}: {message}")
    if status >= 500:
        raise Refused(f"HTTP {status}: {message}")
    raise RuntimeError(f"llama-server answered {status}: {answer}")


def _check_written(expected: int, usage: Json | None) -> None:
    written = (usage or {}).get("completion_tokens")
    if written not in (expected, expected + 1):  # + the end-of-generation token
        raise RuntimeError(f"the replay wrote {written} ids, not {expected}")


def _reply(message: Json) -> Json:
    return {
        "content": message.get("content"),
        "reasoning": message.get("reasoning_content"),
        "tool_calls": [
            {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
            for call in message.get("tool_calls") or []
        ],
    }


def _streamed(chunks: list[Json]) -> tuple[Json, Json | None]:
    """The message streamed ``chunks`` add up to, as a client accumulates them, and the
    usage; an error event is a refusal (or a broken replay, when it names the grammar)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, Json] = {}
    usage = None
    for chunk in chunks:
        if "error" in chunk:
            _failed(500, chunk)
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or "")
            for call in delta.get("tool_calls") or []:
                function = call.get("function") or {}
                known = calls.setdefault(call.get("index", 0), {"name": None, "arguments": ""})
                known["name"] = known["name"] or function.get("name")
                known["arguments"] += function.get("arguments") or ""
    message = {
        "content": "".join(content) or None,
        "reasoning_content": "".join(reasoning) or None,
        "tool_calls": [{"function": calls[index]} for index in sorted(calls)],
    }
    return message, usage


_SHARED: list[LlamaServer] = []


def _shared_server() -> LlamaServer:
    """One server for every column that names none (each process starts its own)."""
    if not _SHARED:
        _SHARED.append(LlamaServer())
    return _SHARED[0]


def llamacpp_adapter(
    server: LlamaServer | None = None,
    *,
    max_ids: int = 64,
    stream: bool = False,
    continued: bool = False,
) -> Adapter:
    """llama-server's own reply to each replayed generation (module docstring): forced
    (streamed with ``stream``), or continued with ``continued``."""
    if stream and continued:
        raise ValueError(
            "a continued replay streams only what follows its prefill (the server diffs "
            "against it): its deltas are no streamed generation"
        )
    server = server or _shared_server()
    continuation = _Continuation(server)

    def read(piece: Json) -> Json:
        if continued:
            body, written = continuation.body(piece), 1
        elif piece["tools"]:
            raise Unsupported(
                "llama-server refuses a forcing grammar beside declared tools (400 'Cannot use "
                "custom grammar constraints with tools.'): see llamacpp-continued"
            )
        else:
            body, written = _forced_body(piece, max_ids), len(piece["tokens"])
        timeout = 30 + 2.0 * written
        if stream:
            body.update(stream=True, stream_options={"include_usage": True})
            status, chunks = server.post_stream("/v1/chat/completions", body, timeout)
            if status != 200:
                _failed(status, chunks[0] if chunks else {})
            message, usage = _streamed(chunks)
        else:
            status, answer = server.post("/v1/chat/completions", body, timeout)
            if status != 200:
                _failed(status, answer)
            message, usage = answer["choices"][0]["message"], answer.get("usage")
        _check_written(written, usage)
        return _reply(message)

    # llama-server never writes an end-of-generation token into the text it parses.
    return reading_adapter(read, trimmed=STOP_IDS, feeds=("each id",) if stream else ())
