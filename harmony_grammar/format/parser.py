"""The batch parser: ``parse(source)`` over text or token ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .engine import Engine
from .lexer import TextLexer, TokenLexer, token_sequence
from .model import ParseResult
from .options import ParseKeywords, ParseOptions
from .strict import StrictEngine
from .vocabulary import load_encoding, token_bytes_table

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["parse"]

#: The options of recent keyword sets (``parse(text, start="completion")``): made once, as
#: an options object is made once and shared (frozen). At most this many kept.
_MAX_KEPT_OPTIONS = 64
_KEPT_OPTIONS: dict[frozenset[tuple[str, object]], ParseOptions] = {}


def parse(
    source: str | Sequence[int],
    options: ParseOptions | None = None,
    **keywords: Unpack[ParseKeywords],
) -> ParseResult:
    """Parse Harmony text (control tokens spelled literally) or o200k_harmony token ids.

    The options are one :class:`~.options.ParseOptions` (``options``), its fields as keywords
    beside it replacing its values (``parse(s, lenient=True)`` is
    ``parse(s, ParseOptions(lenient=True))``; ``call_id`` matters only to the stream parser).
    ``start="conversation"`` reads complete messages; ``start="completion"`` reads model
    output after a prompt that ended with ``<|start|>{role}``; ``start="prompt"`` reads a
    conversation rendered for completion, ending in ``<|start|>{role}`` (``next_turn``).
    ``lenient=True`` repairs the deviations real models produce, each reported with its own
    warning code. Bad input never
    raises: every problem is a :class:`~harmony_grammar.format.model.Diagnostic` in the result.
    With ``tools`` (OpenAI-style or plain ``{name, parameters}`` lists, or ``{name: schema}``),
    each ``functions.*`` call's arguments (and each call into a declared ``namespace``'s tool,
    ``to=NAMESPACE.fn``) are checked against its schema as they are read;
    a malformed ``tools`` raises ``ValueError`` with one line naming the tool.

    Lenient parsing loses nothing: every character (token) of the input is in a message's
    header or content, or in a discarded range that a diagnostic names, and only control-token
    debris is ever discarded; ``result.accounting`` is the ledger. Token ids are
    authoritative: ordinary ids that spell a stripped header (``assistantcommentary
    to=functions.f json{…}``) stay content unless ``stripped_dialect=True`` (for ids that went
    through a detokenizer and back); text input reads that dialect by default.

    A ``source`` of the wrong type (bytes, a number, None, a mapping) raises ``TypeError``;
    a sequence holding something other than integers is bad input: each such element is an
    HG106 diagnostic. At most ``MAX_DIAGNOSTICS`` (1000) diagnostics are kept, then one HG107
    counts the rest.
    """
    if isinstance(source, (bytes, bytearray)):
        raise TypeError("parse() takes str or a sequence of token ids; decode bytes first")
    if not isinstance(source, str):
        source = token_sequence(source, "parse()")  # type: ignore[assignment]
    if options is None and "strict" not in keywords:
        opts = _options_of(keywords)
    else:  # here, so that a renamed keyword's warning names the caller's line
        opts = ParseOptions.of(options, keywords)
    engine = (Engine if opts.lenient else StrictEngine)(
        opts, token_units=not isinstance(source, str)
    )
    if isinstance(source, str):
        text_lexer = TextLexer(engine)
        text_lexer.feed(source)
        end = text_lexer.close()
    else:
        # With tools, one id at a time: HG180 then names the id of the first bad character,
        # as a serving loop feeding ids one by one sees it (stream.StreamParser does the same).
        token_lexer = TokenLexer(
            token_bytes_table(load_encoding()), engine, per_token=opts.tools is not None
        )
        token_lexer.feed(source)
        end = token_lexer.close()
    engine.eof(end)
    diagnostics = engine.overflow.cap(engine.diagnostics, end)
    ledger = engine.book.ledger(end)
    return ParseResult(tuple(engine.messages), diagnostics, engine.next_turn, ledger)


def _options_of(keywords: Mapping[str, object]) -> ParseOptions:
    """``ParseOptions.of(None, keywords)``, kept for keywords whose values are hashable
    (never with a renamed keyword, ``strict=``: its warning is said on every call)."""
    try:
        key = frozenset(keywords.items())
        kept = _KEPT_OPTIONS.get(key)
    except TypeError:  # an unhashable value (a list of tools): made each time
        return ParseOptions.of(None, keywords)
    if kept is None:
        kept = ParseOptions.of(None, keywords)
        if len(_KEPT_OPTIONS) >= _MAX_KEPT_OPTIONS:
            _KEPT_OPTIONS.clear()
        _KEPT_OPTIONS[key] = kept
    return kept
