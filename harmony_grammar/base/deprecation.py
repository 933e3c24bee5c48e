"""Names that moved keep working for one release, with a warning that names their new home.

A module that lost names to a subpackage ends with::

    __getattr__ = moved_names(__name__, {"Span": ("harmony_grammar.format.Span", Span), ...})

Python calls a module's ``__getattr__`` only for names it does not hold (PEP 562), so the
names that stayed cost nothing, and ``from harmony_grammar import Span`` still works, with a
:class:`DeprecationWarning` pointing at the caller's line.

An options object whose fields moved into an options object it embeds (``PrepareOptions``'s
``profile`` into its ``render: RenderOptions``) is decorated with :func:`moved_fields`: the old
keyword still constructs it, and the old attribute still reads, each with the same warning.
One whose field was renamed (``ParseOptions``' ``strict`` is ``lenient`` now, its negation) is
decorated with :func:`renamed_fields`, to the same effect; :func:`renamed_keyword` is the
warning for a plain function's keyword that was renamed.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["moved_fields", "moved_names", "renamed_fields", "renamed_keyword", "warn_moved"]

_C = TypeVar("_C", bound=type)


def moved_names(module: str, moved: Mapping[str, tuple[str, Any]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: ``moved[name] = (new_name, value)``, the
    new name dotted in full (``harmony_grammar.format.Span``; a renamed one under its new name).

    Looking up a moved name warns (``DeprecationWarning``: "``module.name`` moved to
    ``new_name``") and returns the value; any other unknown name is an AttributeError.
    """

    def __getattr__(name: str) -> Any:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new_name, value = moved[name]
        warn_moved(f"{module}.{name}", new_name)
        return value

    return __getattr__


def warn_moved(old_name: str, new_name: str, *, stacklevel: int = 2) -> None:
    """The one warning of a moved name: "``old_name`` moved to ``new_name``" (both dotted in
    full), a :class:`DeprecationWarning` at the caller's caller by default."""
    warnings.warn(
        f"{old_name} moved to {new_name}: import it from there "
        "(the old name goes away in the next release)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def moved_fields(into: str, names: Mapping[str, str]) -> Callable[[_C], _C]:
    """A class decorator for a frozen dataclass whose fields ``names`` (old name: the field's
    name in the embedded object) moved into its field ``into`` (an options object with
    defaults, made by the field's ``default_factory``).

    ``Cls(old=value)`` warns (``DeprecationWarning``: "``Cls(old=...)`` moved to
    ``Cls(into=...(new=...))``") and sets the value on ``into``'s object (given or default);
    reading ``obj.old`` warns and returns ``obj.into.new``.
    """

    def decorate(cls: _C) -> _C:
        init = cls.__init__  # type: ignore[misc]
        embedded = {f.name: f for f in dataclasses.fields(cls)}[into]

        def _warn(old: str, stacklevel: int) -> None:
            warnings.warn(
                f"{cls.__name__}({old}=...) moved to {cls.__name__}({into}=...({names[old]}=...)) "
                "(the old keyword goes away in the next release)",
                DeprecationWarning,
                stacklevel=stacklevel,
            )

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **keywords: Any) -> None:
            old = {name: keywords.pop(name) for name in list(keywords) if name in names}
            if old:
                for name in old:
                    _warn(name, 3)
                base = keywords.get(into)
                if base is None:
                    base = embedded.default_factory()  # type: ignore[operator]
                keywords[into] = dataclasses.replace(
                    base, **{names[name]: value for name, value in old.items()}
                )
            init(self, *args, **keywords)

        def __getattr__(self: Any, name: str) -> Any:
            # Only for names the object does not hold: the moved ones, read from ``into``.
            if name not in names:
                raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")
            _warn(name, 3)
            return getattr(getattr(self, into), names[name])

        cls.__init__ = __init__  # type: ignore[misc]
        cls.__getattr__ = __getattr__  # type: ignore[attr-defined]
        return cls

    return decorate


#: What :func:`renamed_fields` records on a class: old keyword -> (new field, conversion).
RENAMED_ATTRIBUTE = "__renamed_fields__"


def renamed_keyword(where: str, old: str, new: str, *, stacklevel: int = 2) -> None:
    """The one warning of a renamed keyword: "``where(old)`` is ``where(new)`` now", a
    :class:`DeprecationWarning` at the caller's caller by default. ``old`` and ``new`` are
    spelled as the caller writes them (``strict=False``, ``lenient=True``)."""
    warnings.warn(
        f"{where}({old}) is {where}({new}) now (the old keyword goes away in the next release)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def renamed_fields(renames: Mapping[str, tuple[str, Callable[[Any], Any]]]) -> Callable[[_C], _C]:
    """A class decorator for a frozen dataclass whose fields were renamed: ``renames[old] =
    (new, convert)``, ``convert`` mapping an old value to the new field's and back (an
    involution: the identity for a plain rename, ``operator.not_`` for a negated flag).

    ``Cls(old=value)`` warns (:func:`renamed_keyword`) and sets ``new`` to ``convert(value)``;
    given with ``new`` as well (as :func:`dataclasses.replace` passes every field), the old
    keyword wins, since it can only have been meant. Reading ``obj.old`` warns and returns
    ``convert(obj.new)``. The renames are recorded on the class (:data:`RENAMED_ATTRIBUTE`),
    where :meth:`harmony_grammar.base.options.Options.of` reads them.
    """

    def decorate(cls: _C) -> _C:
        init = cls.__init__  # type: ignore[misc]

        def _warn(old: str, value: Any, stacklevel: int) -> None:
            new, convert = renames[old]
            renamed_keyword(
                cls.__name__,
                f"{old}={value!r}",
                f"{new}={convert(value)!r}",
                stacklevel=stacklevel + 1,
            )

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **keywords: Any) -> None:
            for old in [name for name in keywords if name in renames]:
                value = keywords.pop(old)
                _warn(old, value, 2)
                new, convert = renames[old]
                keywords[new] = convert(value)
            init(self, *args, **keywords)

        def __getattr__(self: Any, name: str) -> Any:
            # Only for names the object does not hold: the renamed ones.
            if name not in renames:
                raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")
            new, convert = renames[name]
            value = convert(getattr(self, new))
            _warn(name, value, 2)
            return value

        cls.__init__ = __init__  # type: ignore[misc]
        cls.__getattr__ = __getattr__  # type: ignore[attr-defined]
        setattr(cls, RENAMED_ATTRIBUTE, dict(renames))
        return cls

    return decorate
