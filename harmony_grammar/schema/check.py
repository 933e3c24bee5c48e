"""Is the schema a JSON Schema at all? Checked before compiling, so that a malformed schema is
one documented error (:class:`~.errors.InvalidSchemaError`) rather than whatever a keyword
builder happens to raise on a value of the wrong type.
"""

from __future__ import annotations

import functools
import math
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

import jsonschema
import jsonschema_specifications  # type: ignore[import-untyped]
import referencing.exceptions

from .errors import InvalidSchemaError

__all__ = ["check_schema"]

#: Keywords whose value maps names to schemas, holds a list of schemas, or is one schema: the
#: walk from the document root to an error uses them to tell keywords from names.
_SCHEMA_MAPS = frozenset({
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
})  # fmt: skip
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset({
    "not", "if", "then", "else", "additionalProperties", "additionalItems", "contains",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems", "items",
})  # fmt: skip


def check_schema(schema: Any, validator_class: Any) -> None:
    """Raise :class:`InvalidSchemaError` unless ``schema`` is valid under the meta-schema of
    ``validator_class`` (its draft; without ``$schema``, draft 2020-12, where draft 7's
    ``items: [...]`` is also valid) and every number in it is finite.

    Formats in the meta-schema (``format: regex`` on ``pattern``) are not asserted here: the
    compiler reads patterns as ECMA-262 itself, and Python's ``re`` would misjudge them.
    """
    # Most schemas are valid: a yes from the linked meta-schema is the answer; a no is
    # explained by the meta-schema itself, so errors read exactly as they always did.
    valid = _linked_meta_validator(validator_class).is_valid(schema)
    errors = [] if valid else _meta_errors(schema, validator_class)
    error = jsonschema.exceptions.best_match(errors)
    # Without `$schema`, draft-07's `items: [...]` is common in the wild and the compiler
    # reads it. Tolerated only when that is all draft 2020-12 objects to (every other
    # keyword still meets 2020-12) and draft 7 accepts the schema, arrays included.
    undeclared = not (isinstance(schema, dict) and "$schema" in schema)
    if error is not None and undeclared and all(_draft7_items(e) for e in errors):
        draft7 = jsonschema.exceptions.best_match(_meta_errors(schema, jsonschema.Draft7Validator))
        # Report whichever draft's complaint points deeper: it names the culprit.
        if draft7 is None or len(draft7.absolute_path) > len(error.absolute_path):
            error = draft7
    if error is not None:
        path = list(error.absolute_path)
        raise InvalidSchemaError(_keyword(path), _pointer(path), error.message)
    for path, number in _numbers(schema, []):
        if not math.isfinite(number):
            raise InvalidSchemaError(_keyword(path), _pointer(path), f"{number} is not finite")


def _meta_errors(schema: Any, validator_class: Any) -> list[Any]:
    meta = validator_class(validator_class.META_SCHEMA)
    return list(meta.iter_errors(schema))


@functools.cache
def _linked_meta_validator(validator_class: Any) -> Any:
    """A validator for ``validator_class``'s meta-schema with every reference resolved once.

    jsonschema resolves ``$ref``/``$dynamicRef`` at each use (URL joins, registry look-ups):
    checking a schema against draft 2020-12's meta-schema, whose seven vocabularies each
    refer back to it for every subschema, cost more than compiling the schema. Here each
    reference is replaced by the very dict it names (cycles included), so validation only
    descends. The answer is the same: in a meta-schema a ``$dynamicRef: "#meta"`` or
    ``$recursiveRef: "#"`` names the root meta-schema, and every reference stands alone or
    beside annotations. Where a meta-schema does not fit that (another jsonschema release),
    the original is used.
    """
    meta = validator_class.META_SCHEMA
    root_uri = str(meta.get("$id", meta.get("id", ""))).rstrip("#")
    try:
        linked = _Linker(root_uri).document(root_uri, "")
    except (KeyError, ValueError, LookupError, referencing.exceptions.Unresolvable):
        linked = meta
    return validator_class(linked)


