"""canitoolcall's gpt-oss fixtures through the Chat Completions bridge (issue 25, item 5).

Every fixture is replayed by canitoolcall's own replay and checks (``adapters.worker.replay``,
``runner.evaluate``), in process, whole and in every chunking strategy the suite defines:
its default ones (``one``, ``special``, ``token``, five seeded random groupings) and the
synthetic character splits. A fixture passes, or is listed in ``EXCEPTIONS`` with the reason
from the spec; an exception that starts passing fails the test, so the list stays honest.
"""

from __future__ import annotations

from typing import Any

import pytest

canitoolcall = pytest.importorskip("canitoolcall")

from canitoolcall.adapters.worker import replay  # noqa: E402
from canitoolcall.chunking import DEFAULT_STRATEGIES, ChunkStrategy, synthetic_strategies  # noqa: E402
from canitoolcall.fixtures import Fixture, load_fixtures  # noqa: E402
from canitoolcall.results import Status  # noqa: E402
from canitoolcall.runner import evaluate, family_for  # noqa: E402

from harmony_grammar.bridges.canitoolcall_adapter import HarmonyGrammarAdapter  # noqa: E402
from harmony_grammar.format.harmony_ids import encode_harmony  # noqa: E402

STRATEGIES = (*DEFAULT_STRATEGIES, ChunkStrategy("char", seed=0), ChunkStrategy("char", seed=1))
FIXTURES = load_fixtures(families=["gpt-oss"])
ADAPTER = HarmonyGrammarAdapter()

#: fixture id -> (the check that fails, why the bridge reads it so: harmony-format.md).
EXCEPTIONS: dict[str, tuple[str, str]] = {
    "gpt-oss/llamacpp-builtin-python-recipient": (
        "expected_match",
        "a call to the built-in python tool (`to=python`) is part of the model's chain of "
        "thought (harmony-format.md §2: built-in browser/python calls go with analysis), so "
        "the bridge shows its code in reasoning_content; the fixture expects llama.cpp's "
        "choice, which discards it, and Chat Completions has no field for built-in calls",
    ),
}


def _text_is_ambiguous(fixture: Fixture) -> bool:
    """The model wrote a control token's spelling as ordinary tokens (a marker quoted in its
    text): the ids say which is which, the text cannot (harmony-format.md §1), so the
    synthetic ``char`` strategies, which feed the text, read those spellings as structure."""
    ids = fixture.output_token_ids
    return ids is not None and encode_harmony(fixture.raw_output) != list(ids)


def _case(fixture: Fixture) -> Any:
    family = family_for(fixture)
    reply = replay(ADAPTER, fixture, family, STRATEGIES)
    synthetic = synthetic_strategies([s.id for s in STRATEGIES], ADAPTER.tokens_per_step)
    return evaluate(fixture, family, reply, "all", synthetic)


def test_the_suite_has_its_51_gpt_oss_fixtures() -> None:
    assert len(FIXTURES) == 51


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fixture(fixture: Fixture) -> None:
    case = _case(fixture)
    bad = [r for r in case.checks if r.status not in (Status.PASS, Status.SOFT_PASS)]
    if fixture.id in EXCEPTIONS:
        check, _reason = EXCEPTIONS[fixture.id]
        assert case.status is Status.FAIL
        assert {r.check for r in bad} == {check}, [(r.check, r.strategy, r.detail) for r in bad]
        return
    assert case.status in (Status.PASS, Status.SOFT_PASS), [
        (r.check, r.strategy, r.detail) for r in bad
    ]
    # The synthetic character splits do not count toward the status; they must hold all the
    # same, except on text that cannot say which spelling is a control token.
    if _text_is_ambiguous(fixture):
        bad = [r for r in bad if not r.strategy.startswith("char:")]
    assert not bad, [(r.check, r.strategy, r.detail) for r in bad]


def test_only_two_fixtures_quote_a_marker_as_text() -> None:
    assert [f.id for f in FIXTURES if _text_is_ambiguous(f)] == [
        "gpt-oss/harmony-marker-in-arguments",
        "gpt-oss/harmony-marker-in-reasoning",
    ]
