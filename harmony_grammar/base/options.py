"""The one idiom of the library's options objects.

Every options object (:class:`~harmony_grammar.format.options.ParseOptions`,
:class:`~harmony_grammar.rendering.options.RenderOptions`,
:class:`~harmony_grammar.generation.options.TurnOptions`, the batch tasks' options, the
gateway's config) is a frozen dataclass whose fields are keyword-only with defaults, made
once and changed with :func:`dataclasses.replace`, and inherits :class:`Options`. A function
that takes options takes one such object (``options``) and, beside it, keywords that are
exactly its fields; :meth:`Options.of` applies the keywords over the object (or over the
defaults), so ``parse(s, lenient=True)`` and ``parse(s, ParseOptions(lenient=True))`` are the
same call. A new option is one field, and every entry point has it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .deprecation import RENAMED_ATTRIBUTE, renamed_keyword

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Options"]


@functools.cache
def _field_names(cls: type) -> frozenset[str]:
    # Per class, once: dataclasses.fields() walks the class on every call (parse's keywords).
    return frozenset(field.name for field in dataclasses.fields(cls))


class Options:
    """The base of the options objects (see the module docstring): :meth:`of` and nothing
    else, so a subclass is a plain frozen dataclass."""

    __slots__ = ()

    @classmethod
    def of(cls, options: Self | None, keywords: Mapping[str, Any]) -> Self:
        """``options`` (the defaults when None) with ``keywords`` replacing its fields.

        An unknown keyword, or ``options`` of another type, is a ``TypeError`` naming it, as
        Python's own for a wrong argument. A renamed field's old keyword
        (:func:`~.deprecation.renamed_fields`) still works, with its warning; given with the
        new one, it is a ``TypeError``.
        """
        if options is not None and not isinstance(options, cls):
            raise TypeError(f"options must be a {cls.__name__}, not {type(options).__name__}")
        if not keywords:
            return cls() if options is None else options
        names = _field_names(cls)  # type: ignore[arg-type]
        renamed: Mapping[str, tuple[str, Any]] = getattr(cls, RENAMED_ATTRIBUTE, {})
        old = [name for name in keywords if name in renamed]
        if old:
            keywords = dict(keywords)
            for name in old:
                new, convert = renamed[name]
                if new in keywords:
                    raise TypeError(f"{name} and {new} say the same thing; pass {new} only")
                value = keywords.pop(name)
                renamed_keyword(
                    cls.__name__, f"{name}={value!r}", f"{new}={convert(value)!r}", stacklevel=3
                )
                keywords[new] = convert(value)
        unknown = sorted(set(keywords) - names)
        if unknown:
            raise TypeError(
                f"unknown {cls.__name__} option {unknown[0]!r}; the options: "
                + ", ".join(sorted(names))
            )
        if options is None:
            return cls(**keywords)
        return dataclasses.replace(options, **keywords)  # type: ignore[type-var]
