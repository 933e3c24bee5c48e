"""The order in which generated objects write their properties.

A generation grammar fixes one key order per object (a grammar that allowed every order would
be exponential). :func:`property_rank` decides it; :func:`sort_keys` writes an instance in it,
so tests and benchmarks can give the grammar what it accepts.
"""

from __future__ import annotations

from typing import Any

__all__ = ["property_rank", "sort_keys"]


def property_rank(root: Any) -> dict[str, int]:
    """The canonical property order: names ranked as a depth-first walk of the document meets
    them, a whole ``properties`` block at once (also ``required``, ``dependentRequired`` and
    ``dependencies``), so the root object keeps its declared order. Every object of the
    schema lists its properties in this order: one schema, one key order
    (docs/schema-grammar.md).
    """
    rank: dict[str, int] = {}

    def add(names: Any) -> None:
        for name in names:
            if isinstance(name, str):
                rank.setdefault(name, len(rank))

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if key in ("properties", "dependentRequired", "dependencies") and isinstance(
                value, dict
            ):
                add(value)
                if key != "properties":
                    for deps in value.values():
                        if isinstance(deps, list):
                            add(deps)
            elif key == "required" and isinstance(value, list):
                add(value)
            if key not in ("enum", "const", "default", "examples"):
                walk(value)

    walk(root)
    return rank


def sort_keys(value: Any, rank: dict[str, int]) -> Any:
    """``value`` with every object's keys in canonical order (ranked names, then the rest)."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (0, rank[k], "") if k in rank else (1, 0, k))
        return {k: sort_keys(value[k], rank) for k in keys}
    if isinstance(value, list):
        return [sort_keys(v, rank) for v in value]
    return value