#: Keywords that only annotate: a reference beside them may stand for the whole dict.
_ANNOTATIONS = frozenset({"$comment", "deprecated", "description", "title", "default"})
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


class _Linker:
    """Copies meta-schema documents, each reference replaced by its (copied) target."""

    def __init__(self, root_uri: str) -> None:
        self.root_uri = root_uri
        self.legacy = "json-schema.org/draft-0" in root_uri
        self.done: dict[tuple[str, str], Any] = {}  # (document, pointer) -> linked copy

    def target(self, ref: str, keyword: str, base: str) -> Any:
        if keyword != "$ref":  # "#meta" (2020-12) and "#" (2019-09): the root meta-schema
            if ref not in ("#meta", "#"):
                raise ValueError(f"unexpected {keyword} {ref!r}")
            return self.document(self.root_uri, "")
        uri, _, fragment = urllib.parse.urljoin(base + "#", ref).partition("#")
        return self.document(uri or base, fragment)

    def document(self, uri: str, pointer: str) -> Any:
        key = (uri, pointer)
        if key not in self.done:
            contents = jsonschema_specifications.REGISTRY.contents(uri)
            for part in filter(None, pointer.split("/")):
                contents = contents[part.replace("~1", "/").replace("~0", "~")]
            self.done[key] = {}  # placeholder: a cycle back here finds it
            linked = self.schema(contents, uri)
            if isinstance(linked, dict) and isinstance(self.done[key], dict):
                self.done[key].update(linked)
                linked = self.done[key]
            self.done[key] = linked
        return self.done[key]

    def schema(self, node: Any, base: str) -> Any:
        if not isinstance(node, dict):
            return node
        refs = [k for k in _REFERENCES if k in node]
        if len(refs) > 1:
            raise ValueError(f"two references in one schema: {sorted(node)}")
        also: Any = None
        if refs:
            target = self.target(node[refs[0]], refs[0], base)
            # Up to draft 7 a reference replaces its siblings; from 2019-09 on they apply too.
            if self.legacy or not set(node) - {refs[0], *_ANNOTATIONS}:
                return target
            if "allOf" in node:
                raise ValueError(f"a reference beside allOf: {sorted(node)}")
            also = target
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in (*_REFERENCES, "$id", "id", "$schema"):
                continue  # resolved above; identifiers: nothing is resolved any more
            if key in _SCHEMA_MAPS or key == "dependencies":
                out[key] = {name: self.schema(v, base) for name, v in value.items()}
            elif key in _SCHEMA_LISTS or (key == "items" and isinstance(value, list)):
                out[key] = [self.schema(v, base) for v in value]
            elif key in _SCHEMA_VALUES or key == "contentSchema":
                out[key] = self.schema(value, base)
            else:
                out[key] = value
        if also is not None:
            out["allOf"] = [also]
        return out


def _draft7_items(error: Any) -> bool:
    """Whether ``error`` is draft 2020-12 refusing draft 7's array form of ``items``."""
    path = error.absolute_path
    return bool(path) and path[-1] == "items" and isinstance(error.instance, list)


def _numbers(node: Any, path: list[Any]) -> Iterator[tuple[list[Any], float]]:
    if isinstance(node, float):
        yield path, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, [*path, key])
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _numbers(value, [*path, i])


def _keyword(path: Sequence[Any]) -> str:
    """The last keyword on the way from the root to ``path`` (names and indexes skipped)."""
    keyword = ""
    kind = "schema"
    for part in path:
        if kind == "schema" or (kind == "items" and not isinstance(part, int)):
            keyword = str(part)
            kind = (
                "map" if part in _SCHEMA_MAPS
                else "list" if part in _SCHEMA_LISTS
                else "items" if part == "items"
                else "schema" if part in _SCHEMA_VALUES
                else "value"
            )  # fmt: skip
        elif kind in ("map", "list", "items"):
            kind = "schema"
        else:
            break
    return keyword


def _pointer(path: Sequence[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
