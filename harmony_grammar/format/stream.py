"""The streaming parser: sans-IO, fed text chunks or token ids, returning events.

The shape follows h11: :meth:`StreamParser.feed` and :meth:`StreamParser.feed_tokens` only
buffer and parse what is certain; they return the events that became known; nothing does
I/O; the end of input is the explicit :meth:`StreamParser.close`. The same engine as
:func:`harmony_grammar.parse` does the parsing, so :meth:`StreamParser.result` equals
``parse()`` of the whole input, however it was chunked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .engine import _SHARED_DELTAS, Engine
from .events import Event, content_delta, tool_call_delta
from .lexer import TextLexer, TokenLexer, token_sequence
from .model import ParseResult
from .options import ParseKeywords, ParseOptions
from .strict import StrictEngine
from .tokens import FIRST_SPECIAL_ID
from .vocabulary import load_encoding, token_bytes_table, token_text_table

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["StreamParser"]

#: The stream parser's defaults: model output after ``<|start|>assistant``.
_DEFAULTS = ParseOptions(start="completion")


class StreamParser:
    """Incremental Harmony parser for a serving loop.

    The options are one :class:`~.options.ParseOptions` and its fields as keywords, as for
    :func:`~harmony_grammar.parse`, except that ``start`` defaults to ``completion`` (model
    output after ``<|start|>{role}``) when no ``options`` are given. With ``tools``, each
    call's arguments are checked as they stream; ``call_id`` makes the call events' ids.
    Feed either text (:meth:`feed`) or token ids (:meth:`feed_tokens`), not both.

    After ``<|call|>`` or ``<|return|>``, :attr:`stop_reason` is ``call`` or ``return`` and a
    :class:`~harmony_grammar.format.events.StopGeneration` event says so; when the model starts
    writing a tool's result itself, it is ``abort``.
    """

    def __init__(
        self, options: ParseOptions | None = None, **keywords: Unpack[ParseKeywords]
    ) -> None:
        self._events: list[Event] = []
        #: The options this stream parses with (the stream's defaults under the keywords).
        self.options = ParseOptions.of(_DEFAULTS if options is None else options, keywords)
        self._engine: Engine | None = None
        self._text: TextLexer | None = None
        self._tokens: TokenLexer | None = None
        self._closed = False
        self._end: int | None = None  # the input's length, once closed
        # The body paths of feed and feed_tokens (_refresh): the open body's content (one
        # per kind of input, None when closed), its ranges and its deltas.
        self._id_body: list[str] | None = None
        self._text_body: list[str] | None = None
        self._spans: list[int] = []
        self._deltas: dict[str, object] = {}
        self._make_delta: Callable[[str, Any], object] = content_delta
        self._opened = 0  # how many pieces the body held when the path opened
        self._delta_key: str | None = None
        self._texts: Sequence[str | None] = ()

    def _start(self, token_units: bool) -> Engine:
        if self._closed:
            raise RuntimeError("the parser is closed")
        if self._engine is None:
            reader = Engine if self.options.lenient else StrictEngine
            self._engine = reader(self.options, token_units=token_units, events=self._events)
            if token_units:
                encoding = load_encoding()
                self._texts = token_text_table(encoding)
                self._tokens = TokenLexer(
                    token_bytes_table(encoding),
                    self._engine,
                    self._texts,
                    per_token=self.options.tools is not None,  # as parse() does
                )
            else:
                self._text = TextLexer(self._engine)
        elif (self._tokens is not None) != token_units:
            raise TypeError("feed() text or feed_tokens() ids, not both, in one stream")
        return self._engine

    def _take(self) -> list[Event]:
        # Hand the list over and give the engine a fresh one: no copy per call.
        engine = self._engine
        if engine is None:
            return []
        events = engine.events or []
        engine.events = []
        return events

    def feed(self, text: str) -> list[Event]:
        """Parse a chunk of text; returns the events that became known.

        Raises ``TypeError`` for anything but ``str``, and when ids were fed before.
        """
        body = self._text_body
        if body is not None and type(text) is str and "<" not in text and "\n" not in text:
            # A chunk of a body that can hold no control token and no new line (the line
            # index is not asked): TextLexer.feed and Engine.text's work for it, in place.
            # The body's range and the lexer's offset are brought up to date once, when the
            # path closes (_settle).
            delta = self._deltas.get(text) or self._new_delta(text)
            body.append(text)  # its range and the lexer's offset: _settle
            return [delta]  # type: ignore[list-item]
        if not isinstance(text, str):
            raise TypeError(f"feed() takes str, not {type(text).__name__}; ids go to feed_tokens()")
        self._settle()
        self._start(token_units=False)
        assert self._text is not None
        self._text.feed(text)
        events = self._take()
        self._refresh()
        return events

    def feed_tokens(self, token_ids: Sequence[int]) -> list[Event]:
        """Parse more o200k_harmony token ids; returns the events that became known.

        Raises ``TypeError`` for anything but a sequence (and when text was fed before); an
        element that is not an integer is an HG106 diagnostic.
        """
        body = self._id_body
        if body is not None and type(token_ids) is list and len(token_ids) == 1:
            # One ordinary id inside a body: the serving loop's call, and the hottest path
            # there is. It does what TokenLexer.feed_one and Engine.text do for such an id
            # (see _refresh for when that holds): one more piece of content, one delta.
            token_id = token_ids[0]
            if type(token_id) is int and token_id >= 0:
                try:  # the table holds the ordinary ids: a special id is past its end
                    text = self._texts[token_id]
                except IndexError:
                    text = None
                if text is not None:
                    delta = self._deltas.get(text) or self._new_delta(text)
                    body.append(text)  # its range and the lexer's index: _settle
                    return [delta]  # type: ignore[list-item]
        self._settle()
        events = self._feed_tokens(token_ids)
        self._refresh()
        return events

    def _new_delta(self, text: str) -> object:
        """The open body's delta event of ``text``, made and shared as Engine.text does."""
        delta = self._make_delta(text, self._delta_key)
        if len(self._deltas) < _SHARED_DELTAS:
            self._deltas[text] = delta
        return delta

    def _feed_tokens(self, token_ids: Sequence[int]) -> list[Event]:
        lexer = self._tokens
        if lexer is not None and not self._closed and type(token_ids) is list:
            if len(token_ids) == 1:  # one id per call: the serving loop's path, kept short
                token_id = token_ids[0]
                if type(token_id) is int and 0 <= token_id < FIRST_SPECIAL_ID:
                    lexer.feed_one(token_id)
                    engine = self._engine
                    events = engine.events  # type: ignore[union-attr]
                    engine.events = []  # type: ignore[union-attr]
                    return events  # type: ignore[return-value]
            lexer.feed(token_ids)
            return self._take()
        token_sequence(token_ids, "feed_tokens()")
        if lexer is None or self._closed:  # the first call, or a misuse to report
            self._start(token_units=True)
            lexer = self._tokens
            assert lexer is not None
        lexer.feed(token_ids)
        return self._take()

    def _refresh(self) -> None:
        """Open the body path of :meth:`feed` or :meth:`feed_tokens` where the next piece of
        plain text is content and nothing else: a body already fed, no call arguments
        checked as they stream, nothing held back by the lexer. The path takes a piece
        whose text needs no check (text: no ``<``, no new line; ids: ``token_text_table``);
        anything else goes the lexer's way, and comes back here.
        """
        self._id_body = self._text_body = None
        engine = self._engine
        if engine is None or self._closed or engine.call_check is not None:
            return
        draft = engine.draft
        if draft is None or not draft.content_fed or not draft.content_spans:
            return
        self._spans, self._deltas = draft.content_spans, draft.deltas
        if draft.call_id is None:
            self._make_delta, self._delta_key = content_delta, draft.channel
        else:
            self._make_delta, self._delta_key = tool_call_delta, draft.call_id
        content, spans = draft.content, draft.content_spans
        assert content is not None  # content_fed: the body is open
        # Open only where the body's last range ends where the next piece begins: each piece
        # on the path then extends it (one id per piece, or its length: _settle counts).
        tokens, text = self._tokens, self._text
        if tokens is not None:
            if tokens.holds_nothing() and spans[-1] == tokens.index:
                self._id_body, self._opened = content, len(content)
        elif text is not None and not text.cuts.holds() and spans[-1] == text.cuts.offset:
            self._text_body, self._opened = content, len(content)

    def _settle(self) -> None:
        """Close the body path: the pieces it appended extend the body's last range and
        advance the lexer (one id per piece; for text, their length), as the lexer's way
        would have, before anything else reads them."""
        body = self._id_body
        if body is not None:
            lexer = self._tokens
            assert lexer is not None
            lexer.index += len(body) - self._opened
            self._spans[-1] = lexer.index
        body = self._text_body
        if body is not None:
            cuts = self._text.cuts  # type: ignore[union-attr]
            cuts.offset += sum(map(len, body[self._opened :]))  # the path's pieces only
            self._spans[-1] = cuts.offset
        self._id_body = self._text_body = None

    def close(self) -> list[Event]:
        """End of input: flush what was held back and report what is unfinished."""
        if self._closed:
            return []
        self._settle()
        engine = self._start(token_units=self._tokens is not None)
        end = self._tokens.close() if self._tokens is not None else self._text_close()
        engine.eof(end)
        self._end = end
        self._closed = True
        return self._take()

    def _text_close(self) -> int:
        assert self._text is not None
        return self._text.close()

    @property
    def stop_reason(self) -> str | None:
        """``call``, ``return`` or ``abort`` once generation must stop, else None."""
        return self._engine.stop_reason if self._engine is not None else None

    @property
    def should_stop(self) -> bool:
        """True once generation must stop."""
        return self.stop_reason is not None

    def result(self) -> ParseResult:
        """Messages and diagnostics so far (after :meth:`close`, equal to ``parse()``)."""
        engine = self._engine
        if engine is None:  # nothing fed yet: the mode stays open
            return ParseResult((), ())
        end = self._end
        if end is None:
            end = engine.diagnostics[-1].end if engine.diagnostics else 0
        return ParseResult(
            tuple(engine.messages),
            engine.overflow.cap(engine.diagnostics, end),
            engine.next_turn,
            engine.book.ledger(end),
        )
