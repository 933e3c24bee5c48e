"""How deep a decoded JSON value nests, found without recursion.

The lowest layer's answer to "is this value deeper than N?": the schema compiler refuses a
schema nested past its limit with it, and :mod:`harmony_grammar.tools.json_limits` answers it
for values that arrive already decoded (Arrow rows, a caller's dicts). Iterative, so a value a
thousand levels deep is an answer here, not a ``RecursionError`` in whatever walks it next.
"""

from __future__ import annotations

from typing import Any

__all__ = ["nesting_exceeds"]


def nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests dicts and lists (tuples too) deeper than ``limit`` levels."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
