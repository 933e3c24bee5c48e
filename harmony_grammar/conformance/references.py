"""The references the rendering profiles are measured against, as conformance adapters.

* ``oss-harmony`` (:func:`oss_harmony_adapter`): oss-harmony 0.0.11 installs the same
  ``openai_harmony`` module as openai-harmony 0.0.8, so it cannot be imported here. It runs in
  an environment of its own (``.venv-oss-harmony`` at the checkout's top, or the python that
  ``HARMONY_GRAMMAR_OSS_PYTHON`` names), as a subprocess speaking one JSON line per request
  (:func:`harmony_grammar.conformance.oracle.serve`).
* ``hf-chat-template`` (:func:`hf_template_adapter`): the model repo's chat template as TRL
  ships it (``trl/chat_templates/gptoss.jinja``), through transformers'
  ``apply_chat_template`` with ``strftime_now`` pinned to the conversation's date. Its text is
  encoded as a tokenizer encodes a template's output: control-token spellings become their
  ids, the text between them is one run (:func:`hf_template_inputs` says how a conversation
  becomes the template's messages).

Each answers only the render requests for its own profile (``"profile"`` in the request) and
raises :class:`ReferenceUnavailable` when what it needs is not installed.
"""

from __future__ import annotations

import atexit
import datetime
import functools
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..base.errors import HarmonyGrammarError
from ..format.model import Message, Role
from ..rendering.conversation import Conversation, DeveloperContent, SystemContent
from ..rendering.renderer import encode_text
from .interface import Adapter, Json, Unsupported
from .requests import render_request, requested_profile

__all__ = [
    "OSS_PYTHON_VARIABLE",
    "LineProcess",
    "ReferenceUnavailable",
    "hf_template_adapter",
    "hf_template_inputs",
    "hf_template_text",
    "oss_harmony_adapter",
    "oss_harmony_process",
    "oss_harmony_python",
]

#: The environment variable naming the python of oss-harmony's own environment.
OSS_PYTHON_VARIABLE = "HARMONY_GRAMMAR_OSS_PYTHON"
_OSS_PROFILE = "oss-harmony-0.0.11"
_HF_PROFILE = "hf-chat-template"
_OSS_SETUP = "scripts/oss-harmony-venv.sh (or set HARMONY_GRAMMAR_OSS_PYTHON)"


class ReferenceUnavailable(HarmonyGrammarError, RuntimeError):
    """A reference renderer that is not installed here; the message says how to get it."""


# -- oss-harmony, in its own environment ---------------------------------------------------


def oss_harmony_python() -> Path:
    """The python of oss-harmony's environment; raises ReferenceUnavailable when absent."""
    named = os.environ.get(OSS_PYTHON_VARIABLE)
    checkout = Path(__file__).resolve().parents[2]
    python = Path(named) if named else checkout / ".venv-oss-harmony" / "bin" / "python"
    if not python.is_file():
        raise ReferenceUnavailable(f"oss-harmony 0.0.11 is not installed at {python}: {_OSS_SETUP}")
    return python


class LineProcess:
    """One long-lived subprocess speaking JSON lines: a request per line, an answer per line.

    The protocol is :func:`harmony_grammar.conformance.oracle.serve`'s: a first line
    ``{"profile": ...}`` (checked to start with ``profile``), then ``{"response": ...}``,
    ``{"unsupported": why}`` (raised as :class:`~.interface.Unsupported`) or ``{"error":
    why}`` (raised as RuntimeError) for each request. What the process writes to stderr goes
    to a temporary file (a pipe nobody reads would fill and stall it), whose last line says
    why when it stops. ``hint`` says how to install what is missing.
    """

    def __init__(
        self, command: list[str], *, profile: str, hint: str, env: dict[str, str] | None = None
    ) -> None:
        self.name = profile.rstrip("-")
        # Closed by close(), which atexit also calls.
        self.log = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            encoding="utf-8",
            env={**os.environ, **(env or {})},
        )
        hello = self._read()
        if not str(hello.get("profile", "")).startswith(profile):
            self.close()
            raise ReferenceUnavailable(
                f"{command[0]} runs {hello.get('profile')!r}, not {profile}: {hint}"
            )
        self.profile = str(hello["profile"])
        atexit.register(self.close)

    def _read(self) -> Json:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.log.seek(0)
            why = self.log.read().strip().splitlines()
            raise ReferenceUnavailable(
                f"the {self.name} subprocess stopped: {why[-1] if why else 'no output'}"
            )
        answer: Json = json.loads(line)
        return answer

    def __call__(self, request: Json) -> Json:
        """The answer to one request (see the class docstring for what is raised)."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self.process.stdin.flush()
        answer = self._read()
        if "unsupported" in answer:
            raise Unsupported(answer["unsupported"])
        if "error" in answer:
            raise RuntimeError(f"{self.name}: {answer['error']}")
        response: Json = answer["response"]
        return response

    def close(self) -> None:
        """End the subprocess (it exits at the end of its input)."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung child
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stdin):
            if stream is not None and not stream.closed:
                stream.close()
        self.log.close()


def oss_harmony_process() -> LineProcess:
    """A fresh subprocess answering every request with oss-harmony 0.0.11
    (:func:`harmony_grammar.conformance.oracle.serve` in its own environment)."""
    package_root = str(Path(__file__).resolve().parents[2])
    return LineProcess(
        [
            str(oss_harmony_python()),
            "-c",
            "from harmony_grammar.conformance.oracle import serve; serve()",
        ],
        profile=_OSS_PROFILE,
        hint=_OSS_SETUP,
        env={"PYTHONPATH": package_root},
    )


