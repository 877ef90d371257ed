#!/usr/bin/env bash
# Install Intel's CPU OpenCL runtime from PyPI into the active Python environment and make it
# visible to pyopencl's ICD loader (and so to torch-ocl), beside PoCL.
#
#   . .venv/bin/activate && bash ci/install-intel-opencl.sh
#   . "$(python -c 'import sys; print(sys.prefix)')/etc/OpenCL/intel-opencl.env"
#   TORCH_OCL_DEVICES="Intel(R) OpenCL" python -m pytest tests/runtime -q
#
# What it does:
#  - pip installs opencl-rt (Intel's OpenCL 2.1 CPU runtime, 2021.2.0) and tbb (2021.x), pinned in
#    ci/constraints.txt. Into the environment, not with --target: --target drops the wheels' data
#    files, which is where lib/libintelocl.so lives (<prefix>/lib, TBB beside it).
#  - writes <prefix>/etc/OpenCL/vendors/intel-opencl-rt.icd holding the full path of
#    libintelocl.so (a folder this script owns; nothing outside the environment is touched).
#  - writes <prefix>/etc/OpenCL/intel-opencl.env, to be sourced: OCL_ICD_VENDORS (that folder)
#    and LD_LIBRARY_PATH (+ the runtime's lib folder, which holds TBB's libtbb.so.12 too).
#    pyopencl's loader reads OCL_ICD_VENDORS in place of /etc/OpenCL/vendors and still reads its
#    own vendor files (pyopencl/.libs/*.icd), so PoCL stays listed.
#  - checks, with that environment, that `ci/opencl_platforms.py --require "Intel(R) OpenCL"`
#    passes and that PoCL is still listed, and prints the environment.
#
# Select the runtime with TORCH_OCL_DEVICES="Intel(R) OpenCL" (the platform's name). A bare
# "Intel" also matches PoCL's device on an Intel host ("pthread-Intel(R) Xeon(R) ...").
# Options: --env-file FILE writes the environment there instead; --no-install skips pip.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
install=1
env_file=""
while [ $# -gt 0 ]; do
  case $1 in
    --env-file) env_file=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    *) echo "install-intel-opencl: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install-intel-opencl: opencl-rt has wheels for x86_64 Linux and Windows; this script" \
    "handles Linux x86_64 only" >&2
  exit 1
fi

if [ "$install" = 1 ]; then
  t0=$SECONDS
  python -m pip install -q -c "$root/ci/constraints.txt" opencl-rt tbb
  echo "install-intel-opencl: opencl-rt and tbb installed in $((SECONDS - t0)) s"
fi

# Where pip put the libraries (the wheels' data files: <prefix>/lib for a venv or --prefix).
lib=$(python - <<'PY'
import importlib.metadata as md
import sys

for f in md.files("opencl-rt") or []:
    if f.name == "libintelocl.so":
        print(f.locate().resolve().parent)
        break
else:
    sys.exit("install-intel-opencl: opencl-rt is installed but has no libintelocl.so")
PY
)
prefix=$(python -c 'import sys; print(sys.prefix)')
if [ ! -e "$lib/libtbb.so.12" ]; then
  echo "install-intel-opencl: no libtbb.so.12 beside libintelocl.so in $lib (is tbb 2021.x" \
    "installed in this environment?)" >&2
  exit 1
fi

vendors=$prefix/etc/OpenCL/vendors
mkdir -p "$vendors"
echo "$lib/libintelocl.so" >"$vendors/intel-opencl-rt.icd"
env_file=${env_file:-$prefix/etc/OpenCL/intel-opencl.env}
cat >"$env_file" <<EOF
# Intel's CPU OpenCL runtime (opencl-rt) in $prefix: written by ci/install-intel-opencl.sh.
# Source this file; select the runtime with TORCH_OCL_DEVICES="Intel(R) OpenCL".
export OCL_ICD_VENDORS="$vendors/"
export LD_LIBRARY_PATH="$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
EOF

# shellcheck disable=SC1090
. "$env_file"
python "$root/ci/opencl_platforms.py" --require "Intel(R) OpenCL"
if ! python "$root/ci/opencl_platforms.py" --require "Portable Computing Language" >/dev/null 2>&1
then
  echo "install-intel-opencl: note: PoCL is not listed (pyopencl[pocl] not installed here?)"
fi
echo "install-intel-opencl: vendor file $vendors/intel-opencl-rt.icd -> $lib/libintelocl.so"
echo "install-intel-opencl: environment in $env_file:"
grep '^export' "$env_file"
