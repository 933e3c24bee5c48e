"""Rendering a conversation to Harmony text or token ids, exactly as openai-harmony 0.0.8 does.

Theory of operation. Rendering is three small steps, each a function here:

1. :func:`rendered_messages` resolves the conversation into the messages that will be written:
   structured system/developer contents become their text, chain-of-thought is dropped by the
   chosen rule, every terminator is decided. The result is what ``parse`` gives back.
2. :func:`message_pieces` turns one message into pieces: a :class:`ControlToken` or a run of
   ordinary text. The piece boundaries are openai-harmony's (``user`` and ``:alice`` are two
   pieces, the channel name is one), because BPE merges never cross them.
3. Text output joins the pieces; token output maps a control token to its special id and
   encodes each text piece with :func:`encode_text`, the single place that turns text into ids.

Text that spells a control token (``"<|end|>"`` typed by a user) is ordinary text, never a
special id, exactly as openai-harmony's ``encode_ordinary`` does it; in ``str`` output it reads
the same as a real token, so use ``tokens=True`` to feed a model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

from ..declarations.names import MAX_HEADER_LENGTH
from ..declarations.spec import ToolNamespace
from ..format.bounded_encode import encode_bounded
from ..format.model import Message, RecipientPosition, Role, Terminator
from ..format.tokens import CONTROL_SPELLINGS, ControlToken
from ..safety.escaping import encode_untrusted
from .conversation import (
    Conversation,
    ConversationItem,
    DeveloperContent,
    ResponseFormat,
    SystemContent,
)
from .errors import RenderError
from .header_fields import header_problem
from .options import DropRule, RenderKeywords, RenderOptions
from .request_body import read_request
from .typescript import response_format_text, tools_section

if TYPE_CHECKING:
    import tiktoken
    from typing_extensions import Unpack

__all__ = [
    "DropRule",
    "Piece",
    "RenderOptions",
    "developer_text",
    "encode_text",
    "message_pieces",
    "render",
    "rendered_messages",
    "rendered_pieces",
    "system_text",
    "text_of",
    "token_ids",
]

#: One rendered piece: a control token, or a run of ordinary text encoded on its own.
Piece: TypeAlias = ControlToken | str

_TERMINATOR_TOKENS = {
    Terminator.END: ControlToken.END,
    Terminator.CALL: ControlToken.CALL,
    Terminator.RETURN: ControlToken.RETURN,
}
_ROUTING_LINE = "Calls to these tools must go to the commentary channel: 'functions'."
_CONSTRAIN = ControlToken.CONSTRAIN.value


def encode_text(encoding: tiktoken.Encoding, text: str, *, trusted: bool = False) -> list[int]:
    """Token ids for one run of text: never a special id, whatever the text spells.

    This is the only place the renderer turns text into ids. Text is untrusted by default
    (:func:`~harmony_grammar.safety.escaping.encode_untrusted`); ``trusted=True`` is the explicit
    opt-out for text that embeds Harmony on purpose: its control-token spellings become
    their special ids.
    """
    if trusted:
        return encode_bounded(encoding, text, allowed_special=CONTROL_SPELLINGS)
    return encode_untrusted(text, encoding)


# -- structured contents -----------------------------------------------------------------


def system_text(content: SystemContent, *, has_function_tools: bool = False) -> str:
    """The text of a structured system message.

    ``has_function_tools`` adds the line routing function calls to ``commentary``;
    :func:`render` sets it when any developer message declares function tools.
    """
    sections: list[str] = []
    top = [
        line
        for line in (
            content.model_identity,
            _labelled("Knowledge cutoff", content.knowledge_cutoff),
            _labelled("Current date", content.conversation_start_date),
        )
        if line is not None
    ]
    if top:
        sections.append("\n".join(top))
    if content.reasoning_effort is not None:
        sections.append(f"Reasoning: {content.reasoning_effort.value}")
    if content.tools:
        sections.append(tools_section(content.tools))
    if content.valid_channels:
        header = f"# Valid channels: {', '.join(content.valid_channels)}."
        if content.channel_required:
            header += " Channel must be included for every message."
        if has_function_tools:
            header += f"\n{_ROUTING_LINE}"
        sections.append(header)
    return "\n\n".join(sections)


def _labelled(label: str, value: str | None) -> str | None:
    return None if value is None else f"{label}: {value}"


def _response_formats_section(formats: Sequence[ResponseFormat]) -> str:
    # Through the same escaping as the tools' text (rendering/typescript.py): a name is checked
    # as a tool name is, a description is comment lines, the schema is JSON.
    blocks = ["# Response Formats"]
    blocks += [response_format_text(fmt.name, fmt.description, fmt.schema) for fmt in formats]
    return "\n\n".join(blocks)


def developer_text(content: DeveloperContent) -> str:
    """The text of a structured developer message: instructions, tools, response formats."""
    sections: list[str] = []
    if content.instructions is not None:
        sections += ["# Instructions", content.instructions]
    namespaces = list(content.namespaces)
    if content.tools:
        namespaces.append(ToolNamespace("functions", None, content.tools))
    if namespaces:
        sections.append(tools_section(namespaces))
    if content.response_formats:
        sections.append(_response_formats_section(content.response_formats))
    return "\n\n".join(sections)


# -- step 1: the messages to write -------------------------------------------------------


def _channel(item: ConversationItem) -> str | None:
    return item.channel if isinstance(item, Message) else None


def _is_assistant(item: ConversationItem) -> bool:
    return isinstance(item, Message) and item.role is Role.ASSISTANT


def _dropped(items: Sequence[ConversationItem], rule: DropRule) -> set[int]:
    """Indexes of the analysis messages the rule drops."""
    last_assistant = next((m for m in reversed(items) if _is_assistant(m)), None)
    if rule is DropRule.HARMONY:
        # openai-harmony: only when the last assistant message is final, and then only what
        # precedes the first message (of any role) on the final channel.
        if last_assistant is None or _channel(last_assistant) != "final":
            return set()
        limit = next((i for i, m in enumerate(items) if _channel(m) == "final"), 0)
    else:
        finals = [i for i, m in enumerate(items) if _is_assistant(m) and _channel(m) == "final"]
        limit = finals[-1] if finals else 0
    return {i for i in range(limit) if _channel(items[i]) == "analysis"}


def _terminator(message: Message, *, is_last: bool, training: bool, next_turn: bool) -> Terminator:
    if is_last and training and message.role is Role.ASSISTANT and message.channel == "final":
        return Terminator.RETURN
    if message.terminator is Terminator.RETURN:
        # <|return|> is a stop token: history keeps <|end|> (harmony-format.md §2). Only the
        # last message of a conversation rendered as is keeps it, so parsed text round-trips.
        return Terminator.RETURN if is_last and not next_turn else Terminator.END
    if message.terminator is not None:
        return message.terminator
    # openai-harmony: an assistant message with any recipient is a call.
    if message.role is Role.ASSISTANT and message.recipient is not None:
        return Terminator.CALL
    return Terminator.END


def _content_type(content_type: str | None, json_content_type: str | None) -> str | None:
    if json_content_type == "constrain" and content_type == "json":
        return f"{_CONSTRAIN}json"
    if json_content_type == "bare" and content_type == f"{_CONSTRAIN}json":
        return "json"
    return content_type


def rendered_messages(
    conversation: Conversation,
    options: RenderOptions | None = None,
    **keywords: Unpack[RenderKeywords],
) -> tuple[Message, ...]:
    """The messages :func:`render` writes, with every header field and terminator decided.

    Structured system/developer contents become text messages; dropped analysis messages are
    gone; ``recipient_position`` is set wherever a recipient is; the profile's header rules
    are applied. ``parse(render(c))`` returns exactly these messages. The options are
    :func:`render`'s.
    """
    opts = RenderOptions.of(options, keywords)
    profile = opts.spec
    items = conversation.messages
    has_functions = any(
        isinstance(item, DeveloperContent) and item.has_function_tools for item in items
    )
    # A profile that writes history its own way (the HF template, OMP) arranges the items
    # first; each keeps its index in the conversation, for error messages.
    arranged = (
        profile.arrange(items, opts.turn) if profile.arrange is not None else list(enumerate(items))
    )
    dropped: set[int] = set()
    if profile.standard_drop and opts.drops_analysis:
        rule = DropRule(profile.drop_rule) if profile.drop_rule is not None else opts.rule
        dropped = _dropped([item for _, item in arranged], rule)
    last = len(arranged) - 1
    out: list[Message] = []
    for position, (index, item) in enumerate(arranged):
        if position in dropped:
            continue
        if isinstance(item, SystemContent):
            message = Message(Role.SYSTEM, system_text(item, has_function_tools=has_functions))
        elif isinstance(item, DeveloperContent):
            message = Message(Role.DEVELOPER, developer_text(item))
        else:
            message = item
        if message.role is Role.TOOL and message.name is None:
            raise RenderError(f"message {index}: a tool message needs the tool's name as name")
        problem = header_problem(message)
        if problem is not None:  # it would not read back: refuse rather than drop it later
            raise RenderError(f"messages[{index}].{problem[0]}: {problem[1]}")
        # openai-harmony leaves "all" (everyone) out of the header, but still ends with a call.
        recipient = None if message.recipient == "all" else message.recipient
        terminator = _terminator(
            message,
            is_last=position == last,
            training=opts.training,
            next_turn=opts.turn is not None,
        )
        where = None
        if recipient is not None:
            where = opts.position or message.recipient_position or RecipientPosition.ROLE
        message = dataclasses.replace(
            message,
            recipient=recipient,
            recipient_position=where,
            content_type=_content_type(message.content_type, opts.json_content_type),
            terminator=terminator,
            span=None,
        )
        written = profile.header(message) if profile.header is not None else message
        longest = _longest_header_text(written)
        if longest > MAX_HEADER_LENGTH:  # the parser would refuse it (HG104): refuse it here
            raise RenderError(
                f"messages[{index}]: its header text runs to {longest} characters between two "
                f"control tokens; the parser reads at most {MAX_HEADER_LENGTH}"
            )
        out.append(written)
    return tuple(out)


def _longest_header_text(message: Message) -> int:
    """The most characters of header text between two control tokens, as the parser counts."""
    longest = run = 0
    for piece in message_pieces(dataclasses.replace(message, content="")):
        if piece is ControlToken.MESSAGE:
            break
        run = 0 if isinstance(piece, ControlToken) else run + len(piece)
        longest = max(longest, run)
    return longest


# -- step 2: pieces ----------------------------------------------------------------------


def message_pieces(message: Message) -> list[Piece]:
    """The pieces of one message, with its fields as given (see :func:`rendered_messages`)."""
    pieces: list[Piece] = [ControlToken.START]
    if message.role is Role.TOOL:
        pieces.append(message.name or "")
    else:
        pieces.append(message.role.value)
        if message.name is not None:
            pieces.append(f":{message.name}")
    to = f" to={message.recipient}" if message.recipient is not None else None
    in_channel = (
        message.recipient_position is RecipientPosition.CHANNEL and message.channel is not None
    )
    if to is not None and not in_channel:
        pieces.append(to)
    if message.channel is not None:
        pieces += [ControlToken.CHANNEL, message.channel]
        if to is not None and in_channel:
            pieces.append(to)
    content_type = message.content_type
    if content_type is not None:
        if content_type.startswith(_CONSTRAIN):
            pieces += [" ", ControlToken.CONSTRAIN]
            if rest := content_type[len(_CONSTRAIN) :]:
                pieces.append(rest)
        else:
            pieces.append(f" {content_type}")
    pieces += [ControlToken.MESSAGE, message.content]
    pieces.append(_TERMINATOR_TOKENS[message.terminator or Terminator.END])
    return pieces


# -- step 3: text or ids -----------------------------------------------------------------


def _next_turn_pieces(next_turn: str) -> list[Piece]:
    return [ControlToken.START, next_turn]


def _joined(pieces: Sequence[Piece]) -> list[Piece]:
    """Adjacent text pieces as one run: a template's output is tokenized as one string."""
    out: list[Piece] = []
    for piece in pieces:
        text = not isinstance(piece, ControlToken)  # a ControlToken is a str too
        if text and out and not isinstance(out[-1], ControlToken):
            out[-1] = f"{out[-1]}{piece}"
        else:
            out.append(piece)
    return out


