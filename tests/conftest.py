"""Shared fixtures (the encoding, offline; openai-harmony as a test oracle) and the one place
that sets Hypothesis budgets.

Hypothesis profiles: ``ci`` (the default: what CI and the README's test command run), ``dev``
(a quick local pass while editing) and ``bench`` (a long hunt for counterexamples). Pick one
with ``HYPOTHESIS_PROFILE=dev python -m pytest ...``. A test states no budget of its own; a
test that needs more examples than its neighbours asks for a multiple of the profile's
(``settings(max_examples=5 * settings.default.max_examples)``), so every profile scales it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from harmony_grammar.format.vocabulary import find_vocabulary

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,  # shared CI machines stall: timing is never a test's verdict
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,  # a failure prints how to reproduce it
    # The suite's verdict on a commit is the same on every run: the examples are drawn from
    # a fixed seed per test. Searching new examples is the `explore` profile's job (run by
    # hand: HYPOTHESIS_PROFILE=explore), and what it finds becomes a fixed @example.
    derandomize=True,
)
settings.register_profile("dev", settings.get_profile("ci"), max_examples=10, derandomize=False)
settings.register_profile("explore", settings.get_profile("ci"), max_examples=300, derandomize=False)
settings.register_profile("bench", settings.get_profile("ci"), max_examples=1000, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Third-party conformance data lives beside the checkout, never inside it.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def encoding():
    """tiktoken's o200k_harmony, loaded offline."""
    from harmony_grammar.format.vocabulary import load_encoding

    return load_encoding(allow_download=False)


@pytest.fixture(scope="session")
def harmony_oracle(tmp_path_factory):
    """openai-harmony's HARMONY_GPT_OSS encoding, given the vocabulary offline.

    openai-harmony reads ``TIKTOKEN_ENCODINGS_BASE=<dir with o200k_base.tiktoken>``; the file is
    written from the same verified source our own loader uses.
    """
    openai_harmony = pytest.importorskip("openai_harmony")
    vocab_dir = tmp_path_factory.mktemp("vocab")
    source = find_vocabulary(allow_download=False)
    (vocab_dir / "o200k_base.tiktoken").write_bytes(source.data)
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(vocab_dir)
    return openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)


def shared_data_dir(name: str) -> Path:
    """A folder of ../shared/data, or skip the test with the reason when it is absent."""
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(f"{path} is absent (third-party data is read from ../shared, not shipped)")
    return path


@pytest.fixture
def write(tmp_path):
    """``write(name, text)``: a UTF-8 file of ``text`` in the test's folder; its path."""

    def write(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write