@functools.cache
def oss_harmony_adapter() -> Adapter:
    """oss-harmony 0.0.11 as an adapter, in its own environment (one subprocess, kept); it
    answers the render requests for its own profile."""
    process = oss_harmony_process()

    def adapter(request: Json) -> Json:
        requested_profile(request, _OSS_PROFILE)
        return process(request)

    return adapter


# -- the HF chat template --------------------------------------------------------------


def _chat_tool(tool: Any) -> Json:
    function: Json = {"name": tool.name, "description": tool.description}
    if tool.parameters is not None:
        function["parameters"] = dict(tool.parameters)
    return {"type": "function", "function": function}


def hf_template_inputs(conversation: Conversation) -> tuple[list[Json], Json]:
    """The template's ``messages`` and keyword arguments for a conversation, mapped plainly.

    A system content gives ``model_identity``, ``reasoning_effort``, ``builtin_tools`` and the
    date (``strftime_now`` is pinned to it); a developer content the first message
    (``developer``, its instructions) and ``tools``. Consecutive assistant messages become
    chat messages as :func:`~harmony_grammar.rendering.chat.from_chat_completions` reads them
    back: analysis → ``thinking``, a commentary preamble or a final → ``content``, the calls
    that follow them → ``tool_calls`` (arguments parsed, as transformers expects); a final
    closes the message, and so does a text that cannot follow in it (a second thinking or
    content, or any text after a call). Nothing is checked here: the template decides what it
    renders.
    """
    messages: list[Json] = []
    options: Json = {}
    current: Json = {}

    def close() -> None:
        nonlocal current
        if current:
            messages.append({"role": "assistant", **current})
            current = {}

    for item in conversation.messages:
        if isinstance(item, SystemContent):
            options["model_identity"] = item.model_identity
            if item.reasoning_effort is not None:
                options["reasoning_effort"] = item.reasoning_effort.value
            if item.tools:
                options["builtin_tools"] = [namespace.name for namespace in item.tools]
            options["date"] = item.conversation_start_date
        elif isinstance(item, DeveloperContent):
            if item.instructions:
                messages.append({"role": "developer", "content": item.instructions})
            if item.tools:
                options["tools"] = [_chat_tool(tool) for tool in item.tools]
        elif item.role is Role.ASSISTANT:
            # A chat message holds its thinking, then its content, then its calls: a message
            # that cannot follow in the same one starts the next.
            field = "thinking" if item.channel == "analysis" else "content"
            if item.recipient is None and ("tool_calls" in current or field in current):
                close()
            if item.recipient is not None:
                name = item.recipient.removeprefix("functions.")
                call = {"type": "function", "function": {"name": name, "arguments": _json(item)}}
                current.setdefault("tool_calls", []).append(call)
            else:
                current[field] = item.content
                if item.channel == "final":
                    close()
        else:
            close()
            messages.append({"role": item.role.value, "content": item.content})
    close()
    return messages, options


def _json(message: Message) -> Any:
    try:
        return json.loads(message.content)
    except ValueError:
        return message.content


@functools.cache
def _template() -> tuple[Any, str]:
    try:
        from importlib import resources

        from tokenizers import Tokenizer, models
        from transformers import PreTrainedTokenizerFast

        template = resources.files("trl").joinpath("chat_templates/gptoss.jinja").read_text()
    except (ImportError, FileNotFoundError, ModuleNotFoundError) as exc:
        raise ReferenceUnavailable(
            f"the HF chat template needs transformers and trl (pip install "
            f"'harmony-grammar[train]'): {exc}"
        ) from None
    # apply_chat_template needs a tokenizer object; it is only asked for text here, and a
    # one-word vocabulary is enough for that (the ids come from o200k_harmony below).
    vocabulary = Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=vocabulary)  # type: ignore[no-untyped-call]
    return tokenizer, template


def _pinned_clock(day: datetime.datetime) -> type[datetime.datetime]:
    class Pinned(datetime.datetime):
        """``datetime`` whose ``now()`` is the conversation's date: strftime_now pinned."""

        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> Pinned:
            return cls(day.year, day.month, day.day, tzinfo=tz)

    return Pinned


def hf_template_text(conversation: Conversation, next_turn: str | None = None) -> str:
    """The template's text for a conversation (a generation prompt when ``next_turn``)."""
    from unittest import mock

    from transformers.utils import chat_template_utils

    tokenizer, template = _template()
    messages, options = hf_template_inputs(conversation)
    date = options.pop("date", None) or datetime.date.today().strftime("%Y-%m-%d")
    clock = _pinned_clock(datetime.datetime.strptime(date, "%Y-%m-%d"))
    # The template's strftime_now reads the module's datetime.now() (a template variable of
    # that name is not passed through): the clock is pinned there, for this call only.
    with mock.patch.object(chat_template_utils, "datetime", clock):
        text: str = tokenizer.apply_chat_template(
            messages,
            chat_template=template,
            tokenize=False,
            add_generation_prompt=next_turn is not None,
            **options,
        )
    return text


@functools.cache
def hf_template_adapter() -> Adapter:
    """The HF chat template as an adapter (see the module docstring)."""
    _template()  # fail now, with the install hint, when transformers or trl is missing
    from ..format.vocabulary import load_encoding

    encoding = load_encoding()

    def adapter(request: Json) -> Json:
        if request["kind"] != "render":
            raise Unsupported("a chat template only renders")
        requested_profile(request, _HF_PROFILE)
        conversation, options = render_request(request)
        text = hf_template_text(conversation, options.turn)
        return {"text": text, "tokens": encode_text(encoding, text, trusted=True)}

    return adapter
