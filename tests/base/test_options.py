"""The one options idiom (base/options.py): every options object is a frozen dataclass of
keyword-only fields with defaults, inherits ``Options``, and is changed with ``replace``;
fields that moved into an embedded options object keep working for one release."""

from __future__ import annotations

import ast
import dataclasses
import warnings
from pathlib import Path
from typing import Any

import pytest

from harmony_grammar.audit.batch import AuditOptions, audit_record
from harmony_grammar.base.options import Options
from harmony_grammar.format.options import ParseOptions
from harmony_grammar.gateway.config import GatewayConfig
from harmony_grammar.generation.options import TurnGrammarError, TurnOptions, turn_options
from harmony_grammar.rendering.options import DropRule, RenderOptions
from harmony_grammar.rendering.profiles import DEFAULT_PROFILE, get_profile
from harmony_grammar.training.batch import PrepareOptions
from harmony_grammar.validation.batch import BatchOptions

PACKAGE = Path(__file__).resolve().parents[2] / "harmony_grammar"

#: Every options object of the library, and one field with a value other than its default.
OPTIONS: dict[type[Options], tuple[str, Any]] = {
    ParseOptions: ("lenient", True),
    RenderOptions: ("next_turn", "assistant"),
    TurnOptions: ("tool_choice", "none"),
    PrepareOptions: ("max_length", 7),
    AuditOptions: ("mask", "labels"),
    BatchOptions: ("field", "messages"),
    GatewayConfig: ("model", "other"),
}


def _options_classes_in_source() -> set[str]:
    """The names of the classes the package defines that look like options objects: those
    inheriting ``Options``, and any dataclass named ``*Options`` or ``*Config``."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or node.name == "Options":
                continue
            bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
            if "Options" in bases or node.name.endswith(("Options", "Config")):
                found.add(node.name)
    return found


def _fields(options: Any) -> dict[str, Any]:
    """The fields of ``options`` but those whose default is made fresh and unequal each time
    (the gateway's random reasoning-seal key)."""
    cls = type(options)
    fresh = {
        f.name for f in dataclasses.fields(cls) if getattr(cls(), f.name) != getattr(cls(), f.name)
    }
    return {
        f.name: getattr(options, f.name) for f in dataclasses.fields(cls) if f.name not in fresh
    }


def test_the_table_holds_every_options_class_of_the_package():
    assert _options_classes_in_source() == {cls.__name__ for cls in OPTIONS}


@pytest.mark.parametrize("cls", list(OPTIONS), ids=lambda c: c.__name__)
def test_each_options_class_is_a_frozen_dataclass_of_keyword_defaults(cls: type[Options]):
    assert dataclasses.is_dataclass(cls) and issubclass(cls, Options)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    for field in dataclasses.fields(cls):
        assert field.kw_only, f"{cls.__name__}.{field.name} is not keyword-only"
        has_default = field.default is not dataclasses.MISSING
        assert has_default or field.default_factory is not dataclasses.MISSING, field.name
    default = cls()
    name, value = OPTIONS[cls]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(default, name, value)
    changed = dataclasses.replace(default, **{name: value})
    assert getattr(changed, name) == value and changed != default
    # of(): keywords over the defaults or over a given object; none: the object itself.
    assert _fields(cls.of(None, {})) == _fields(default)
    assert _fields(cls.of(None, {name: value})) == _fields(changed)
    assert cls.of(default, {name: value}) == changed
    assert cls.of(changed, {}) is changed
    with pytest.raises(TypeError, match=r"unknown \w+ option 'no_such_option'"):
        cls.of(None, {"no_such_option": 1})
    with pytest.raises(TypeError, match=f"must be a {cls.__name__}"):
        cls.of({name: value}, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cls(default)  # type: ignore[misc]  # keyword-only: no positional fields


def test_the_turn_grammar_keeps_its_own_error_for_an_unknown_option():
    with pytest.raises(TurnGrammarError, match="unknown TurnOptions option 'toolchoice'"):
        turn_options(toolchoice="auto")
    assert turn_options(TurnOptions(tool_choice="none"), allow_analysis=False) == TurnOptions(
        tool_choice="none", allow_analysis=False
    )


def test_the_default_profile_comes_from_the_profiles():
    assert PrepareOptions().render.spec is get_profile(DEFAULT_PROFILE)
    assert AuditOptions().render == RenderOptions()


@pytest.mark.parametrize(
    ("cls", "into", "old"),
    [
        (PrepareOptions, "render", {"profile": "oss-harmony-0.0.11"}),
        (PrepareOptions, "render", {"auto_drop_analysis": False, "drop_rule": "every-final"}),
        (AuditOptions, "render", {"drop_rule": DropRule.EVERY_FINAL}),
        (BatchOptions, "parse", {"start": "completion"}),
        (BatchOptions, "parse", {"tools": [{"name": "f", "parameters": {"type": "object"}}]}),
    ],
)
def test_moved_fields_still_construct_and_read_with_a_warning(
    cls: type[Any], into: str, old: dict[str, Any]
):
    embedded = type(getattr(cls(), into))
    expected = cls(**{into: embedded(**old)})
    with pytest.warns(DeprecationWarning) as caught:
        made = cls(**old)
    assert sorted(str(w.message) for w in caught) == sorted(
        f"{cls.__name__}({name}=...) moved to {cls.__name__}({into}=...({name}=...)) "
        "(the old keyword goes away in the next release)"
        for name in old
    )
    assert {w.filename for w in caught} == {__file__}  # the warning names the caller's line
    assert made == expected
    for name in old:
        with pytest.warns(DeprecationWarning, match=f"moved to {cls.__name__}"):
            assert getattr(made, name) == getattr(getattr(expected, into), name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling warns about nothing
        assert getattr(cls(**{into: embedded(**old)}), into) == getattr(expected, into)
    with pytest.raises(AttributeError):
        made.no_such_field  # noqa: B018


def test_batch_options_strict_moved_and_renamed_warns_for_both():
    """``BatchOptions(strict=...)`` moved into ``parse`` (``ParseOptions``), where ``strict``
    is ``lenient`` now (negated): both moves are named, and the value lands as ``lenient``."""
    with pytest.warns(DeprecationWarning) as caught:
        made = BatchOptions(strict=False)
    assert sorted(str(w.message) for w in caught) == [
        "BatchOptions(strict=...) moved to BatchOptions(parse=...(strict=...)) "
        "(the old keyword goes away in the next release)",
        "ParseOptions(strict=False) is ParseOptions(lenient=True) now "
        "(the old keyword goes away in the next release)",
    ]
    assert made.parse.lenient is True and made == BatchOptions(parse=ParseOptions(lenient=True))


def test_a_moved_field_given_beside_its_new_home_lands_in_it():
    with pytest.warns(DeprecationWarning):
        made = PrepareOptions(render=RenderOptions(trusted_text=True), profile="oss-harmony-0.0.11")
    assert made.render == RenderOptions(trusted_text=True, profile="oss-harmony-0.0.11")


def test_audit_record_takes_a_drop_rule_where_the_render_options_go_with_a_warning():
    from harmony_grammar.format.harmony_ids import encode_harmony

    ids = encode_harmony(
        "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>"
    )
    mask = [0] * (len(ids) - 5) + [1] * 5
    expected = audit_record(ids, mask, "all", RenderOptions(drop_rule="every-final"))  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning, match="moved to audit_record"):
        assert audit_record(ids, mask, "all", "every-final") == expected  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning, match="moved to audit_record"):
        assert audit_record(ids, mask, "all", drop_rule=DropRule.EVERY_FINAL) == expected  # type: ignore[arg-type]
