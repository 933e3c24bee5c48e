"""One record per diagnostic code: what it means, why it happens, who reports it, its facts.

Codes are stable: ``HG1xx`` come from parsing (the grammar and its recoveries), ``HG2xx`` from
the validator's rules, ``HG3xx`` from preparing fine-tuning data (docs/training.md). A code
keeps its meaning forever; retired codes are not reused.

Everything the library says about a code is a field of its :class:`Code` here, and nothing
else describes it: the severity a diagnostic starts with, the one-line meaning, the longer
text and example of docs/diagnostics.md (generated from these records by
``python scripts/diagnostics_doc.py``), the most likely cause and the fix at the source (what
``validate`` and ``repair`` print), the functions that emit it, and the facts callers branch
on (:attr:`Code.stripped_dialect`, :attr:`Code.forged_tool_result`, ...). A caller asks a
field, never compares a code string: ``CATALOGUE[d.code].stripped_dialect``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.enums import StrEnum
from .model import Severity

__all__ = ["CATALOGUE", "Cause", "Code", "Layer"]


class Layer(StrEnum):
    """Which step of the library reports a code: reading the input, judging the messages,
    or preparing training data."""

    PARSE = "parse"
    VALIDATE = "validate"
    PREPARE = "prepare"


#: Where each layer's codes are documented for a reader (HG2xx have their examples there).
_PAGES = {
    Layer.PARSE: "docs/diagnostics.md",
    Layer.VALIDATE: "docs/rules.md",
    Layer.PREPARE: "docs/training.md",
}


@dataclass(frozen=True, slots=True)
class Cause:
    """The most likely cause of a deviation (``summary``) and the fix at its source (``fix``).

    The serving stack behind broken output is usually one of a few (harmony-format.md §5): a
    detokenizer that drops special tokens, a server that strips the stop token, a client that
    joins streamed deltas, a model that drifted. A cause names that, and the fix is where the
    output is produced, so that a user who brings broken output learns how to stop getting it.
    """

    summary: str
    fix: str


@dataclass(frozen=True, slots=True)
class Code:
    """Everything about one diagnostic code.

    ``meaning`` is one line; ``detail`` and ``example`` (parser codes) are what
    docs/diagnostics.md shows, ``detail`` defaulting to the meaning. ``emitted_by`` names,
    relative to the package, the functions, classes or rules whose code reports it
    (tests/format/test_codes.py checks the names against the source). The facts:

    * ``recovered``: a lenient repair reports it (a row of ``format/repairs.py``): the input
      deviated and was read anyway;
    * ``stripped_dialect``: the input was read in the stripped-token dialect (a detokenizer
      dropped the control tokens), so a missing terminator says nothing about a cut;
    * ``forged_tool_result``: the model began writing a tool's result itself; the stream stops;
    * ``error_in_validate``: a parser warning that ``validate`` reports as an error;
    * ``record_level``: about a whole dataset record, not a place in it (no position);
    * ``facts``: the names of the counts a diagnostic of this code carries
      (:meth:`Diagnostic.fact`).
    """

    code: str
    slug: str
    severity: Severity
    meaning: str
    emitted_by: tuple[str, ...]
    cause: Cause | None = None
    detail: str = ""
    example: str = ""
    recovered: bool = False
    stripped_dialect: bool = False
    forged_tool_result: bool = False
    error_in_validate: bool = False
    record_level: bool = False
    facts: tuple[str, ...] = ()

    @property
    def layer(self) -> Layer:
        """The step that reports the code, read from its hundreds digit."""
        return {"1": Layer.PARSE, "2": Layer.VALIDATE, "3": Layer.PREPARE}[self.code[2]]

    @property
    def page(self) -> str:
        """The page that documents the code and how to avoid it."""
        return _PAGES[self.layer]


_E, _W = Severity.ERROR, Severity.WARNING

# Causes several codes share.
STRIPPED_TOKENS = Cause(
    "control tokens were stripped by the detokenizer",
    "decode with special tokens kept (`skip_special_tokens=False` in vLLM/SGLang/transformers)",
)
STRIPPED_STOP = Cause(
    "the stop token was stripped (or the output was cut)",
    "keep `<|call|>`/`<|return|>` in the output (vLLM/SGLang: `skip_special_tokens=False`, "
    'stop tokens not removed), or pass `start="completion"` for text after '
    "`<|start|>assistant`",
)
SPELLED_TOKENS = Cause(
    "control tokens were encoded as ordinary text (the spelling, not the special id)",
    'encode with special tokens allowed (tiktoken: `allowed_special="all"`), or parse '
    "the text instead of re-tokenised ids",
)
HEADER_DRIFT = Cause(
    "the model wrote a malformed header (sampling drift, often at high temperature or "
    "with a quantised model)",
    "constrain the header with the turn grammar (`harmony-grammar grammar`), or lower "
    "the temperature",
)

#: Every code, in code order (docs/diagnostics.md lists them so). Lenient recoveries (HG15x-HG17x)
#: are warnings: the input was repaired. HG170 is a warning from the parser (the messages
#: parsed) and an error from the validator: a model forging a tool's result is a safety
#: problem, not a syntax one.
CATALOGUE: dict[str, Code] = {
    c.code: c
    for c in (
        Code(
            "HG100",
            "unexpected-token",
            _E,
            meaning="a control token the grammar does not allow here",
            emitted_by=("format.engine.Engine",),
            example="`<|start|>assistant<|channel|>final<|end|>` (strict)",
        ),
        Code(
            "HG101",
            "unexpected-text",
            _E,
            meaning="header text the grammar does not allow here",
            emitted_by=("format.header_reader._unexpected_text",),
            example="`<|channel|>commentary?` (strict)",
        ),
        Code(
            "HG102",
            "unexpected-end",
            _E,
            meaning="the input ends inside a message",
            emitted_by=("format.engine.Engine",),
            cause=STRIPPED_STOP,
            example="`<|start|>user<|message|>hi` (strict conversation)",
        ),
        Code(
            "HG103",
            "unknown-special-token",
            _E,
            meaning="a special token id that is not Harmony",
            emitted_by=("format.engine.Engine",),
            detail=(
                "a special id that is not Harmony (`<|endoftext|>`, `<|reserved_200010|>`), or an "
                "id outside o200k_harmony; it is skipped"
            ),
            example="ids `[199999, …]`",
        ),
        Code(
            "HG104",
            "header-too-long",
            _E,
            meaning="a header longer than the configured limit",
            emitted_by=(
                "format.engine.Engine",
                "format.readings.read_long_header",
            ),
            detail=(
                "header text longer than `max_header_length` (default 4096 characters); lenient: "
                "the header ends there (its missing words read as none) and its text becomes the "
                "message's content, so nothing is lost, and it is still an error"
            ),
            example="a runaway header",
            recovered=True,
        ),
        Code(
            "HG105",
            "invalid-utf8",
            _W,
            meaning="token ids whose bytes are not valid UTF-8",
            emitted_by=("format.engine.Engine",),
            cause=Cause(
                "token ids were cut in the middle of a UTF-8 character",
                (
                    "pass the complete id sequence, or decode only at token boundaries that end a "
                    "character"
                ),
            ),
            detail=(
                "a run of ordinary token ids whose bytes are not UTF-8; each maximal subpart of "
                "invalid bytes became one U+FFFD (Unicode's recommended practice, "
                '`bytes.decode("utf-8", errors="replace")`), in batch and streaming alike'
            ),
            example="a split emoji before `<|end|>`",
        ),
        Code(
            "HG106",
            "not-a-token-id",
            _E,
            meaning="an element of the ids that is not an integer",
            emitted_by=("format.engine.Engine",),
            detail=(
                'an element of the token ids that is not an integer (`1.5`, `"200006"`, `None`, '
                "`True`); it is skipped. Integers of other types (`numpy.int64`) are read as ids"
            ),
            example="ids `[200006, 1.5]`",
        ),
        Code(
            "HG107",
            "too-many-diagnostics",
            _W,
            meaning="diagnostics past the limit were counted only",
            emitted_by=("format.diagnostics.Overflow",),
            detail=(
                "(an error when any counted one is an error) one input produced more than "
                "`MAX_DIAGNOSTICS` (1,000) diagnostics: the first 1,000 by position are kept, the "
                "rest are counted in this one, at the end of the input"
            ),
            example="`<|start|>user<|end|>` × 3,000",
            facts=("dropped", "errors"),
        ),
        Code(
            "HG110",
            "spelled-control-token",
            _W,
            meaning="a control-token spelling in ordinary text",
            emitted_by=("format.engine.Engine",),
            cause=SPELLED_TOKENS,
            detail=(
                "token ids whose ordinary text spells `<|start|>` & co.: content, never structure"
            ),
            example='`encode_ordinary("<|end|>")` inside a body',
        ),
        Code(
            "HG150",
            "missing-message-token",
            _W,
            meaning="a header ended without <|message|>",
            emitted_by=("format.recoveries.open_empty_body",),
            cause=Cause(
                "the model stopped inside a header (a stop token before `<|message|>`)",
                (
                    "constrain the header with the turn grammar, or check that `<|message|>` is "
                    "not a stop string in the engine's settings"
                ),
            ),
            detail=(
                "lenient: a terminator (or the next `<|start|>`) arrived in the header; "
                "`<|message|>` was assumed, content is empty"
            ),
            example="`<|channel|>final<|end|>`",
            recovered=True,
        ),
        Code(
            "HG151",
            "missing-start-token",
            _W,
            meaning="a message began without <|start|>",
            emitted_by=("format.recoveries.start_missing",),
            cause=Cause(
                (
                    "`<|start|>assistant` was dropped between messages (the engine or a client "
                    "joined messages, or it was the prompt's last token)"
                ),
                (
                    'for output after `<|start|>assistant` pass `start="completion"`; otherwise '
                    "keep `<|start|>{role}` when joining messages"
                ),
            ),
            detail=(
                "lenient: `<|channel|>`/`<|message|>` began a message without `<|start|>`; the "
                "parser's `role` (assistant) was assumed"
            ),
            example="`…<|end|><|channel|>final<|message|>…`",
            recovered=True,
        ),
        Code(
            "HG152",
            "text-between-messages",
            _W,
            meaning="text outside the turn kept as a message",
            emitted_by=("format.readings.own_message",),
            cause=Cause(
                (
                    "text outside any message: log noise, a client's prefix, or several "
                    "generations joined"
                ),
                "pass only the model's output, one generation at a time",
            ),
            detail=(
                "lenient: text outside any message, in a stored conversation or after a completion "
                "stopped (`<|call|>`, `<|return|>`), kept as the content of a message of its own "
                "(author: the parser's `role`; channel `final` at the end of input, else "
                "`analysis`); before the stop it is HG164"
            ),
            example="`<|end|>junk<|start|>` → a message `junk`",
            recovered=True,
        ),
        Code(
            "HG153",
            "call-not-ended-by-call",
            _W,
            meaning="a tool call that did not end in <|call|>",
            emitted_by=("format.engine.Engine",),
            cause=Cause(
                ("the `<|call|>` stop token was stripped, or the call ended with another token"),
                (
                    "keep `<|call|>` in the output (do not strip stop tokens; vLLM/SGLang: "
                    "`skip_special_tokens=False`) and stop generation at `<|call|>`"
                ),
            ),
            detail=(
                "a tool call (assistant message with a recipient) ended by `<|end|>`, `<|return|>` "
                "or the end of input instead of `<|call|>`; the streaming parser does not dispatch "
                "it (no `ToolCallEnd`) unless lenient and a terminator arrived. The validator "
                "raises it to an error"
            ),
            example="`…to=functions.f…<|message|>{}<|end|>`",
            error_in_validate=True,
        ),
        Code(
            "HG154",
            "glued-content-type",
            _W,
            meaning="a content type glued onto the recipient",
            emitted_by=("format.readings.repair_glued_content_type",),
            cause=Cause(
                "the model glued the content type to the recipient (`to=functions.xjson`)",
                ("constrain the call header with the turn grammar; the call itself was recovered"),
            ),
            detail=(
                "lenient: a content type glued onto the recipient was split off: with known tools "
                "(`tools=` or the developer message) after the longest declared name "
                "(`fs_readjson` → `fs_read` + `json`), otherwise only a trailing `json`; a name "
                "ending in `_json`, `.json` or `-json` is left alone"
            ),
            example="`to=functions.shelljson<|message|>` → `to=functions.shell json<|message|>`",
            recovered=True,
        ),
        Code(
            "HG155",
            "content-type-case",
            _W,
            meaning="a content type not in lower case",
            emitted_by=("format.readings.repair_content_type_case",),
            cause=Cause(
                "the model wrote the content type in upper case (`<|constrain|>JSON`)",
                (
                    "nothing to fix at the source; the content type was kept as written, with this "
                    "warning"
                ),
            ),
            detail=(
                "lenient: a content type not in lower case; the field stays as written (a field is "
                "an exact slice of the input, issue 30), and readers compare content types without "
                "case"
            ),
            example="`<|constrain|>JSON`",
            recovered=True,
        ),
        Code(
            "HG156",
            "header-garbage",
            _W,
            meaning="stray characters in a header, read as no field",
            emitted_by=("format.headers.unread",),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: characters in a header with no letter and no digit that no field reads "
                "(`?`, `––`): kept verbatim in `Message.unread` (and in `Accounting.unread`), "
                "never dropped. Text with a letter or a digit never gets here: it is a field or "
                "content (HG161, HG178)"
            ),
            example='`commentary?<|message|>` → `unread="?"`, `––commentary` → `unread="––"`',
            recovered=True,
        ),
        Code(
            "HG157",
            "duplicate-channel",
            _W,
            meaning="a second <|channel|> in one header",
            emitted_by=("format.headers.second_channel",),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: a second `<|channel|>` in a header whose channel is written begins the "
                "next message (`<|message|><|end|><|start|>assistant` lost before it, HG151), so "
                "each channel word stays the field of one message (a channel a repair assigned, "
                "HG166's `commentary`, is written by it instead)"
            ),
            example=(
                "`<|channel|>commentary to=assistant<|channel|>analysis<|message|>x` → an empty "
                "`commentary` message, then `analysis` with `x`"
            ),
            recovered=True,
        ),
        Code(
            "HG158",
            "duplicate-recipient",
            _W,
            meaning="a second to= in one header",
            emitted_by=(
                "format.headers.content",
                "format.headers.recipient",
            ),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: a second `to=NAME` in one header is no field: it is the message's "
                "content (before the body), never hidden; the first recipient stands"
            ),
            example=(
                "`assistant to=functions.f<|channel|>commentary to=functions.g<|message|>{}` → "
                "content `to=functions.g{}`"
            ),
            recovered=True,
        ),
        Code(
            "HG159",
            "missing-terminator",
            _W,
            meaning="the input ended before the message's terminator",
            emitted_by=("format.recoveries.end_open_body",),
            cause=STRIPPED_STOP,
            detail=(
                "lenient: the input ended, or a new `<|start|>` or `<|channel|>` arrived, inside a "
                "message body; the message is kept with `terminator=None` (a `<|channel|>` then "
                "begins the next message, HG151)"
            ),
            example="`<|start|>user<|message|>hi`, `…think<|channel|>final<|message|>…`",
            recovered=True,
        ),
        Code(
            "HG160",
            "stripped-control-tokens",
            _W,
            meaning="a header whose control tokens were stripped",
            emitted_by=(
                "format.headers.content",
                "format.headers.glued_role",
                "format.headers.stripped_channel",
                "format.recoveries.report_stripped",
            ),
            cause=STRIPPED_TOKENS,
            detail=(
                "lenient: a header whose control tokens the detokenizer stripped "
                "(`skip_special_tokens=True`), read with the dialect grammar "
                "`grammars/harmony_stripped.lark`; only on evidence (docs/parser.md). Also a "
                "call's header that runs straight into its arguments (`<|message|>` stripped): the "
                "arguments are the content, never header garbage. In token ids, only a glued "
                "author inside a real header is re-read: ordinary ids elsewhere are never "
                "structure unless the caller passes `stripped_dialect=True` (ids that went "
                "through a detokenizer and back)"
            ),
            example=(
                "`analysisHi.assistantfinalfour` → `<|channel|>analysis<|message|>Hi.<|end|>"
                "<|start|>assistant<|channel|>final<|message|>four`"
            ),
            recovered=True,
            stripped_dialect=True,
        ),
        Code(
            "HG161",
            "prose-in-header",
            _W,
            meaning="prose where a header should end, no <|message|>",
            emitted_by=(
                "format.header_reader._apply",
                "format.headers.content",
            ),
            cause=Cause(
                (
                    "the model wrote its reasoning into the header (sampling drift, often with a "
                    "quantised model or a high temperature)"
                ),
                (
                    "constrain the header with the turn grammar (`harmony-grammar grammar`), or "
                    "lower the temperature"
                ),
            ),
            detail=(
                "lenient: a header that never reached `<|message|>` before its terminator or the "
                "end of input is the longest run of fields: its content starts at the first "
                "character no field reads (a digit, a symbol, an emoji, a word) and runs to the "
                "end verbatim; a bare content type there is only `json`/`code`; the channel is as "
                "written (`commentary` stays `commentary`); with no channel, an assistant message "
                "is on `final` at `<|return|>` or the end of input, else `analysis`. A call's JSON "
                "arguments there had their `<|message|>` stripped (HG160)"
            ),
            example=(
                "`<|channel|>commentary Hello<|end|>` → channel `commentary`, content `Hello`; "
                "`<|channel|>final 42 apples<|return|>` → content `42 apples`"
            ),
            recovered=True,
        ),
        Code(
            "HG162",
            "call-like-text",
            _E,
            meaning="a call written in text that could not be read",
            emitted_by=("format.recoveries.report_call_like",),
            cause=Cause(
                (
                    "the model wrote a call outside a call header (or its header was lost), so it "
                    "could not be dispatched"
                ),
                (
                    "keep the control tokens in the output (`skip_special_tokens=False`) and "
                    "constrain the turn with the turn grammar"
                ),
            ),
            detail=(
                "lenient: text kept as content (HG152, HG163, HG164, HG171) holds a call "
                "(`to=functions.NAME` with its arguments right after) that no reading could make a "
                "call: it is not dispatched, so it is an error, never silent"
            ),
            example=(
                '`Sure. to=functions.f json{"a":1}` → one message of content, plus this error at '
                "`to=`"
            ),
        ),
        Code(
            "HG163",
            "headerless-completion",
            _W,
            meaning="a completion with no header: one message",
            emitted_by=("format.readings.own_message",),
            cause=Cause(
                (
                    "the output has no header: the prompt did not end with `<|start|>assistant` in "
                    "the Harmony format, or the start of the output was cut off"
                ),
                (
                    "render the prompt with the Harmony renderer (`render(..., "
                    'next_turn="assistant")`) and pass the whole output'
                ),
            ),
            detail=(
                "lenient: a completion with no header at all: its whole text is the content of one "
                "message; channel `analysis` when `<|end|>` ended it (gpt-oss ends reasoning so), "
                "`final` for `<|return|>` or the end of input (an answer written with no header)"
            ),
            example="`Four.` → `<|channel|>final<|message|>Four.`",
            recovered=True,
        ),
        Code(
            "HG164",
            "headerless-message",
            _W,
            meaning="text between messages kept as a message",
            emitted_by=("format.readings.own_message",),
            cause=Cause(
                (
                    "text between messages: the model wrote outside a message, or outputs were "
                    "joined"
                ),
                "pass one generation at a time; constrain the turn with the turn grammar",
            ),
            detail=(
                "lenient: text between a completion's messages, before it stopped, kept as the "
                "content of a message of its own (channel `analysis`, or `final` at the end of "
                "input); after the stop, or in a stored conversation, it is HG152"
            ),
            example="`…<|end|>Sure.<|end|>` → a message `Sure.` on `analysis`",
            recovered=True,
        ),
        Code(
            "HG165",
            "call-without-channel",
            _W,
            meaning="a call with no channel read on commentary",
            emitted_by=("format.readings.repair_call_without_channel",),
            cause=HEADER_DRIFT,
            detail="lenient: a call to `functions.*` with no channel, read on `commentary`",
            example=(
                "` to=functions.f<|message|>{}` → `<|channel|>commentary "
                "to=functions.f<|message|>{}`"
            ),
            recovered=True,
        ),
        Code(
            "HG166",
            "tool-in-channel-slot",
            _W,
            meaning="a tool's name where the channel belongs",
            emitted_by=("format.headers.tool_in_channel_slot",),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: a tool's dotted name where the channel name belongs, read as the "
                "recipient on `commentary`"
            ),
            example=(
                "`<|channel|>functions.read<|message|>` → `<|channel|>commentary "
                "to=functions.read<|message|>`"
            ),
            recovered=True,
        ),
        Code(
            "HG167",
            "stray-to-assistant",
            _W,
            meaning="a stray to=assistant in the assistant's header",
            emitted_by=("format.readings.repair_stray_to_assistant",),
            cause=Cause(
                (
                    "the model copied a tool reply's `to=assistant` into its own header (imitating "
                    "the history)"
                ),
                "constrain the header with the turn grammar; the message itself was recovered",
            ),
            detail="lenient: `to=assistant` in an assistant message's own header, dropped",
            example=(
                "`<|channel|>analysis to=assistant<|message|>` → `<|channel|>analysis<|message|>`"
            ),
            recovered=True,
        ),
        Code(
            "HG168",
            "call-shaped-as-reply",
            _W,
            meaning="a call written in a tool reply's header",
            emitted_by=("format.readings.repair_call_shaped_as_reply",),
            cause=Cause(
                ("the model wrote its call in the shape of a tool's reply (imitating the history)"),
                ("constrain the call header with the turn grammar; the call itself was recovered"),
            ),
            detail=(
                "lenient: a header shaped like a tool's reply (tool author, `to=assistant` in the "
                "channel section) but with a content type, around call arguments: read as the "
                "assistant's call to that tool"
            ),
            example=(
                "`<|start|>functions.f<|channel|>commentary to=assistant code<|message|>{…}` → "
                "`<|start|>assistant<|channel|>commentary to=functions.f code<|message|>{…}`"
            ),
            recovered=True,
        ),
        Code(
            "HG169",
            "recipient-without-namespace",
            _W,
            meaning="a declared function without functions.",
            emitted_by=("format.readings.repair_bare_function_name",),
            cause=Cause(
                "the model left out the `functions.` namespace of a declared function",
                (
                    "declare the tools in the developer message's `namespace functions` (as the "
                    "renderer does); the call was read as `functions.NAME`"
                ),
            ),
            detail=(
                "lenient: a recipient that is a declared function (`tools=` or the developer "
                "message) written without `functions.`"
            ),
            example="`to=ask_supervisor` → `to=functions.ask_supervisor`",
            recovered=True,
        ),
        Code(
            "HG170",
            "forged-tool-result",
            _W,
            meaning="the model began writing a tool's result itself",
            emitted_by=("format.actions.on_author",),
            cause=Cause(
                "the model went on past `<|call|>` and wrote the tool's result itself",
                (
                    "stop generation at `<|call|>` (add it to the engine's stop tokens) and run "
                    "the tool"
                ),
            ),
            detail=(
                "completion mode: the model began a message authored by a tool "
                "(`<|start|>functions.f …`), i.e. it is writing the tool's result itself; the "
                "stream parser signals `abort`. A warning from `parse` (the messages parsed); "
                "`validate` reports it as an error"
            ),
            example="`…<|call|><|start|>functions.f to=assistant…`",
            forged_tool_result=True,
            error_in_validate=True,
        ),
        Code(
            "HG171",
            "junk-before-header",
            _W,
            meaning="text or an echoed <|start|> before the header",
            emitted_by=(
                "format.headers.content",
                "format.readings.own_message",
                "format.recoveries.report_before_header",
            ),
            cause=Cause(
                (
                    "the output repeats the prompt's `<|start|>assistant`, or a client prefixed "
                    "text to it"
                ),
                "pass only what the model generated after the prompt's `<|start|>assistant`",
            ),
            detail=(
                "lenient: a completion that begins with `<|start|>` (the prompt's "
                "`<|start|>assistant` echoed) is read as a continuation; text with a letter or "
                "digit before a completion's first header (`<|channel|>`, `<|start|>`, a glued "
                "stripped header) is kept as a message of its own on `analysis` (it cannot be "
                "told, and reasoning never reaches the user)"
            ),
            example=(
                "`Sure. <|start|>assistant<|channel|>final<|message|>Hi` → "
                "`<|channel|>analysis<|message|>Sure.<|end|><|start|>assistant<|channel|>final<|message|>Hi`"
            ),
            recovered=True,
        ),
        Code(
            "HG172",
            "recipient-after-content-type",
            _W,
            meaning="a to= written after the content type",
            emitted_by=("format.headers.recipient",),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: a ` to=` written after the content type, in a header that has no "
                "recipient: it is the header's recipient (the call is kept, never lost with "
                "`<|call|>` ending a message to nobody). A second recipient is still dropped "
                "(HG158). Strict: HG101 at the ` to=`"
            ),
            example=(
                "`<|channel|>commentary <|constrain|>json to=functions.f<|message|>` → "
                "`<|channel|>commentary to=functions.f <|constrain|>json<|message|>`"
            ),
            recovered=True,
        ),
        Code(
            "HG173",
            "non-ascii-channel",
            _W,
            meaning="a channel name with non-ASCII letters, kept whole",
            emitted_by=("format.headers.channel_name",),
            cause=Cause(
                (
                    "the model wrote a channel name that is not one of Harmony's ASCII names "
                    "(often a translated `analysis`/`final` in a conversation in another language)"
                ),
                (
                    "constrain the header with the turn grammar (`harmony-grammar grammar`); the "
                    "name was kept whole, and `validate` reports it if the system message does not "
                    "declare it"
                ),
            ),
            detail=(
                "lenient: a channel name with non-ASCII letters is kept whole as the channel, "
                "never cut to its ASCII prefix; whether the channel is declared is the validator's "
                "question (HG201). Strict: HG101 at the start of the word"
            ),
            example="`<|channel|>réponse<|message|>` → channel `réponse`",
            recovered=True,
        ),
        Code(
            "HG174",
            "spelled-constrain",
            _W,
            meaning="ordinary ids spelling <|constrain|> in a header",
            emitted_by=("format.header_reader.read_whole_header",),
            cause=SPELLED_TOKENS,
            detail=(
                "lenient, token ids: ordinary ids spelling `<|constrain|>` where a header takes "
                "`<|constrain|>` are read as the control token, so the ids give the message the "
                "same text gives (HG110 still reports the spelling). Elsewhere, and in strict "
                "mode, a spelling stays text"
            ),
            example=(
                "ids of `commentary to=functions.f <|constrain|>json` after a special "
                "`<|channel|>` → content type `<|constrain|>json`"
            ),
            recovered=True,
        ),
        Code(
            "HG175",
            "stray-control-token",
            _W,
            meaning="a control token nothing accepts, discarded",
            emitted_by=(
                "format.engine.Engine",
                "format.header_reader._early",
                "format.headers.debris",
                "format.recoveries.recover_stray_control_token",
            ),
            cause=Cause(
                (
                    "a control token where none can stand: a doubled stop token, or one a serving "
                    "stack injected or left over from a cut"
                ),
                (
                    "stop generation at the first `<|call|>`/`<|return|>` and pass the output "
                    "once; the token was discarded and nothing else was lost"
                ),
            ),
            detail=(
                "a control token's spelling cut short at the end of text input (`…<|ret`: the "
                "output stopped inside a stop token) is discarded, never content (a lone `<` stays "
                "text). Lenient: a control token the grammar accepts nowhere here (a doubled "
                "terminator, a `<|channel|>` before another, `<|constrain|>` between messages) is "
                "discarded: the one thing lenient mode ever discards, since it carries no text. A "
                "control token with nothing after it that it needs (`<|start|>`, `<|channel|>` or "
                "`<|constrain|>` right before `<|message|>`) is kept and read as none: the "
                "parser's role, no channel, no content type"
            ),
            example=(
                "`<|end|><|end|>`, `<|channel|><|channel|>analysis…`, "
                "`<|start|>assistant<|channel|><|message|>x`"
            ),
            recovered=True,
        ),
        Code(
            "HG176",
            "leading-recipient",
            _W,
            meaning="a completion that began with its recipient",
            emitted_by=("format.headers.recipient",),
            cause=Cause(
                (
                    "the prompt ended with `<|start|>assistant` and the model's ` to=` lost its "
                    "space (a client trimmed the completion's leading whitespace)"
                ),
                "keep the completion exactly as generated; the recipient was read as written",
            ),
            detail=(
                "lenient: a completion that begins with `to=NAME` (the role section's space lost "
                "with the prompt's `<|start|>assistant`): read as the role-section recipient, so "
                "the call is kept"
            ),
            example="`to=functions.f<|channel|>commentary json<|message|>{}<|call|>`",
            recovered=True,
        ),
        Code(
            "HG177",
            "glued-word",
            _W,
            meaning="a Harmony word glued to text, read as that word",
            emitted_by=(
                "format.headers.glued_channel",
                "format.headers.glued_role",
            ),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: a word of Harmony's own glued to text (`assistantThe`, `analysisOK`, "
                "`commentary?`): the known word is the field, and the rest is read on (content, or "
                "another field)"
            ),
            example=(
                "`<|start|>assistantThe answer<|return|>` → author `assistant`, content `The "
                "answer`"
            ),
            recovered=True,
        ),
        Code(
            "HG178",
            "header-text-as-content",
            _W,
            meaning="header text no field reads, as content",
            emitted_by=("format.headers.content",),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: text with a letter or a digit in a header that reached `<|message|>` (or "
                "that a later header token still continues) and that no field reads: it is the "
                "message's content, before the body; control tokens inside it are debris (HG175)"
            ),
            example='`<|channel|>final {"a":1} and more<|message|>x` → content `{"a":1} and morex`',
            recovered=True,
        ),
        Code(
            "HG179",
            "field-out-of-order",
            _W,
            meaning="a header field written after a later one",
            emitted_by=("format.headers.channel_token",),
            cause=HEADER_DRIFT,
            detail=(
                "lenient: a header field written after one that comes later in Harmony's order (a "
                "`<|channel|>` after the content type): read as that field all the same"
            ),
            example=(
                "`assistant to=functions.x abc<|channel|>analysis<|message|>` → channel "
                "`analysis`, content type `abc`"
            ),
            recovered=True,
        ),
        Code(
            "HG180",
            "arguments-off-schema",
            _E,
            meaning="tool-call arguments no valid document can follow",
            emitted_by=(
                "format.call_check.CallCheck",
                "format.call_check.arguments_problem",
                "tools.arguments.ArgumentChecker",
                "validation.rules.arguments_off_schema",
            ),
            detail=(
                "with `tools=`: a call's arguments stopped being a JSON object (reported at the "
                "first bad character, while streaming), or the complete document violates the "
                "tool's schema (reported with the JSON pointer of the first failure). The "
                "validator's rule judges a stored call the same way, and the dialect's "
                "`read_arguments` reports a call body that is no JSON object (read as `{}`)"
            ),
            example='`{"city": 3}` for `city: string`',
        ),
        Code(
            "HG181",
            "unknown-tool",
            _E,
            meaning="a call to a function that is not among the tools",
            emitted_by=(
                "format.call_check.CallCheck",
                "validation.rules.unknown_recipient",
            ),
            detail="with `tools=`: a call to `functions.NAME` where NAME is not among the tools",
            example="`to=functions.nope`",
        ),
        Code(
            "HG182",
            "arguments-too-deep",
            _E,
            meaning="call arguments nested deeper than the limit",
            emitted_by=(
                "tools.arguments.ArgumentChecker",
                "tools.json_limits.json_limit",
                "tools.json_limits.loads_bounded",
            ),
            detail=(
                "a call's arguments nest arrays and objects deeper than 128 (`MAX_JSON_DEPTH`); "
                "they are not read further"
            ),
            example='`{"a": [[[…]]]}` 1,000 deep',
        ),
        Code(
            "HG183",
            "number-too-long",
            _E,
            meaning="a number in call arguments with too many digits",
            emitted_by=(
                "tools.json_limits.json_limit",
                "tools.json_limits.loads_bounded",
            ),
            detail=(
                "a number in a call's arguments has more than 4,300 digits (`MAX_NUMBER_DIGITS`); "
                "it is not converted"
            ),
            example='`{"n": 1111…}` 5,000 digits',
        ),
        Code(
            "HG184",
            "lone-surrogate",
            _E,
            meaning="call arguments holding a lone surrogate",
            emitted_by=(
                "tools.json_limits.json_limit",
                "tools.json_limits.loads_bounded",
            ),
            detail=(
                "a call's arguments hold a lone surrogate (a Python `str` character "
                "U+D800–U+DFFF), which has no UTF-8 form"
            ),
            example='`{"a": "\\ud800"}` as a raw character',
        ),
        Code(
            "HG200",
            "missing-channel",
            _E,
            meaning="an assistant message without a channel",
            emitted_by=("validation.rules.missing_channel",),
        ),
        Code(
            "HG201",
            "unknown-channel",
            _E,
            meaning="a channel the system message does not declare",
            emitted_by=("validation.rules.unknown_channel",),
        ),
        Code(
            "HG202",
            "call-on-analysis",
            _W,
            meaning="a function call on the analysis channel",
            emitted_by=("validation.rules.call_on_analysis",),
        ),
        Code(
            "HG203",
            "result-without-call",
            _E,
            meaning="a tool result that answers no pending call",
            emitted_by=("validation.rules.result_without_call",),
        ),
        Code(
            "HG204",
            "result-out-of-order",
            _E,
            meaning="a tool result that overtakes an earlier call",
            emitted_by=("validation.rules.result_out_of_order",),
        ),
        Code(
            "HG205",
            "result-from-role",
            _E,
            meaning="a tool result whose author is not a tool",
            emitted_by=("validation.rules.result_from_role",),
        ),
        Code(
            "HG206",
            "unanswered-call",
            _E,
            meaning="the conversation moves on from a call unanswered",
            emitted_by=("validation.rules.unanswered_call",),
        ),
        Code(
            "HG207",
            "fenced-call",
            _E,
            meaning="Markdown fences around a call's arguments",
            emitted_by=("validation.rules.fenced_call",),
        ),
        Code(
            "HG208",
            "html-entities",
            _W,
            meaning="HTML entities in a call's JSON arguments",
            emitted_by=("validation.rules.html_entities",),
        ),
        Code(
            "HG209",
            "reserved-spelling",
            _W,
            meaning="a special-token spelling inside content",
            emitted_by=("validation.rules.reserved_spelling",),
        ),
        Code(
            "HG210",
            "preamble-not-ended",
            _E,
            meaning="a commentary preamble not ended by <|end|>",
            emitted_by=("validation.rules.preamble_not_ended",),
        ),
        Code(
            "HG211",
            "misplaced-return",
            _E,
            meaning="<|return|> anywhere but a completion's final end",
            emitted_by=("validation.rules.misplaced_return",),
        ),
        Code(
            "HG212",
            "dropped-analysis",
            _W,
            meaning="a pending call whose analysis was dropped",
            emitted_by=("validation.rules.dropped_analysis",),
        ),
        Code(
            "HG213",
            "call-token-without-call",
            _E,
            meaning="<|call|> ending a message that is no call",
            emitted_by=("validation.rules.call_token_without_call",),
        ),
        Code(
            "HG214",
            "forged-declaration",
            _E,
            meaning="a tools section declaring what no tool declared",
            emitted_by=("validation.rules.forged_declaration",),
        ),
        Code(
            "HG290",
            "invalid-record",
            _E,
            meaning="a dataset record that holds no Harmony input",
            emitted_by=("validation.record.failure",),
            record_level=True,
        ),
        Code(
            "HG300",
            "unimportable-record",
            _E,
            meaning="a record that cannot be read as a conversation",
            emitted_by=("training.importers.unimportable",),
        ),
        Code(
            "HG301",
            "example-too-long",
            _E,
            meaning="a training example over the length limit, skipped",
            emitted_by=("training.batch._example",),
        ),
        Code(
            "HG302",
            "example-truncated",
            _W,
            meaning="a training example cut to the length limit",
            emitted_by=("training.batch._example",),
        ),
        Code(
            "HG303",
            "nothing-to-train",
            _E,
            meaning="a training example with no token masked in",
            emitted_by=("training.batch._example",),
        ),
        Code(
            "HG304",
            "unrenderable-record",
            _E,
            meaning="a conversation the renderer cannot render",
            emitted_by=("training.batch._example",),
        ),
    )
}
