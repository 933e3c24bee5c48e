"""Grammar texts compiled and matched by whichever llguidance and xgrammar are installed.

Imported by tests/schema/test_pinned_grammar_libraries.py in the main environment (today's versions),
and run as a script in ``.venv-pinned-grammar`` (the versions vLLM 0.34 pins, made by
``scripts/pinned-grammar-venv.sh``): JSON jobs on stdin, one JSON result per job on stdout.
The grammars are built by the caller; this side only compiles and matches them, so both
environments answer for the very same texts.

A job is ``{"engine": ..., "grammar": text, "samples": [...]}``:

* ``llguidance-bytes``: an llguidance (or Lark) grammar over llguidance's byte tokenizer,
  samples are strings; accepted = every byte consumed and the matcher accepting;
* ``llguidance-harmony``: the same over o200k_harmony, samples are token id lists;
* ``xgrammar-ebnf``: xgrammar's EBNF, matched as text, accepted = consumed and terminated;
* ``xgrammar-tag``: a structural tag over o200k_harmony, samples are token id lists, accepted
  = every id accepted and the matcher terminated (the stop token ends it).

A result is ``{"error": str}`` when the library refuses the grammar, else ``{"verdicts": [...]}``.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import sys
from typing import Any

__all__ = ["run_job", "versions"]


def versions() -> dict[str, str]:
    """The installed versions of the two grammar libraries."""
    return {name: importlib.metadata.version(name) for name in ("llguidance", "xgrammar")}


@functools.cache
def _lltokenizer(kind: str) -> Any:
    if kind == "bytes":
        from harmony_grammar.schema.matcher import byte_tokenizer

        return byte_tokenizer()
    from harmony_grammar.generation.outlines_export import harmony_lltokenizer

    return harmony_lltokenizer()


@functools.cache
def _xgrammar_compiler(kind: str) -> Any:
    import xgrammar

    if kind == "text":  # matched as text only: no vocabulary needed
        return xgrammar.GrammarCompiler(xgrammar.TokenizerInfo([]), cache_enabled=False)
    from harmony_grammar.generation.xgrammar_tag import harmony_tokenizer_info

    return xgrammar.GrammarCompiler(harmony_tokenizer_info(), cache_enabled=False)


def _llguidance(job: dict[str, Any], kind: str) -> dict[str, Any]:
    import llguidance

    tokenizer = _lltokenizer(kind)
    problem = llguidance.LLMatcher.validate_grammar(job["grammar"], tokenizer)
    if problem:
        return {"error": problem}
    matcher = llguidance.LLMatcher(tokenizer, job["grammar"], log_level=0)
    if matcher.is_error():
        return {"error": matcher.get_error()}
    verdicts = []
    for sample in job["samples"]:
        ids = list(sample.encode()) if kind == "bytes" else sample
        copy = matcher.deep_copy()
        verdicts.append(copy.try_consume_tokens(ids) == len(ids) and copy.is_accepting())
    return {"verdicts": verdicts}


def _xgrammar(job: dict[str, Any], tag: bool) -> dict[str, Any]:
    """An EBNF grammar matched as text, or a structural tag matched id by id over o200k_harmony
    (a stop id ends it there, so no early termination without one)."""
    import xgrammar

    try:
        if tag:
            compiled = _xgrammar_compiler("harmony").compile_structural_tag(job["grammar"])
        else:
            compiled = _xgrammar_compiler("text").compile_grammar(job["grammar"])
    except Exception as exc:  # the library's refusal, reported as its message
        return {"error": f"{type(exc).__name__}: {exc}"}
    verdicts = []
    for sample in job["samples"]:
        matcher = xgrammar.GrammarMatcher(compiled, terminate_without_stop_token=not tag)
        if tag:
            accepted = all(matcher.accept_token(i) for i in sample)
        else:
            accepted = bool(matcher.accept_string(sample))
        verdicts.append(accepted and matcher.is_terminated())
    return {"verdicts": verdicts}


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """One job's result (see the module docstring)."""
    engine = job["engine"]
    if engine == "llguidance-bytes":
        return _llguidance(job, "bytes")
    if engine == "llguidance-harmony":
        return _llguidance(job, "harmony")
    if engine in ("xgrammar-ebnf", "xgrammar-tag"):
        return _xgrammar(job, tag=engine == "xgrammar-tag")
    raise ValueError(f"unknown engine {engine!r}")


if __name__ == "__main__":
    jobs = json.load(sys.stdin)
    json.dump({"versions": versions(), "results": [run_job(job) for job in jobs]}, sys.stdout)
