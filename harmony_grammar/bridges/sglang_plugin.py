"""harmony-grammar's streaming reader as SGLang's gpt-oss parsers: a ``sglang.srt.plugins``
entry point.

    SGLANG_PLUGINS=harmony_grammar python -m sglang.launch_server \\
        --model-path openai/gpt-oss-20b \\
        --reasoning-parser harmony-grammar --tool-call-parser harmony-grammar

SGLang loads its general plugins before it parses its arguments; :func:`register` adds a
tool-call detector and a reasoning detector under the name ``harmony-grammar`` to SGLang's
class-level registries (``FunctionCallParser.ToolCallParserEnum``,
``ReasoningParser.DetectorMap``), which are read per request. Both read the model's Harmony
text with :class:`~harmony_grammar.format.stream.StreamParser` (lenient: the deviations real
models write are repaired, not dropped), through :class:`HarmonySplit`, which this module
owns and which needs no SGLang.

* The reasoning detector gives the ``analysis`` channel as reasoning. With a tool-call
  parser after it (SGLang says so with ``tool_call_parser_active``) it passes every other
  message on as canonical Harmony for that parser, as it streams; without one it passes
  their content as text, and a call as its canonical markup (SGLang's own gpt-oss detector
  does the same).
* The tool-call detector gives content as text and each call whole once its arguments are
  complete: at ``<|call|>``, or when the stream ends (``finish``: SGLang trims the stop
  token from the text). Analysis that reaches it (no reasoning parser) is passed on as text,
  so nothing the model wrote is lost.

SGLang's classes are imported only in :func:`detector_classes` and :func:`register`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..format.events import ContentDelta, HeaderComplete, ToolCallDelta, ToolCallEnd, ToolCallStart
from ..format.stream import StreamParser

__all__ = ["NAME", "Call", "DetectorPiece", "HarmonySplit", "detector_classes", "register"]

#: The parser name for ``--tool-call-parser`` and ``--reasoning-parser``.
NAME = "harmony-grammar"
#: How far into a text a control token must appear for it to be read as Harmony.
_DECIDE = 256


@dataclass(frozen=True)
class Call:
    """A complete tool call: the function's name (no ``functions.``), its recipient and
    its arguments as written."""

    name: str
    recipient: str
    arguments: str


@dataclass(frozen=True)
class DetectorPiece:
    """One thing the text held, in order. ``kind`` is ``text`` (``channel``, ``text``, and
    ``begins`` for a message's first piece), ``call_start`` (``call`` holds the name and
    recipient), ``call_text`` (a piece of the arguments) or ``call`` (the whole call)."""

    kind: str
    text: str = ""
    channel: str = "final"
    begins: bool = False
    call: Call | None = None


class HarmonySplit:
    """A completion's Harmony text, read incrementally by the lenient streaming reader.

    Text that is not Harmony at all (no control token in its first 256 characters) is final
    content as it is: the reader would otherwise skip it as unexpected text.
    """

    def __init__(self) -> None:
        self._parser = StreamParser()
        self._plain: bool | None = None  # decided by the first non-blank characters
        self._pending = ""
        self._open: dict[str, Call] = {}  # call id -> the call so far
        self._begun = False

    def feed(self, text: str) -> list[DetectorPiece]:
        """The pieces ``text`` completed."""
        if self._plain is None:
            # Undecided until a control token shows up near the start: a completion's first
            # header (``analysis<|message|>``, `` to=functions.f<|channel|>...``) comes
            # before its first control token; text with none in its first 256 characters
            # is not Harmony.
            self._pending += text
            if "<|" not in self._pending[:_DECIDE] and len(self._pending) < _DECIDE:
                return []
            self._plain = "<|" not in self._pending[:_DECIDE]
            text, self._pending = self._pending, ""
        if self._plain:
            return [DetectorPiece("text", text)] if text else []
        return self._pieces(self._parser.feed(text))

    def close(self) -> list[DetectorPiece]:
        """What the end of the text completes: a call cut where SGLang trimmed ``<|call|>``."""
        if self._plain is None:
            self._plain = "<|" not in self._pending
            text, self._pending = self._pending, ""
            if self._plain:
                return [DetectorPiece("text", text)] if text else []
            pieces = self._pieces(self._parser.feed(text))
            return pieces + self.close()
        if self._plain is not False:
            return []
        pieces = self._pieces(self._parser.close())
        pieces += [DetectorPiece("call", call=call) for call in self._open.values()]
        self._open.clear()
        return pieces

    def _pieces(self, events: list[Any]) -> list[DetectorPiece]:
        pieces: list[DetectorPiece] = []
        for event in events:
            if isinstance(event, HeaderComplete):
                self._begun = True
            elif isinstance(event, ContentDelta):
                channel = event.channel or "final"
                pieces.append(DetectorPiece("text", event.text, channel, self._begun))
                self._begun = False
            elif isinstance(event, ToolCallStart):
                self._begun = False
                call = Call(event.name, event.recipient, "")
                self._open[event.call_id] = call
                pieces.append(DetectorPiece("call_start", call=call))
            elif isinstance(event, ToolCallDelta):
                call = self._open[event.call_id]
                grown = Call(call.name, call.recipient, call.arguments + event.text)
                self._open[event.call_id] = grown
                pieces.append(DetectorPiece("call_text", event.text))
            elif isinstance(event, ToolCallEnd):
                call = self._open.pop(event.call_id)
                done = Call(call.name, call.recipient, event.arguments)
                pieces.append(DetectorPiece("call", call=done))
        return pieces


class _Canonical:
    """Pieces back as canonical Harmony text, for the tool-call detector after the
    reasoning detector (the first message has no ``<|start|>assistant``, as a completion)."""

    def __init__(self) -> None:
        self.first = True
        self.open = False  # a text message is written and not yet ended

    def _start(self) -> str:
        start = "<|end|>" if self.open else ""
        start += "" if self.first else "<|start|>assistant"
        self.first = False
        return start

    def write(self, pieces: list[DetectorPiece], *, markup: bool) -> str:
        out: list[str] = []
        for piece in pieces:
            if piece.kind == "text" and piece.channel != "analysis":
                if markup and piece.begins:
                    out.append(f"{self._start()}<|channel|>{piece.channel}<|message|>")
                    self.open = True
                out.append(piece.text)
            elif piece.kind == "call_start" and piece.call is not None:
                header = f"<|channel|>commentary to={piece.call.recipient} <|constrain|>json"
                out.append(f"{self._start()}{header}<|message|>")
                self.open = False
            elif piece.kind == "call_text":
                out.append(piece.text)
            elif piece.kind == "call":
                out.append("<|call|>")
        return "".join(out)


def _reasoning(pieces: list[DetectorPiece]) -> str:
    return "".join(p.text for p in pieces if p.kind == "text" and p.channel == "analysis")


def detector_classes() -> tuple[type[Any], type[Any]]:
    """SGLang's tool-call and reasoning detector classes backed by :class:`HarmonySplit`."""
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector
    from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

    class HarmonyGrammarDetector(BaseFormatDetector):  # type: ignore[misc]
        """``--tool-call-parser harmony-grammar``."""

        def __init__(self) -> None:
            super().__init__()
            self.bot_token = "<|channel|>commentary to="
            self.eot_token = "<|call|>"
            self._split = HarmonySplit()

        def has_tool_call(self, text: str) -> bool:
            # True for any Harmony markup, call or not: SGLang hands the text back untouched
            # when this is false, and markup must never reach the client as content.
            return "<|channel|>" in text or "<|start|>" in text

        def _result(self, pieces: list[DetectorPiece]) -> Any:
            # Every text piece is content here, analysis included (nothing is dropped when
            # no reasoning parser took it first).
            text = "".join(p.text for p in pieces if p.kind == "text")
            items = []
            for piece in pieces:
                if piece.kind != "call" or piece.call is None:
                    continue
                call = piece.call
                # tool_index is the call's place in the answer (SGLang streams by it), as
                # SGLang's own gpt-oss detector numbers them; the serving layer reads the
                # two arrays when the stream ends.
                self.current_tool_id += 1
                self.prev_tool_call_arr.append({"name": call.name, "arguments": call.arguments})
                self.streamed_args_for_tool.append(call.arguments)
                items.append(
                    ToolCallItem(
                        tool_index=self.current_tool_id, name=call.name, parameters=call.arguments
                    )
                )
            return StreamingParseResult(normal_text=text, calls=items)

        def detect_and_parse(self, text: str, tools: list[Any]) -> Any:
            reader = HarmonySplit()
            return self._result(reader.feed(text) + reader.close())

        def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> Any:
            return self._result(self._split.feed(new_text))

        def finish(self, tools: list[Any]) -> Any:
            return self._result(self._split.close())

        def structure_info(self) -> Any:
            raise NotImplementedError("the harmony-grammar detector constrains no structure")

    class HarmonyGrammarReasoningDetector(BaseReasoningFormatDetector):  # type: ignore[misc]
        """``--reasoning-parser harmony-grammar``."""

        def __init__(
            self,
            stream_reasoning: bool = True,
            force_reasoning: bool = True,
            continue_final_message: bool = False,
            previous_content: str = "",
            force_nonempty_content: bool = False,
            tool_call_parser_active: bool = False,
        ) -> None:
            super().__init__(
                "<|channel|>analysis<|message|>",
                "<|end|>",
                force_reasoning=force_reasoning,
                stream_reasoning=stream_reasoning,
                continue_final_message=continue_final_message,
                previous_content=previous_content,
                force_nonempty_content=force_nonempty_content,
            )
            self._split = HarmonySplit()
            self._canonical = _Canonical()
            self._markup = tool_call_parser_active

        def _result(self, pieces: list[DetectorPiece], canonical: _Canonical) -> Any:
            normal = canonical.write(pieces, markup=self._markup)
            return ReasoningResult(normal_text=normal, reasoning_text=_reasoning(pieces))

        def detect_and_parse(self, text: str) -> Any:
            reader = HarmonySplit()
            return self._result(reader.feed(text) + reader.close(), _Canonical())

        def parse_streaming_increment(self, new_text: str) -> Any:
            return self._result(self._split.feed(new_text), self._canonical)

        def finish(self) -> Any:
            return self._result(self._split.close(), self._canonical)

    return HarmonyGrammarDetector, HarmonyGrammarReasoningDetector


def register() -> None:
    """The entry point: both detectors into SGLang's registries under :data:`NAME`."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    tool, reasoning = detector_classes()
    FunctionCallParser.ToolCallParserEnum[NAME] = tool
    ReasoningParser.DetectorMap[NAME] = reasoning
