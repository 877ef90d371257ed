#!/usr/bin/env bash
# Print the pip arguments that make torch come from PyTorch's CPU index, one per line, or nothing.
#
# On Linux, PyPI's torch is the CUDA build (several GB with its dependencies); PyTorch's CPU index
# serves the same version as "+cpu" (about 200 MB), which pip prefers when both are offered
# (ci/constraints.txt pins torch==X, which X+cpu satisfies). The index is offered only when it
# answers within 5 s, so a machine that reaches only a PyPI mirror installs from that.
#   TORCH_OCL_TORCH_INDEX=<url>   use this index instead
#   TORCH_OCL_TORCH_INDEX=        (set and empty) offer none
# Elsewhere (macOS, Windows) PyPI's torch is already the CPU build: nothing is printed.
set -euo pipefail

if [ "${TORCH_OCL_TORCH_INDEX+set}" = set ]; then
  url=$TORCH_OCL_TORCH_INDEX
else
  [ "$(uname -s)" = Linux ] || exit 0
  url=https://download.pytorch.org/whl/cpu
  python - "$url" <<'PY' >/dev/null 2>&1 || exit 0
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/torch/", timeout=5).read(1)
PY
fi
[ -n "$url" ] || exit 0
printf '%s\n' --extra-index-url "$url"
