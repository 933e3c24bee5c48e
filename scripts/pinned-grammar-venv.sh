#!/usr/bin/env bash
# .venv-pinned-grammar: the grammar libraries vLLM 0.34 pins (llguidance>=1.7,<1.8 and
# xgrammar==0.2.8), for tests/schema/test_pinned_grammar_libraries.py, which compiles the exports
# there in a subprocess and compares verdicts with today's versions in the main environment.
#
# Only the two pinned packages are installed here (xgrammar without its dependencies: its
# Linux wheel requires triton, which nothing here uses). Everything else xgrammar imports
# (torch, transformers, numpy, pydantic, apache-tvm-ffi) and this project itself come from
# the environment that runs this script, put on sys.path *after* the pinned packages by a
# .pth file, so the old versions shadow the new ones and nothing large is downloaded twice.
#
# Run with the main environment active (`.ci/run` does); makes the venv afresh each time.
set -euo pipefail
cd "$(dirname "$0")/.."

main_site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python -m venv --clear .venv-pinned-grammar
.venv-pinned-grammar/bin/python -m pip install --quiet --no-deps \
    'llguidance>=1.7,<1.8' 'xgrammar==0.2.8'
side_site=$(.venv-pinned-grammar/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# addsitedir (not a bare path) so that the main environment's own .pth files, the editable
# install of this project among them, are read too.
echo "import site; site.addsitedir('$main_site')" > "$side_site/zz-main-environment.pth"
