"""Names that moved keep working for one release, with a warning that names their new home.

A module that lost names to a subpackage ends with::

    __getattr__ = moved_names(__name__, {"Span": ("harmony_grammar.format.Span", Span), ...})

Python calls a module's ``__getattr__`` only for names it does not hold (PEP 562), so the
names that stayed cost nothing, and ``from harmony_grammar import Span`` still works, with a
:class:`DeprecationWarning` pointing at the caller's line.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["moved_names"]


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
