"""The validator's rule table: one small check per code, each documented once (docs/rules.md).

Theory of operation
-------------------
The parser has already reported everything about the envelope (HG1xx). A rule sees the parsed
messages through a :class:`RuleContext` (the messages, the declared channels and tools, and
whether the input is a completion) and yields :class:`Problem` objects that say only *which*
message is wrong and *what* is wrong, optionally narrowed to a range of its content. The
dispatcher (:func:`run_rules`) adds the code, the catalogue's severity and the position, the
way jsonschema's keyword functions yield errors and its validator adds their paths.

The tools a call is checked against come from ``tools=`` or, failing that, from the
transcript itself: the ``namespace functions`` of its developer message and the built-in
namespaces of its system message's ``# Tools`` section, read back by
:mod:`tools_from_typescript`. What is not declared anywhere is not judged: a completion
validated on its own cannot call an undeclared function, because nothing is declared.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..declarations.names import name_problem
from ..declarations.typescript import declared_namespaces, tools_from_typescript
from ..format.diagnostics import LineIndex, make_diagnostic
from ..format.model import Diagnostic, Message, Role, Terminator
from ..format.tokens import CONTROL_SPELLING_RE, ControlToken
from ..rendering.conversation import DEFAULT_CHANNELS
from ..safety.signals import SIGNAL_PATTERNS, LeakSignal
from ..tools.call_check import arguments_problem

__all__ = ["RULES", "Check", "Problem", "RuleContext", "run_rules"]

#: What a call to a tool declared without parameters (``() => any``) may carry.
_ANY_OBJECT: Mapping[str, Any] = {"type": "object"}
_FUNCTIONS = "functions"


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding of a check: the message's index and what is wrong.

    ``within`` narrows the position to ``(start, end)`` of the message's content; without it
    the diagnostic covers the whole message. ``code`` reports it under another code than
    the rule's (arguments beyond the JSON limits).
    """

    index: int
    message: str
    within: tuple[int, int] | None = None
    code: str | None = None  # another catalogued code than the rule's (HG182-HG184)


@dataclass(frozen=True)
class RuleContext:
    """What the rules know about one input.

    ``functions`` maps a declared function's name to its parameters schema, or is None when
    no function is declared anywhere (so none can be judged undeclared). ``namespaces`` maps
    each namespace of the system message's ``# Tools`` section to its tools' schemas (None for
    a prose-only namespace such as ``python``), or is None without a system message.
    """

    messages: tuple[Message, ...]
    completion: bool = False
    valid_channels: frozenset[str] = frozenset(DEFAULT_CHANNELS)
    functions: Mapping[str, Mapping[str, Any]] | None = None
    namespaces: Mapping[str, Mapping[str, Mapping[str, Any]] | None] | None = None
    #: Whether ``functions`` came from ``tools=`` (the host's list), not from the transcript.
    tools_given: bool = False

    @classmethod
    def of(
        cls,
        messages: Sequence[Message],
        *,
        tools: Mapping[str, Any] | None = None,
        completion: bool = False,
    ) -> RuleContext:
        """The context of parsed ``messages``; ``tools`` (``{name: schema}``) overrides the
        functions a developer message declares."""
        system = next((m for m in messages if m.role is Role.SYSTEM), None)
        developer = next((m for m in messages if m.role is Role.DEVELOPER), None)
        functions = tools
        if functions is None and developer is not None:
            functions = _functions_declared(developer.content)
        return cls(
            messages=tuple(messages),
            completion=completion,
            valid_channels=(
                _valid_channels(system.content) if system else frozenset(DEFAULT_CHANNELS)
            ),
            functions=functions,
            namespaces=_namespaces_declared(system.content) if system else None,
            tools_given=tools is not None,
        )


