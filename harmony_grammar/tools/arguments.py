"""Checking tool-call arguments while they stream, against the tool's JSON Schema.

A host that streams a tool call wants to know the first character after which no valid
argument document can follow, so it can stop generating there. llguidance's matcher over a
byte-level tokenizer answers that: it consumes bytes while some valid completion remains.

The streaming check must never cry wolf, so it uses a grammar of *any* JSON object: the
schema-derived grammars (``harmony_grammar.schema``) fix the property order, which is right
for generation but would reject valid arguments written in another order. When the document
is complete, it is validated against the schema with jsonschema, and the first failure is
reported with its JSON pointer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from ..base.deprecation import moved_names
from ..declarations import toolset as _toolset
from . import parameters as _parameters
from .json_limits import DepthTracker, JsonLimitError, json_message, loads_bounded

__all__ = ["ArgumentChecker", "first_schema_error"]


@functools.lru_cache(maxsize=1)
def _byte_tokenizer() -> Any:
    import llguidance

    return llguidance.LLTokenizer("byte")


@functools.lru_cache(maxsize=1)
def _object_grammar() -> str:
    # Our compiler's grammar of any object, in flexible whitespace: it accepts every JSON
    # spelling (llguidance's own %json grammar rejects escapes such as "\u0041").
    from ..schema import schema_to_grammar

    return schema_to_grammar(
        {"type": "object"}, target="llguidance", whitespace="flexible", float_safe=False
    )


class ArgumentChecker:
    """Feeds one tool call's argument text to a matcher and finds the first bad character."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        import llguidance

        self._schema = schema
        self._tokenizer = _byte_tokenizer()
        self._matcher = llguidance.LLMatcher(self._tokenizer, _object_grammar())
        self._chars = 0
        self._depth = DepthTracker()
        self.failed_at: int | None = None
        #: Why it failed: HG180 (no JSON object can follow) or HG182 (nested too deep).
        self.failure = "HG180"

    def feed(self, text: str) -> int | None:
        """Consume more argument text; the character offset of the first bad one, if any."""
        if self.failed_at is not None:
            return None
        too_deep = self._depth.feed(text)
        if too_deep is not None:
            # Stop before the matcher: it would grind through every level first.
            text = text[: too_deep - self._chars]
            if self._consume(text) is None:
                self.failed_at, self.failure = too_deep, "HG182"
            return self.failed_at
        return self._consume(text)

    def _consume(self, text: str) -> int | None:
        # A lone surrogate has no UTF-8 form: "?" stands in (one character for one, so offsets
        # hold), and the complete document's limit check reports it (HG184).
        data = text.encode("utf-8", errors="replace")
        tokens = self._tokenizer.tokenize_bytes(data)
        consumed = self._matcher.try_consume_tokens(tokens)
        if consumed < len(tokens):
            bad_char = len(data[:consumed].decode("utf-8", errors="ignore"))
            self.failed_at = self._chars + bad_char
            return self.failed_at
        self._chars += len(text)
        return None

    def complete(self) -> bool:
        """True when what was fed is a whole JSON object."""
        return self.failed_at is None and bool(self._matcher.is_accepting())

    def schema_error(self, document: str) -> str | None:
        """The first schema violation of the complete ``document``, with its JSON pointer."""
        return first_schema_error(self._schema, document)


def first_schema_error(schema: Mapping[str, Any], document: str) -> str | None:
    """``"at /pointer: message"`` for the first violation, or None when ``document`` is valid.

    Callers report a document over the limits of :mod:`.json_limits` with its own code first;
    here such a document is only described.
    """
    import jsonschema

    try:
        instance = loads_bounded(document)
    except JsonLimitError as exc:
        return f"not readable ({exc.limit.message})"
    except json.JSONDecodeError as exc:
        return f"not JSON ({json_message(exc)} at character {exc.pos})"
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        errors = sorted(
            validator_class(schema).iter_errors(instance), key=lambda e: list(e.absolute_path)
        )
    except RecursionError:
        # A recursive schema ($ref) over a document near the depth limit.
        return "the document nests too deep for the schema check"
    if not errors:
        return None
    error = errors[0]
    pointer = "".join(
        f"/{str(part).replace('~', '~0').replace('/', '~1')}" for part in error.absolute_path
    )
    return f"at {pointer or '/'}: {error.message}"


# Round 4's callers imported the tools-list readers from here; they live in the declarations
# layer (the one reader of a tools list) and beside the argument check (the schema's judge).
__getattr__ = moved_names(
    __name__,
    {
        **{
            name: (f"harmony_grammar.declarations.{name}", getattr(_toolset, name))
            for name in ("ToolsArgument", "tool_schemas", "tool_targets")
        },
        "schema_problem": (
            "harmony_grammar.tools.parameters.schema_problem",
            _parameters.schema_problem,
        ),
    },
)
