#!/usr/bin/env bash
# Build and install torch-ocl from this source tree into the Python environment that `python`
# names (activate a venv first). Extra arguments are the extras to install, default "pocl,test".
#
#   . .venv/bin/activate && ci/install-from-source.sh            # .[pocl,test]
#   ci/install-from-source.sh pocl                                # .[pocl]
#
# The build runs without build isolation, against the torch already installed: torch is pinned in
# ci/constraints.txt (torch==2.13.0, the CPU build), and the native library must be compiled against
# exactly the torch it will load with.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
extras=${1:-pocl,test}
constraints=(-c "$root/ci/constraints.txt")
# On Linux, torch from PyTorch's CPU index where it is reachable (ci/torch_index.sh).
# (No mapfile and no bare "${a[@]}" of a possibly empty array: macOS has bash 3.2.)
# shellcheck disable=SC2207
torch_index=($(bash "$root/ci/torch_index.sh"))
[ ${#torch_index[@]} -eq 0 ] || echo "install-from-source: also from ${torch_index[*]}"

t0=$SECONDS
python -m pip install -q "${constraints[@]}" ${torch_index[@]+"${torch_index[@]}"} torch scikit-build-core ninja

# Whatever else scikit-build-core would put in an isolated build environment for this project's
# pyproject.toml (for example cmake, when its minimum is newer than the system's).
reqs=$(python "$root/ci/build_requirements.py")
if [ -n "$reqs" ]; then
  old_ifs=$IFS
  IFS=$'\n'
  # shellcheck disable=SC2206
  build_reqs=($reqs)
  IFS=$old_ifs
  python -m pip install -q "${constraints[@]}" "${build_reqs[@]}"
fi

echo "install-from-source: torch and build tools in $((SECONDS - t0)) s"

t0=$SECONDS
python -m pip install "${constraints[@]}" ${torch_index[@]+"${torch_index[@]}"} --no-build-isolation ".[$extras]"
echo "install-from-source: built and installed .[$extras] in $((SECONDS - t0)) s"