_VALID_CHANNELS = re.compile(r"^# Valid channels: (?P<names>[^\n]*?)\.(?: |$)", re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _valid_channels(system: str) -> frozenset[str]:
    match = _VALID_CHANNELS.search(system)
    if match is None:
        return frozenset(DEFAULT_CHANNELS)
    return frozenset(name.strip() for name in match.group("names").split(","))


# A dataset repeats the same system and developer messages in every record: read each once.
# The returned mappings are shared and must not be mutated.
@functools.lru_cache(maxsize=64)
def _functions_declared(developer: str) -> Mapping[str, Mapping[str, Any]]:
    tools = tools_from_typescript(developer, _FUNCTIONS) or ()
    return {tool.name: tool.parameters or _ANY_OBJECT for tool in tools}


@functools.lru_cache(maxsize=64)
def _namespaces_declared(system: str) -> Mapping[str, Mapping[str, Mapping[str, Any]] | None]:
    return {
        namespace.name: (
            None
            if namespace.tools is None
            else {tool.name: tool.parameters or _ANY_OBJECT for tool in namespace.tools}
        )
        for namespace in declared_namespaces(system)
    }


# ---------------------------------------------------------------------------------- helpers


def _calls(context: RuleContext) -> Iterator[tuple[int, Message]]:
    for index, message in enumerate(context.messages):
        if message.is_tool_call:
            yield index, message


def _is_preamble(message: Message) -> bool:
    return (
        message.role is Role.ASSISTANT
        and message.channel == "commentary"
        and message.recipient is None
    )


def _is_tool_result(message: Message) -> bool:
    """A message shaped as a tool's result: a tool author, or anyone but the assistant
    writing ``to=assistant``."""
    return message.role is Role.TOOL or (
        message.role is not Role.ASSISTANT and message.recipient == "assistant"
    )


_FENCE = re.compile(r"\A\s*(```|~~~)[^\n]*\n(?P<body>.*?)\n?\s*\1\s*\Z", re.DOTALL)


def _unfenced(content: str) -> str:
    """A call's arguments with Markdown fences removed (HG207 reports the fences)."""
    match = _FENCE.match(content)
    return match.group("body") if match else content


@dataclass(frozen=True, slots=True)
class _Target:
    """Where a recipient points: whether it is declared (None: cannot tell) and its schema."""

    declared: bool | None
    schema: Mapping[str, Any] | None = None
    why: str = ""


def _resolve(context: RuleContext, recipient: str) -> _Target:
    namespace, dot, name = recipient.partition(".")
    if namespace == _FUNCTIONS and dot:
        if context.functions is None:
            return _Target(None, _ANY_OBJECT)  # undeclared, but still one JSON object
        if name in context.functions:
            return _Target(True, context.functions[name])
        declared = ", ".join(sorted(context.functions)) or "none"
        return _Target(False, why=f"{name!r} is not a declared function ({declared})")
    if not dot and context.functions is not None and namespace in context.functions:
        return _Target(
            False, why=f"{recipient!r} lacks its namespace: did you mean 'functions.{namespace}'?"
        )
    if context.namespaces is None:
        return _Target(None)
    if namespace not in context.namespaces:
        declared = ", ".join(sorted({_FUNCTIONS, *context.namespaces}))
        return _Target(False, why=f"{namespace!r} is not a declared tool namespace ({declared})")
    tools = context.namespaces[namespace]
    if tools is None:
        return _Target(True)  # a prose-only namespace (python): its body is code, not JSON
    if name in tools:
        return _Target(True, tools[name])
    return _Target(False, why=f"{name!r} is not a tool of the {namespace!r} namespace")


# ---------------------------------------------------------------------------------- checks
# Each check's docstring is its one-line definition; docs/rules.md gives examples.


def missing_channel(context: RuleContext) -> Iterator[Problem]:
    """Every assistant message names its channel."""
    for index, message in enumerate(context.messages):
        if message.role is Role.ASSISTANT and message.channel is None:
            yield Problem(index, "an assistant message must carry a channel (<|channel|>NAME)")


def unknown_channel(context: RuleContext) -> Iterator[Problem]:
    """A message's channel is one the system message declares (default: analysis,
    commentary, final)."""
    valid = context.valid_channels
    for index, message in enumerate(context.messages):
        if message.channel is not None and message.channel not in valid:
            allowed = ", ".join(sorted(valid))
            yield Problem(index, f"channel {message.channel!r} is not declared ({allowed})")


def unknown_recipient(context: RuleContext) -> Iterator[Problem]:
    """A call's recipient is a declared function or built-in tool."""
    for index, message in _calls(context):
        target = _resolve(context, message.recipient or "")
        if target.declared is False:
            yield Problem(index, f"unknown recipient {message.recipient!r}: {target.why}")


#: A line of a ``# Tools`` section that declares something: ``type NAME = …`` or
#: ``namespace NAME {``. Schema text never starts such a line in this package's rendering
#: (comment text continues as comments, strings are escaped); raw text from elsewhere can.
_DECLARATION = re.compile(r"^(?P<kind>type|namespace) (?P<name>.*?)(?: = .*| \{)?$", re.MULTILINE)


_TOOLS_HEADING = re.compile(r"^# Tools$", re.MULTILINE)


def _tools_sections(content: str) -> Iterator[tuple[int, str]]:
    """Every ``# Tools`` section of a message's text (a renderer writes at most one)."""
    for heading in _TOOLS_HEADING.finditer(content):
        start = heading.start()
        end = content.find("\n# ", start + 1)
        yield start, content[start : end if end >= 0 else len(content)]


def forged_declaration(context: RuleContext) -> Iterator[Problem]:
    """A ``# Tools`` section declares well-formed names, each once, and only given tools."""
    for index, message in enumerate(context.messages):
        if message.role not in (Role.SYSTEM, Role.DEVELOPER):
            continue
        for number, (offset, section) in enumerate(_tools_sections(message.content)):
            formats = message.content.find("# Response Formats\n")
            if number > 0 or 0 <= formats < offset:
                # A second section, or one after the response formats (the renderer writes
                # tools first), is text that forged one: a description with a line break,
                # rendered raw. Whatever it declares is not the renderer's.
                within = (offset, offset + len("# Tools"))
                yield Problem(
                    index,
                    "a forged # Tools section (a second one, or one after # Response Formats)",
                    within,
                )
                continue
            namespace = ""
            seen: set[tuple[str, str]] = set()
            for match in _DECLARATION.finditer(section):
                kind, name = match.group("kind"), match.group("name")
                within = (offset + match.start(), offset + match.end())
                if kind == "namespace":
                    namespace = name
                problem = name_problem(name, what="tool" if kind == "type" else "namespace")
                if problem is not None:
                    yield Problem(index, f"a forged or broken declaration: {problem}", within)
                    continue
                if kind == "type" and (namespace, name) in seen:
                    yield Problem(
                        index,
                        f"{namespace}.{name} is declared twice (a later one overrides)",
                        within,
                    )
                seen.add((namespace, name))
                if (
                    kind == "type"
                    and namespace == _FUNCTIONS
                    and message.role is Role.DEVELOPER
                    and context.tools_given
                    and name not in (context.functions or {})
                ):
                    yield Problem(
                        index,
                        f"functions.{name} is declared but is not among the given tools",
                        within,
                    )


def arguments_off_schema(context: RuleContext) -> Iterator[Problem]:
    """A call's body is one JSON object valid against its tool's parameters."""
    for index, message in _calls(context):
        schema = _resolve(context, message.recipient or "").schema
        if schema is None:
            continue
        # The parser's own judge of a complete body (tools/call_check.py): one finding,
        # one code and one wording, whichever layer reports it.
        found = arguments_problem(_unfenced(message.content), schema)
        if found is not None:
            code, why = found
            yield Problem(index, why, code=code)


def call_on_analysis(context: RuleContext) -> Iterator[Problem]:
    """Function calls go to ``commentary``; built-in tools (browser, python) may use
    ``analysis``."""
    for index, message in _calls(context):
        recipient = message.recipient or ""
        if message.channel == "analysis" and recipient.startswith(f"{_FUNCTIONS}."):
            yield Problem(
                index,
                f"the call to {recipient!r} is on 'analysis'; function calls go to 'commentary'",
            )


def _tool_results(context: RuleContext, code: str) -> Iterator[Problem]:
    """The shared walk of the three result rules: pending calls, in order, answered by
    their tools. ``code`` selects which rule's problems to yield."""
    pending: list[tuple[int, str]] = []  # (message index, recipient), oldest first
    for index, message in enumerate(context.messages):
        if message.is_tool_call:
            pending.append((index, message.recipient or ""))
        elif _is_tool_result(message):
            author = message.author
            if message.role is not Role.TOOL or author == "tool":
                if code == "HG205":
                    yield Problem(
                        index,
                        f"a tool result from {author!r}: a result's author is the tool"
                        " that was called (functions.NAME, browser.NAME, python)",
                    )
                if pending:
                    pending.pop(0)  # it stands in for the oldest call's result
                continue
            waiting = [recipient for _, recipient in pending]
            if waiting and waiting[0] == author:
                pending.pop(0)
            elif author in waiting:
                if code == "HG204":
                    yield Problem(
                        index,
                        f"the result from {author!r} arrived before the result of the"
                        f" earlier call to {waiting[0]!r}; results come in call order",
                    )
                del pending[waiting.index(author)]
            elif code == "HG203":
                what = f"pending: {', '.join(waiting)}" if waiting else "no call is pending"
                yield Problem(index, f"a result from {author!r} answers no call ({what})")
        elif message.role is not Role.ASSISTANT or message.channel == "final":
            if code == "HG206":
                for call_index, recipient in pending:
                    yield Problem(
                        call_index,
                        f"the call to {recipient!r} got no result before the next"
                        f" {message.role.value} message"
                        + (" on 'final'" if message.role is Role.ASSISTANT else ""),
                    )
            pending.clear()


def result_without_call(context: RuleContext) -> Iterator[Problem]:
    """A tool result answers a pending call of the assistant."""
    return _tool_results(context, "HG203")


def result_out_of_order(context: RuleContext) -> Iterator[Problem]:
    """Results of several pending calls arrive in the order of the calls."""
    return _tool_results(context, "HG204")


def result_from_role(context: RuleContext) -> Iterator[Problem]:
    """A tool result is authored by the tool itself, never by a role or the literal
    ``tool``."""
    return _tool_results(context, "HG205")


def unanswered_call(context: RuleContext) -> Iterator[Problem]:
    """A call is answered before a user, system or developer message, or a final answer."""
    return _tool_results(context, "HG206")


def fenced_call(context: RuleContext) -> Iterator[Problem]:
    """A call's arguments are not wrapped in Markdown fences."""
    for index, message in _calls(context):
        if _FENCE.match(message.content):
            yield Problem(index, "the arguments are wrapped in a Markdown code fence")


_HTML_ENTITY = re.compile(r"&(?:quot|amp|lt|gt|apos|nbsp|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")


def html_entities(context: RuleContext) -> Iterator[Problem]:
    """JSON arguments use JSON escaping only, never HTML entities."""
    for index, message in _calls(context):
        if _resolve(context, message.recipient or "").schema is None:
            continue  # not a JSON body (python code may well contain "&amp;")
        match = _HTML_ENTITY.search(message.content)
        if match is not None:
            yield Problem(
                index,
                f"HTML entity {match.group()!r} in JSON arguments; write the character"
                " (JSON escaping only)",
                match.span(),
            )


_RESERVED = next(p for p in SIGNAL_PATTERNS if p.signal is LeakSignal.CONTROL_TOKEN)


def reserved_spelling(context: RuleContext) -> Iterator[Problem]:
    """Content does not spell a special token (``<|endoftext|>``, ``<|reserved_200010|>``).

    Structural spellings (``<|start|>`` & co.) never reach content from text input, and from
    token ids they are the parser's HG110; this rule reports the rest.
    """
    for index, message in enumerate(context.messages):
        if "<|" not in message.content:
            continue
        for match in _RESERVED.regex.finditer(message.content):
            spelling = match.group()
            if _RESERVED.accept(match) is None or CONTROL_SPELLING_RE.fullmatch(spelling):
                continue
            yield Problem(
                index,
                f"content spells the special token {spelling}; a tokenizer that allows"
                " special tokens turns it into one",
                match.span(),
            )


def preamble_not_ended(context: RuleContext) -> Iterator[Problem]:
    """A ``commentary`` preamble (no recipient) ends with ``<|end|>``: never announce a call
    and stop."""
    for index, message in enumerate(context.messages):
        if _is_preamble(message) and message.terminator in (Terminator.CALL, Terminator.RETURN):
            yield Problem(
                index,
                f"a commentary preamble ended with <|{message.terminator.value}|>; it ends"
                " with <|end|> and the call follows as its own message",
            )


def misplaced_return(context: RuleContext) -> Iterator[Problem]:
    """``<|return|>`` ends only the last message, an assistant ``final`` one; in stored
    history it is normalised to ``<|end|>``."""
    last = len(context.messages) - 1
    for index, message in enumerate(context.messages):
        if message.terminator is not Terminator.RETURN or _is_preamble(message):
            continue
        if message.is_tool_call:
            continue  # the parser's HG153
        if index != last:
            yield Problem(index, "<|return|> in history; stored history ends messages with <|end|>")
        elif message.role is not Role.ASSISTANT or message.channel != "final":
            where = f"on {message.channel!r}" if message.channel else f"from {message.author!r}"
            yield Problem(index, f"<|return|> {where}; it ends only an assistant's final answer")


def dropped_analysis(context: RuleContext) -> Iterator[Problem]:
    """Mid tool loop, the chain of thought next to the pending calls is kept in history."""
    messages = context.messages
    if context.completion:
        return
    last_assistant = next((m for m in reversed(messages) if m.role is Role.ASSISTANT), None)
    if last_assistant is None or not last_assistant.is_tool_call:
        return  # after a final answer, dropping earlier analysis is the format's own rule
    turn = max(
        (i for i, m in enumerate(messages) if m.role in (Role.SYSTEM, Role.DEVELOPER, Role.USER)),
        default=-1,
    )
    analysis, first_call = False, None
    for index in range(turn + 1, len(messages)):
        message = messages[index]
        if message.role is not Role.ASSISTANT:  # a tool result ends a run of the assistant
            if first_call is not None and not analysis:
                yield _dropped(first_call, messages[first_call])
            analysis, first_call = False, None
            continue
        # A call on analysis (a built-in's) counts: a renderer dropping analysis drops it too.
        analysis = analysis or message.channel == "analysis"
        if message.is_tool_call and first_call is None:
            first_call = index
    if first_call is not None and not analysis:
        yield _dropped(first_call, messages[first_call])


def _dropped(index: int, message: Message) -> Problem:
    return Problem(
        index,
        f"no analysis precedes the pending call to {message.recipient!r}; mid tool loop"
        " the chain of thought must be kept in history",
    )


def call_token_without_call(context: RuleContext) -> Iterator[Problem]:
    """``<|call|>`` ends only a tool call (a message with a recipient)."""
    for index, message in enumerate(context.messages):
        if (
            message.terminator is Terminator.CALL
            and not message.is_tool_call
            and not _is_preamble(message)
        ):
            yield Problem(
                index,
                f"{ControlToken.CALL.value} ended a message with no recipient; only a"
                " tool call ends so",
            )


#: A check: the problems one rule finds in a context.
Check = Callable[[RuleContext], Iterator[Problem]]

#: The rule table, ``code -> check``. HG180/HG181 share their codes with the parser's checks
#: under ``tools=``: one concept, one code.
RULES: dict[str, Check] = {
    "HG180": arguments_off_schema,
    "HG181": unknown_recipient,
    "HG200": missing_channel,
    "HG201": unknown_channel,
    "HG202": call_on_analysis,
    "HG203": result_without_call,
    "HG204": result_out_of_order,
    "HG205": result_from_role,
    "HG206": unanswered_call,
    "HG207": fenced_call,
    "HG208": html_entities,
    "HG209": reserved_spelling,
    "HG210": preamble_not_ended,
    "HG211": misplaced_return,
    "HG212": dropped_analysis,
    "HG213": call_token_without_call,
    "HG214": forged_declaration,
}


def _content_start(message: Message) -> int | None:
    """Where the content of a message parsed from text starts (it ends at the terminator)."""
    if message.span is None:
        return None
    terminator = len(f"<|{message.terminator.value}|>") if message.terminator else 0
    return message.span.end - terminator - len(message.content)


def run_rules(
    context: RuleContext, *, lines: LineIndex | None = None, rules: Mapping[str, Check] = RULES
) -> list[Diagnostic]:
    """Every problem the ``rules`` find, as diagnostics in rule order.

    ``lines`` is the line index of a text input: it gives line and column, and lets a problem
    narrow its position to a range of content. Without it (token ids) a problem covers its
    message's token range.
    """
    diagnostics: list[Diagnostic] = []
    for code, check in rules.items():
        for problem in check(context):
            message = context.messages[problem.index]
            span = message.span
            start, end = (span.start, span.end) if span else (0, 0)
            content_start = _content_start(message) if lines is not None else None
            if problem.within is not None and content_start is not None:
                start, end = content_start + problem.within[0], content_start + problem.within[1]
            diagnostics.append(
                make_diagnostic(problem.code or code, problem.message, start, end, lines=lines)
            )
    return diagnostics