def rendered_pieces(conversation: Conversation, options: RenderOptions) -> list[Piece]:
    """Every piece of the rendering, in order, as the options' profile encodes them."""
    pieces: list[Piece] = []
    for message in rendered_messages(conversation, options):
        pieces += message_pieces(message)
    if options.turn is not None:
        pieces += _next_turn_pieces(options.turn)
    return _joined(pieces) if options.spec.joined_text else pieces


def text_of(pieces: Sequence[Piece]) -> str:
    """The Harmony text of some pieces, control tokens spelled."""
    return "".join(piece.value if isinstance(piece, ControlToken) else piece for piece in pieces)


def token_ids(
    pieces: Sequence[Piece], encoding: tiktoken.Encoding | None = None, *, trusted: bool = False
) -> list[int]:
    """The o200k_harmony ids of some pieces: each text piece encoded on its own."""
    if encoding is None:
        from ..format.vocabulary import load_encoding

        encoding = load_encoding()
    ids: list[int] = []
    for piece in pieces:
        if isinstance(piece, ControlToken):
            ids.append(piece.id)
        elif piece:
            ids += encode_text(encoding, piece, trusted=trusted)
    return ids


@overload
def render(
    conversation: Conversation | Mapping[str, Any],
    options: RenderOptions | None = ...,
    *,
    tokens: Literal[False] = ...,
    encoding: tiktoken.Encoding | None = ...,
    **keywords: Unpack[RenderKeywords],
) -> str: ...


