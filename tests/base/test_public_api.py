"""The public API a newcomer can hold: a small top level, one base error, no two public
classes of one name, and the names that moved still working for one release."""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from collections import defaultdict

import pytest

import harmony_grammar
from harmony_grammar.base.errors import HarmonyGrammarError


def _modules():
    """Every module of the package, imported (the optional-dependency ones import lazily)."""
    for info in pkgutil.walk_packages(harmony_grammar.__path__, "harmony_grammar."):
        if info.name.endswith("__main__"):
            continue
        yield importlib.import_module(info.name)


def _public(module):
    return [(name, getattr(module, name)) for name in getattr(module, "__all__", ())]


def test_the_top_level_is_small_and_every_name_in_it_is_there():
    names = harmony_grammar.__all__
    assert len(names) <= 40, f"{len(names)} names at the top level: move some to a subpackage"
    assert len(set(names)) == len(names)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a name of __all__ is never a deprecated one
        for name in names:
            getattr(harmony_grammar, name)


def test_the_top_level_loads_each_name_from_the_subpackage_that_defines_it():
    """``__all__`` is the lazily loaded names (``PUBLIC``) and the base error, nothing else."""
    lazy = {name for names in harmony_grammar.PUBLIC.values() for name in names}
    assert sorted(harmony_grammar.__all__) == sorted({"HarmonyGrammarError", *lazy})
    for subpackage, names in harmony_grammar.PUBLIC.items():
        module = importlib.import_module(f"harmony_grammar.{subpackage}")
        for name in names:
            assert name in module.__all__ and getattr(harmony_grammar, name) is getattr(module, name)


def test_every_moved_name_warns_and_is_its_new_homes_object():
    moved = [
        (importlib.import_module(f"harmony_grammar.{sub}"), name)
        for sub, names in harmony_grammar.MOVED.items()
        for name in names
    ]
    assert moved and not {name for _, name in moved} & set(harmony_grammar.__all__)
    for module, name in moved:
        assert name in module.__all__, f"{name} is not public in {module.__name__}"
        with pytest.warns(DeprecationWarning, match=rf"harmony_grammar\.{name} moved to "
                          rf"{module.__name__}\.{name}"):  # fmt: skip
            assert getattr(harmony_grammar, name) is getattr(module, name)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        harmony_grammar.no_such_name  # noqa: B018


def test_every_public_error_has_the_one_base():
    errors = {
        (module.__name__, name): value
        for module in _modules()
        for name, value in _public(module)
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    assert len(errors) >= 15  # the check sees the package's errors
    stray = sorted(
        f"{m}.{n}" for (m, n), e in errors.items() if not issubclass(e, HarmonyGrammarError)
    )
    assert not stray, f"public errors without HarmonyGrammarError as a base: {stray}"
    assert harmony_grammar.RenderError.__module__ == "harmony_grammar.rendering.errors"


def test_no_two_public_classes_share_a_name():
    by_name = defaultdict(set)
    for module in _modules():
        for name, value in _public(module):
            if isinstance(value, type) and value.__module__.startswith("harmony_grammar"):
                by_name[name].add(f"{value.__module__}.{value.__qualname__}")
    shared = {name: sorted(where) for name, where in by_name.items() if len(where) > 1}
    assert not shared, f"one name, several public classes: {shared}"


def test_renamed_classes_keep_their_former_names_for_a_release():
    import harmony_grammar.data as data
    import harmony_grammar.data.pieces as pieces
    import harmony_grammar.training as training
    import harmony_grammar.training.batch as batch

    for module, former, now in (
        (training, "Problem", training.RecordProblem),
        (batch, "Problem", training.RecordProblem),
        (data, "Plan", data.DatasetPlan),
        (pieces, "Plan", data.DatasetPlan),
    ):
        with pytest.warns(DeprecationWarning, match=f"{module.__name__}.{former} moved to"):
            assert getattr(module, former) is now
