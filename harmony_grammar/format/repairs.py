"""The repair table's rows: every lenient repair, one row each, keyed by where the engine asks.

Theory of operation
-------------------
The engine (:mod:`.engine`) parses by the grammar alone. At seven points it may ask for
help, and each point is a *hook* of this table:

``REJECTED_TOKEN``
    the LALR table refused a control token;
``UNLEXABLE_TEXT``
    text between messages that no terminal the parser accepts can lex;
``PENDING_TEXT``
    text outside a message body is complete (the token that ends it is known): the place
    to read what it really is; a row runs only where it can apply (:class:`Where`: between
    messages, a completion's start);
``HEADER``
    a whole header (its text and its own control tokens, held until it ended) that the
    grammar alone cannot read: the rows are the cost table of its least-cost reading
    (:mod:`.headers`, searched by :mod:`.header_search`): the least total cost wins, ties
    to the earlier rows;
``LONG_HEADER``
    header text past the length limit;
``HEADER_COMPLETE``
    ``<|message|>`` arrived: the whole header is known (its rows read a recipient or a
    content type, so a header with neither is not asked: tests/format/test_lossless.py checks it);
``END_OF_INPUT``
    the input ended where the grammar cannot end.

The table's mechanism (its hooks, rows and the grouping the engine calls) is
:mod:`.repair_table`; the rows are here. A row names the codes it reports, the shape it
reads, what it produces and (``HEADER``) its cost, and points at its function (in
:mod:`.recoveries`, :mod:`.readings`, :mod:`.header_complete`, :mod:`.headers`,
:mod:`.header_channel` or :mod:`.header_rest`). At the other hooks the rows run in order
and the first that applies wins; a row that declines returns a falsy value. Strict mode is
the empty table: every deviation is then an error with its position.

The rows never know the syntax themselves: they ask the parser which terminals it accepts
and feed terminals of ``harmony.lark``. And none of them drops text: every character is a
field, content, :attr:`.model.Message.unread` (no letter) or control-token
debris, the one thing discarded
(:class:`.model.Accounting`). Each code is reported by one function; the rows below say which.
"""

from __future__ import annotations

from . import header_channel, header_complete, header_rest, headers, readings, recoveries
from .repair_table import Hook, Repair, RepairTable, Where

__all__ = ["LENIENT", "STRICT"]


_T, _U, _P, _R, _H, _E = (
    Hook.REJECTED_TOKEN,
    Hook.UNLEXABLE_TEXT,
    Hook.PENDING_TEXT,
    Hook.HEADER,
    Hook.HEADER_COMPLETE,
    Hook.END_OF_INPUT,
)

