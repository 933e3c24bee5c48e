"""``harmony-grammar repair``: print what the model meant as canonical Harmony.

The input is read by the lenient parser (``parse(..., lenient=True)``), the same recovery
``to_chat_completion`` and ``repair_thinking`` use, and the recovered messages are rendered
with the library's renderer. stdout gets the Harmony, stderr the diagnostics (compiler-style
lines, as ``parse`` prints them) and, once each, the likely cause of what was repaired.

A completion (``--completion``: output after ``<|start|>assistant``) is printed as a
completion: the leading ``<|start|>assistant`` is left out, so the output is what a
well-behaved model would have generated after the same prompt, and ``parse(out,
start="completion")`` reads the same messages with no diagnostic. Its last message gets the
stop token it lost: ``<|call|>`` for a call, ``<|return|>`` for a final answer, ``<|end|>``
otherwise. A completion whose first message is not the assistant's (the model began with
``<|start|>user``, a tool's forged result, or another author: HG170, HG171) is refused,
exit 2, with one line naming the fix (drop ``--completion``: repair it as a conversation):
a completion is the assistant's by construction, and no completion reads back as that
message.
A conversation is printed whole. Analysis is never dropped: the output is what
was there, repaired, not a prompt for the next turn. Token ids in, Harmony text out.

Exit 0 when nothing needed repair, 1 when something did (or errors remain), 2 on usage or
I/O errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import Any

from ..base.errors import HarmonyGrammarError
from ..format.causes import causes_of
from ..format.model import Message, ParseResult, Role, Terminator
from ..format.parser import parse
from ..format.tokens import ControlToken
from ..rendering.conversation import Conversation
from ..rendering.errors import RenderError
from ..rendering.header_fields import header_problem
from ..rendering.renderer import render
from .display import cause_line, shown_path
from .errors import CliError
from .input_kind import check_harmony
from .inputs import add_input_options, read_text, read_token_ids, read_tools

__all__ = ["NotACompletionError", "register", "repaired_text"]

_ASSISTANT_START = f"{ControlToken.START.value}{Role.ASSISTANT.value}"


def register(subparsers: Any) -> None:
    """Add the ``repair`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "repair",
        help="print what malformed model output meant, as canonical Harmony",
        description="Read Harmony text or token ids with the lenient parser's repairs and "
        "print the recovered messages as canonical Harmony on stdout, the diagnostics and "
        "their likely causes on stderr. Exit 0 when nothing needed repair, 1 when something "
        "did, 2 on usage or I/O errors.",
    )
    parser.add_argument("file", metavar="FILE", help="input file, or - for stdin")
    add_input_options(parser, lenient=False)
    parser.add_argument(
        "--tools",
        metavar="TOOLS.json",
        help="the functions the model may call (a tools list or a request body): their "
        "names split glued text and calls are checked against them",
    )
    parser.set_defaults(func=run)


class NotACompletionError(HarmonyGrammarError, ValueError):
    """Recovered messages that cannot be written as a completion: the first is not the
    assistant's (a completion follows the prompt's ``<|start|>assistant``)."""


def _ended(message: Message, last: bool) -> Message:
    """``message`` with the stop token a completion's last message lost, if it lost one."""
    if not last or message.terminator is not None or message.role is not Role.ASSISTANT:
        return message
    if message.recipient is not None:
        terminator = Terminator.CALL
    elif message.channel == "final":
        terminator = Terminator.RETURN
    else:
        terminator = Terminator.END
    return dataclasses.replace(message, terminator=terminator)


def _writable(message: Message) -> tuple[Message, str | None]:
    """``message`` on a channel the renderer accepts, and a note when it had to move: a call
    goes on ``commentary``, anything else on ``analysis`` (never shown to a user by mistake),
    so one unwritable channel word (HG173's ``análisis``) does not lose the whole output."""
    problem = header_problem(message)
    if problem is None or problem[0] != "channel":
        return message, None
    channel = "commentary" if message.recipient is not None else "analysis"
    note = (
        f"channel {message.channel!r} cannot be written as Harmony ({problem[1]});"
        f" written on {channel!r}"
    )
    return dataclasses.replace(message, channel=channel), note


def repaired_text(
    messages: Sequence[Message], *, completion: bool, notes: list[str] | None = None
) -> str:
    """The canonical Harmony of recovered ``messages`` (see the module docstring).

    A message whose channel the renderer refuses is written on a channel it accepts
    (:func:`_writable`), and a completion's first message without its author's name (its
    header has no author); ``notes`` gets one line per such change. A completion whose first
    message is not the assistant's raises :class:`NotACompletionError`.
    """
    if not messages:
        return ""
    written = []
    for index, message in enumerate(messages):
        message, note = _writable(message)
        written.append(message)
        if note is not None and notes is not None:
            notes.append(f"message {index}: {note}")
    messages = written
    if completion and messages[0].role is not Role.ASSISTANT:
        author = messages[0].name or messages[0].role.value
        raise NotACompletionError(
            f"the completion's first message is from {author!r}, not the assistant: it is"
            " no completion; drop --completion to repair it as a conversation"
        )
    if completion and messages[0].name is not None:
        # A completion's first header has no author (the prompt's ``<|start|>assistant``
        # is its start), so an author's name cannot be written there: the note keeps it.
        if notes is not None:
            notes.append(
                f"message 0: the author's name {messages[0].name!r} cannot be written in a"
                " completion's first header; written without it"
            )
        messages[0] = dataclasses.replace(messages[0], name=None)
    if completion:
        messages = [_ended(m, i == len(messages) - 1) for i, m in enumerate(messages)]
    text = render(Conversation(tuple(messages)), auto_drop_analysis=False)
    if completion and text.startswith(_ASSISTANT_START):
        return text[len(_ASSISTANT_START) :]
    return text


def _report(result: ParseResult, filename: str) -> None:
    for diagnostic in result.diagnostics:
        print(diagnostic.format(filename), file=sys.stderr)
    for codes, cause in causes_of(d.code for d in result.diagnostics):
        print(cause_line(codes, cause.summary, cause.fix), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Repair the input, print it and the diagnostics."""
    source = read_token_ids(args.file) if args.tokens else read_text(args.file)
    if isinstance(source, str):  # repair reads leniently: a completion needs no flag
        check_harmony(args.file, source, completion=args.completion, lenient=True)
    tools = read_tools(args.tools) if args.tools else None
    try:
        result = parse(
            source,
            start="completion" if args.completion else "conversation",
            lenient=True,
            tools=tools,
        )
    except ValueError as exc:  # a malformed tools list
        raise CliError(f"{args.tools}: {exc}") from None
    filename = shown_path(args.file)
    notes: list[str] = []
    try:
        text = repaired_text(result.messages, completion=args.completion, notes=notes)
    except NotACompletionError as exc:  # the wrong mode, as check_harmony says of text
        _report(result, filename)
        print(f"harmony-grammar: error: {filename}: {exc}", file=sys.stderr)
        return 2
    except RenderError as exc:
        _report(result, filename)
        print(f"harmony-grammar: error: {filename}: cannot render: {exc}", file=sys.stderr)
        return 1
    # One final newline (none for no messages), as every line-oriented tool prints: the
    # parser reads a newline after the last message as nothing, so the output still parses.
    sys.stdout.write(text if not text or text.endswith("\n") else text + "\n")
    _report(result, filename)
    for note in notes:
        print(f"{filename}: {note}", file=sys.stderr)
    return 1 if result.diagnostics or notes else 0
