"""Checking texts against a compiled schema grammar with llguidance (an optional dependency).

llguidance's matcher over a byte-level tokenizer needs no vocabulary and is fast, so this is
what the conformance tests and benchmarks use to get a verdict per instance.
"""

from __future__ import annotations

import functools
from typing import Any

from .api import schema_to_grammar

__all__ = ["SchemaMatcher", "byte_tokenizer"]


@functools.lru_cache(maxsize=1)
def byte_tokenizer() -> Any:
    """llguidance's byte tokenizer (one token per byte)."""
    import llguidance

    return llguidance.LLTokenizer("byte")


class SchemaMatcher:
    """A schema's llguidance grammar, built once, answering ``accepts(text)``.

    The keyword options are :func:`~harmony_grammar.schema.schema_to_grammar`'s.
    """

    def __init__(
        self,
        schema: Any,
        *,
        whitespace: str = "compact",
        closed_objects: bool = False,
        float_safe: bool = True,
        escaped_ascii: bool = True,
    ) -> None:
        import llguidance

        self.grammar = schema_to_grammar(
            schema,
            target="llguidance",
            whitespace=whitespace,  # type: ignore[arg-type]
            closed_objects=closed_objects,
            float_safe=float_safe,
            escaped_ascii=escaped_ascii,
        )
        # Building a matcher compiles the grammar: build one, copy it per text (reset() does
        # not clear an error state). It reports what validate_grammar would, without a
        # second parse of the text.
        self._pristine = llguidance.LLMatcher(byte_tokenizer(), self.grammar, log_level=0)
        if self._pristine.is_error():
            raise ValueError(f"llguidance rejected the grammar: {self._pristine.get_error()}")

    def accepts(self, text: str) -> bool:
        """True when the whole of ``text`` is in the grammar's language."""
        matcher = self._pristine.deep_copy()
        ok: bool = matcher.consume_tokens(list(text.encode("utf-8"))) and matcher.is_accepting()
        return ok
