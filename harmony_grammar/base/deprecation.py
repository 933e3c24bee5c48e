"""Names that moved keep working for one release, with a warning that names their new home.

A module that lost names to a subpackage ends with::

    __getattr__ = moved_names(__name__, {"Span": ("harmony_grammar.format.Span", Span), ...})

Python calls a module's ``__getattr__`` only for names it does not hold (PEP 562), so the
names that stayed cost nothing, and ``from harmony_grammar import Span`` still works, with a
:class:`DeprecationWarning` pointing at the caller's line.

An options object whose fields moved into an options object it embeds (``PrepareOptions``'s
``profile`` into its ``render: RenderOptions``) is decorated with :func:`moved_fields`: the old
keyword still constructs it, and the old attribute still reads, each with the same warning.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["moved_fields", "moved_names"]

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
        warnings.warn(
            f"{module}.{name} moved to {new_name}: import it from there "
            "(the old name goes away in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__


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
