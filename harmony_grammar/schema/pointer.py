"""JSON Pointer fragments of local ``$ref`` values (``#/$defs/name``), resolved in a schema."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

__all__ = ["follow_fragment", "resolve_local_ref"]


def follow_fragment(root: Any, fragment: str) -> Any:
    """The node at the JSON Pointer ``fragment`` (``/a/0``, already URL-unquoted) in ``root``,
    or None when some step is missing."""
    node = root
    for part in fragment.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def resolve_local_ref(root: Any, ref: str) -> Any:
    """The target of a local ``$ref`` (``#...``), or None when it is not local or missing."""
    return follow_fragment(root, unquote(ref[1:])) if ref.startswith("#") else None
