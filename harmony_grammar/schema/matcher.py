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
        #: Texts rejected because llguidance's lexer ran out of room, not by the grammar.
        self.lexer_limits = 0

    def accepts(self, text: str) -> bool:
        """True when the whole of ``text`` is in the grammar's language (False, counted in
        ``lexer_limits``, when llguidance's lexer gives up on it)."""
        matcher = self._pristine.deep_copy()
        ok: bool = matcher.consume_tokens(list(text.encode("utf-8"))) and matcher.is_accepting()
        if not ok and matcher.is_error() and _LEXER_LIMIT in (matcher.get_error() or ""):
            # Copies share the lexer and its budget of derivatives (a 131072-character string
            # under maxLength 131072 spends it): once spent, every copy fails, even on `{}`.
            # A fresh matcher gets a fresh budget for the texts after this one.
            import llguidance

            self.lexer_limits += 1
            self._pristine = llguidance.LLMatcher(byte_tokenizer(), self.grammar, log_level=0)
        return ok


#: llguidance's error when its lexer has built too many regex derivatives.
_LEXER_LIMIT = "too many expressions constructed"
