#!/usr/bin/env bash
# From a fresh clone to a trained demo, in one command (README "Quick start"):
#
#   bash setup.sh                 # build prerequisites, .venv, torch, torch-ocl, then the demo
#   bash setup.sh --epochs 2      # arguments after the options go to examples/train_cnn.py
#   bash setup.sh --no-demo       # set up only
#
# then run the tests with `.venv/bin/python -m pytest tests -q`.
#
# What it does, each step skipped where already done:
#   1. ci/install-build-tools.sh: a C++20 compiler and Python's venv module, with apt-get or dnf
#      (as root or through sudo) where missing. No OpenCL headers or SDK are needed.
#   2. The virtual environment .venv (TORCH_OCL_VENV names another), with python3 (PYTHON names
#      another; 3.10 or newer).
#   3. ci/install-from-source.sh: torch at the tested pin (ci/constraints.txt; on Linux from
#      PyTorch's CPU index when it is reachable, so pip does not fetch the multi-GB CUDA build),
#      the build tools, then torch-ocl built from this checkout with the extras pocl (PoCL, a CPU
#      OpenCL runtime: the device works without a GPU driver; Linux x86_64 only), test and demo;
#      torchvision and timm for the model tests.
#   4. The demo: examples/train_cnn.py on the ocl device, then on the CPU for comparison.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$root"
export PIP_DISABLE_PIP_VERSION_CHECK=1

run_demo=1
demo_args=()
for arg in "$@"; do
  case "$arg" in
    --no-demo) run_demo=0 ;;
    -h | --help)
      sed -n '2,20p' "$0"
      exit 0
      ;;
    *) demo_args+=("$arg") ;;
  esac
done

step() { printf '\n=== setup: %s\n' "$*"; }
t_start=$SECONDS

step "build prerequisites"
bash ci/install-build-tools.sh

venv=${TORCH_OCL_VENV:-.venv}
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "setup.sh: torch-ocl needs Python 3.10 or newer; '$python' is" \
    "$("$python" --version 2>&1 || echo 'not found')." \
    "Name another interpreter with PYTHON=/path/to/python3.X bash setup.sh" >&2
  exit 1
fi
step "virtual environment $venv"
if [ ! -f "$venv/pyvenv.cfg" ]; then
  "$python" -m venv "$venv"
fi
if [ -f "$venv/bin/activate" ]; then
  # shellcheck disable=SC1091
  . "$venv/bin/activate"
else
  # Windows (Git Bash): the venv keeps its scripts in Scripts/.
  # shellcheck disable=SC1091
  . "$venv/Scripts/activate"
fi
python --version

step "torch, build tools and torch-ocl (.[pocl,test,demo])"
bash ci/install-from-source.sh pocl,test,demo
# The model tests' third-party code (pure-Python models): the torchvision that pairs with the
# pinned torch, which the constraints keep, and the pinned timm.
# shellcheck disable=SC2207
torch_index=($(bash ci/torch_index.sh))
python -m pip install -q -c ci/constraints.txt ${torch_index[@]+"${torch_index[@]}"} torchvision timm

if [ "$run_demo" = 1 ]; then
  step "demo: python examples/train_cnn.py ${demo_args[*]:-}"
  python examples/train_cnn.py ${demo_args[@]+"${demo_args[@]}"}
fi

step "done in $((SECONDS - t_start)) s"
venv_python=$venv/bin/python
[ -x "$venv_python" ] || venv_python=$venv/Scripts/python
echo "Run the tests with:  $venv_python -m pytest tests -q"
