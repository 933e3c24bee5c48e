"""Does an ECMA-262 pattern find a match in a string? Decided by this package's own reading of
the pattern (:func:`~.regex.search_ir`), so ``patternProperties`` names are judged in the same
dialect as ``pattern`` values (``\\d`` is ASCII, ``.`` excludes line terminators, ``$`` only
at the end), not with Python's ``re`` (where ``\\d``, ``\\w`` and ``\\s`` are Unicode-aware).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema

from .regex import search_ir
from .render_regex import render_regex

__all__ = ["ecma_search", "ecma_validator_class"]


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    # search_ir is the language of whole strings that contain a match; rendered in Python's
    # syntax with explicit character ranges, a full match of it is an ECMA-262 search.
    return re.compile(render_regex(search_ir(pattern), "python"), re.DOTALL)


def ecma_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` (ECMA-262) finds a match in ``text``; raises
    :class:`~.regex.RegexError` for a pattern this package does not read."""
    return _compiled(pattern).fullmatch(text) is not None


def ecma_validator_class(
    cls: Any, search: Callable[[str, str], bool] = ecma_search
) -> Any:
    """The jsonschema validator class ``cls`` with ``pattern`` and ``patternProperties``
    decided by :func:`ecma_search`, so the reference validator (``enum`` candidates, the
    ``anyOf`` branch an instance takes) reads patterns as the grammar does. A pattern this
    package cannot read raises :class:`~.regex.RegexError`. ``search(pattern, text)`` may
    be another ECMA-262 engine (the tests' oracle uses ``regress``)."""
    return _extended(cls, search)


@functools.lru_cache(maxsize=16)
def _extended(cls: Any, search: Callable[[str, str], bool]) -> Any:
    def pattern(validator: Any, value: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(value, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {value!r}")

    def pattern_properties(
        validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for regex, subschema in patterns.items():
            for name, value in instance.items():
                if search(regex, name):
                    yield from validator.descend(value, subschema, path=name, schema_path=regex)

    def additional_properties(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        named, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        extras = [
            name for name in instance
            if name not in named and not any(search(p, name) for p in patterns)
        ]  # fmt: skip
        if validator.is_type(additional, "object"):
            for name in extras:
                yield from validator.descend(instance[name], additional, path=name)
        elif additional is False and extras:
            yield jsonschema.ValidationError(f"additional properties {extras!r}")

    return jsonschema.validators.extend(
        cls,
        {
            "pattern": pattern,
            "patternProperties": pattern_properties,
            "additionalProperties": additional_properties,
        },
    )
