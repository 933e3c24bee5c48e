#!/usr/bin/env bash
# The oss-harmony 0.0.11 environment: the reference of the oss-harmony-0.0.11 rendering
# profile (vLLM's renderer). It installs the same `openai_harmony` module as openai-harmony
# 0.0.8, so it lives in an environment of its own, .venv-oss-harmony at the checkout's top,
# which tests/rendering/test_profiles.py talks to in a subprocess. .ci/run and the README's test
# command both call this script (through scripts/test-env.sh). It does nothing when the
# environment already holds oss-harmony 0.0.11.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-oss-harmony
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c \
    'import importlib.metadata as m, sys; sys.exit(m.version("oss-harmony") != "0.0.11")' \
    2>/dev/null; then
    exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet 'oss-harmony==0.0.11' -e '.[offline]'