@overload
def render(
    conversation: Conversation | Mapping[str, Any],
    options: RenderOptions | None = ...,
    *,
    tokens: Literal[True],
    encoding: tiktoken.Encoding | None = ...,
    **keywords: Unpack[RenderKeywords],
) -> list[int]: ...


def render(
    conversation: Conversation | Mapping[str, Any],
    options: RenderOptions | None = None,
    *,
    tokens: bool = False,
    encoding: tiktoken.Encoding | None = None,
    **keywords: Unpack[RenderKeywords],
) -> str | list[int]:
    """Render a conversation as Harmony text, or as token ids with ``tokens=True``.

    The options are one :class:`~.options.RenderOptions` (``options``), its fields as
    keywords, or both (the keywords replace the object's fields). With the defaults the output
    is byte- and token-exact with openai-harmony 0.0.8:

    - ``next_turn="assistant"`` appends ``<|start|>assistant`` (its
      ``render_conversation_for_completion``);
    - ``training=True`` ends a last assistant ``final`` message with ``<|return|>`` (its
      ``render_conversation_for_training``); it cannot be combined with ``next_turn``;
    - ``auto_drop_analysis`` drops chain of thought by ``drop_rule`` (see :class:`DropRule`).

    ``profile`` picks whose rendering (docs/rendering.md has the table of differences):
    ``openai-harmony-0.0.8`` (default), ``oss-harmony-0.0.11`` (vLLM's), ``hf-chat-template``
    (the model repo's Jinja template) or ``omp`` (oh-my-pi's in-band history). A conversation
    a profile cannot express raises :class:`RenderError` naming the profile and the message.

    Options beyond openai-harmony (its profile only), off by default:
    ``recipient_position="channel"`` writes every ``to=`` after the channel, as the model
    generates it (by default each message's own ``recipient_position`` is kept, the role
    section when unset); ``json_content_type`` respells ``json`` as ``<|constrain|>json``
    (``"constrain"``) or back (``"bare"``); ``drop_rule="every-final"`` is vLLM's dropping. A
    message's explicit ``terminator`` is kept, except that ``<|return|>`` becomes ``<|end|>``
    anywhere but at the very end.

    ``encoding`` is the o200k_harmony tiktoken encoding for ``tokens=True`` (loaded offline
    when omitted). All message text (user input, tool results, tool descriptions, the model's
    own words) is encoded as untrusted: a spelled ``<|start|>`` stays ordinary tokens and can
    never forge structure. ``trusted_text=True`` opts out: spellings become special ids.
    ``conversation`` may also be a request body (a dict with ``messages``, Chat Completions,
    or ``input``, Responses API), read by :func:`~.request_body.read_request`, the reading
    the CLI and the gateway share (``response_format`` / ``text.format`` included; a bad
    body raises ``ChatCompletionError`` with a path).

    Raises :class:`RenderError` for a conversation it cannot render, ValueError for options
    that do not go together.
    """
    if isinstance(conversation, Mapping):
        conversation = read_request(conversation).conversation
    elif not isinstance(conversation, Conversation):
        raise TypeError(
            f"render takes a Conversation or a request dict, not {type(conversation).__name__}"
            " (Conversation.from_messages([...]) builds one from Message objects)"
        )
    opts = RenderOptions.of(options, keywords)
    pieces = rendered_pieces(conversation, opts)
    if not tokens:
        return text_of(pieces)
    return token_ids(pieces, encoding, trusted=opts.trusted_text)
