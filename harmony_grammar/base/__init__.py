"""What every layer stands on: the library's base error, its one str-enum base, and the
deprecation of names that moved.

Theory of operation
-------------------
:class:`~.errors.HarmonyGrammarError` is the base of every error the library raises on
purpose (a bad schema, a conversation that cannot be rendered, a dataset that cannot be read):
``except HarmonyGrammarError`` catches them all, and each keeps its built-in base
(``ValueError``, ...) so existing handlers still work. :class:`~.enums.StrEnum` is the base
of the data model's enums (a member prints as its value). :func:`~.deprecation.moved_names`
makes a module's ``__getattr__`` that keeps a moved name working for one release, with a
``DeprecationWarning`` naming its new home. :class:`~.options.Options` is the base of every
options object (one idiom: a frozen dataclass of keyword-only defaults, keywords beside it).

Imports: this package imports nothing of the library; every other subpackage may use it.
"""

from __future__ import annotations

from .deprecation import moved_names
from .enums import StrEnum
from .errors import HarmonyGrammarError
from .options import Options

__all__ = ["HarmonyGrammarError", "Options", "StrEnum", "moved_names"]