#: The lenient table. Order matters within a hook: the first row that applies wins.
LENIENT = RepairTable(
    (
        # -- a control token the grammar refuses
        Repair(
            ("HG171",),
            _T,
            "<|start|> at a completion's very start (the prompt echoed)",
            "a continuation from that <|start|>",
            recoveries.recover_echoed_start,
        ),
        Repair(
            ("HG185",),
            _T,
            "<|start|> while a header with no recipient is open, or <|start|>/<|channel|> right"
            " after its <|message|> (the model began it again)",
            "one message: the header written over kept in Message.superseded",
            recoveries.recover_restarted_header,
        ),
        Repair(
            ("HG159",),
            _T,
            "<|start|> or <|channel|> inside an open body",
            "the body ended there (no terminator); the token begins the next message",
            recoveries.recover_missing_terminator,
        ),
        Repair(
            ("HG150",),
            _T,
            "a terminator or <|start|> while the header is open",
            "an empty <|message|>, then the token",
            recoveries.recover_missing_message,
        ),
        Repair(
            ("HG151",),
            _T,
            "<|channel|> or <|message|> where a message must start",
            "<|start|>{role} before it",
            recoveries.recover_missing_start,
        ),
        Repair(
            ("HG175",),
            _T,
            "any other control token the grammar refuses",
            "the token discarded as debris (the one thing ever discarded)",
            recoveries.recover_stray_control_token,
        ),
        # -- header text no accepted terminal can lex
        Repair(
            ("HG164", "HG152"),
            _U,
            "text between messages that is not a header",
            "a message of its own",
            readings.recover_stray_text,
        ),
        # -- pending text, once the token that ends it is known
        Repair(
            ("HG160",),
            _P,
            "a detokenizer's stripped headers (text input, or opt-in)",
            "the control tokens of each header",
            readings.read_stripped_headers,
        ),
        Repair(
            ("HG151",),
            _P,
            "an author between messages, its <|start|> lost",
            "<|start|> before it",
            readings.read_author_without_start,
            frozenset({Where.BETWEEN}),
        ),
        Repair(
            ("HG163", "HG164", "HG152", "HG171"),
            _P,
            "text outside any header",
            "a message of its own",
            readings.read_headerless,
            frozenset({Where.BETWEEN, Where.COMPLETION_START}),
        ),
        # -- a whole header, read at once (headers, header_channel, header_rest): least cost wins
        Repair((), _R, "whitespace between fields", "syntax", headers.syntax_space),
        Repair(
            ("HG179", "HG174"),
            _R,
            "<|channel|> in a header with no channel",
            "the channel follows",
            header_channel.channel_token,
            costs=("channel-after-type",),
        ),
        Repair(
            (),
            _R,
            "<|constrain|> in a header with no content type",
            "the content type follows",
            headers.constrain_token,
        ),
        Repair((), _R, "the author's word after <|start|>", "the author", headers.author_word),
        Repair(
            ("HG177",),
            _R,
            "a role glued to text (assistantThe)",
            "the role is the author",
            headers.glued_role,
            costs=("glued-role", "glued-role-channel"),
        ),
        Repair(
            ("HG151",),
            _R,
            "a completion's own role before its first header (assistant<|channel|>…)",
            "the author (a field, not a message of its own)",
            headers.completion_role,
            costs=("completion-role",),
        ),
        Repair((), _R, "':NAME' after a role", "the author's name", headers.author_name),
        Repair(
            ("HG172", "HG176"),
            _R,
            "'to=NAME' (again, after the content type, or first in a completion)",
            "the recipient (a second one is content, HG158)",
            headers.recipient,
            costs=(
                "recipient-again",
                "stray-role-recipient",
                "recipient-after-type",
                "recipient-first",
            ),
        ),
        Repair(
            ("HG173",),
            _R,
            "a word after <|channel|>",
            "the channel",
            header_channel.channel_name,
            costs=("non-ascii-channel",),
        ),
        Repair(
            ("HG177",),
            _R,
            "a channel word glued to text (analysisOK)",
            "the word is the channel",
            header_channel.glued_channel,
            costs=("glued-channel", "glued-channel-bare"),
        ),
        Repair(
            ("HG157",),
            _R,
            "the header's channel written again before any content (final!final!,"
            " <|channel|>final<|channel|>final, <|channel|>commentary<|channel|>final)",
            "one channel field (the same word written twice; a different word after"
            " <|channel|> is the channel, the earlier kept in Message.superseded)",
            header_channel.channel_again,
            costs=("channel-again", "channel-token-again", "channel-written-over"),
        ),
        Repair(
            ("HG166",),
            _R,
            "a tool's dotted name where the channel belongs",
            "channel commentary (a default) to=NAME",
            header_channel.tool_in_channel_slot,
            costs=("tool-in-channel",),
        ),
        Repair(
            (),
            _R,
            "a content type after <|constrain|>, or bare where the header ends",
            "the content type",
            headers.content_type,
        ),
        Repair(
            ("HG160",),
            _R,
            "a channel word with no <|channel|> before it",
            "the channel",
            header_channel.stripped_channel,
            costs=("stripped-channel",),
        ),
        Repair(
            ("HG156",),
            _R,
            "stray characters with no letter (punctuation; a number with closing"
            " punctuation right after a broken header's channel word)",
            "Message.unread",
            header_rest.unread,
            costs=("unread", "unread-number", "unread-after-word"),
        ),
        Repair(
            ("HG175",),
            _R,
            "a control token no field of this header can take",
            "discarded as debris",
            header_rest.debris,
            costs=("debris",),
        ),
        Repair(
            ("HG161", "HG178", "HG160", "HG158", "HG171"),
            _R,
            "text with a letter or a digit that no field reads",
            "content (before a completion's first header: a message of its own)",
            header_rest.content,
            costs=("content", "content-per-char"),
        ),
        # -- header text past the length limit
        Repair(
            ("HG104",),
            Hook.LONG_HEADER,
            "header text longer than the limit (prose where a message may begin: no limit)",
            "the header ends; its text is the content",
            readings.read_long_header,
        ),
        # -- a complete header
        Repair(
            ("HG155",),
            _H,
            "a content type not in lower case",
            "a warning; the field stays as written (an exact slice)",
            header_complete.repair_content_type_case,
        ),
        Repair(
            ("HG168",),
            _H,
            "a tool's reply header around a call's content type",
            "the assistant's call",
            header_complete.repair_call_shaped_as_reply,
        ),
        Repair(
            ("HG167",),
            _H,
            "to=assistant in the assistant's own header",
            "no recipient",
            header_complete.repair_stray_to_assistant,
        ),
        Repair(
            ("HG154",),
            _H,
            "a content type glued onto the recipient",
            "recipient and content type apart",
            header_complete.repair_glued_content_type,
        ),
        Repair(
            ("HG169",),
            _H,
            "a declared function named without functions.",
            "functions.NAME",
            header_complete.repair_bare_function_name,
        ),
        Repair(
            ("HG165",),
            _H,
            "a functions.* call with no channel",
            "channel commentary",
            header_complete.repair_call_without_channel,
        ),
        # -- the end of input where the grammar cannot end
        Repair(
            ("HG150",),
            _E,
            "a header still open",
            "the message as read, content empty",
            readings.header_at_end,
        ),
        Repair(
            ("HG159",), _E, "a body still open", "the message, no terminator", readings.body_at_end
        ),
    )
)

#: Strict mode: no repairs at all.
STRICT = RepairTable(())
