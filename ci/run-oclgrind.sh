#!/usr/bin/env bash
# Run tests on the Oclgrind simulator and fail if Oclgrind reported anything.
#
#   ci/run-oclgrind.sh [pytest arguments...]   default: tests/kernels tests/ops -q -m "not slow"
#
# Needs, in the active environment: pyopencl[pocl,oclgrind], pytest, numpy, and for tests/ops the
# installed torch-ocl wheel with torch. Oclgrind (an OpenCL 1.2 simulator) checks every kernel for
# out-of-bounds accesses, uninitialised values and (with OCLGRIND_DATA_RACES=1) data races, and
# reports them without failing the kernel. This script sends the reports to files and fails when
# one is not empty. OCLGRIND_DATA_RACES, OCLGRIND_UNINITIALIZED, OCLGRIND_MAX_ERRORS and
# TORCH_OCL_DEVICES already in the environment win over the defaults here.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# Default: the kernel tests with every check, then the op tests (through the native library)
# without Oclgrind's uninitialised-value checker: a host write (clEnqueueWriteBuffer) shrinks
# that plugin's record of a buffer's written bytes to the write's size, so reads of tensors
# that the caching allocator placed further into a shared buffer are reported although the
# values read are the ones written (see ci/README.md). Bounds and data-race checks stay on.
default_run=0
if [ $# -eq 0 ]; then
  default_run=1
  set -- tests/kernels -q -m "not slow"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/torch-ocl-oclgrind.XXXXXX")
logs=$work/logs
mkdir -p "$logs" "$work/site"

# Oclgrind truncates OCLGRIND_LOG when a process opens it, so a test that starts another Python
# process would wipe the reports gathered so far. Every Python process gets its own log file: a
# sitecustomize on PYTHONPATH sets OCLGRIND_LOG from the process id. Other programs log to
# $logs/other.log.
cat >"$work/site/sitecustomize.py" <<'PY'
import os

_dir = os.environ.get("TORCH_OCL_OCLGRIND_LOG_DIR")
if _dir:
    os.environ["OCLGRIND_LOG"] = os.path.join(_dir, "oclgrind-%d.log" % os.getpid())
PY
export TORCH_OCL_OCLGRIND_LOG_DIR=$logs
export PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH}
export OCLGRIND_LOG=$logs/other.log

# The Oclgrind platform is called "Oclgrind" (device "Oclgrind Simulator"); TORCH_OCL_DEVICES and
# the kernel tests' conftest select by a substring of "<platform name> <device name>".
export TORCH_OCL_DEVICES=${TORCH_OCL_DEVICES:-Oclgrind}
export OCLGRIND_DATA_RACES=${OCLGRIND_DATA_RACES:-1}
export OCLGRIND_UNINITIALIZED=${OCLGRIND_UNINITIALIZED:-1}
# Stop after this many reports so that one bad kernel does not flood the log.
export OCLGRIND_MAX_ERRORS=${OCLGRIND_MAX_ERRORS:-20}
# Keep program binaries built for Oclgrind out of the user's kernel cache.
export TORCH_OCL_CACHE_DIR=${TORCH_OCL_CACHE_DIR:-$work/kernel-cache}

python "$root/ci/opencl_platforms.py" --require "$TORCH_OCL_DEVICES" || {
  echo "run-oclgrind: no OpenCL device matches TORCH_OCL_DEVICES=$TORCH_OCL_DEVICES;" \
    "install pyopencl[oclgrind] in this environment" >&2
  exit 1
}

echo "run-oclgrind: TORCH_OCL_DEVICES=$TORCH_OCL_DEVICES, Oclgrind logs in $logs"
echo "run-oclgrind: python -m pytest $(printf "%q " "$@")"
python -m pytest "$@"
status=$?
if [ "$default_run" = 1 ] && [ -d tests/ops ]; then
  echo "run-oclgrind: OCLGRIND_UNINITIALIZED=0 python -m pytest tests/ops -q -m 'not slow'"
  OCLGRIND_UNINITIALIZED=0 python -m pytest tests/ops -q -m "not slow"
  ops_status=$?
  [ "$status" -eq 0 ] && status=$ops_status
fi

reports=()
for f in "$logs"/*.log; do
  [ -s "$f" ] && reports+=("$f")
done
if [ ${#reports[@]} -gt 0 ]; then
  echo
  echo "run-oclgrind: Oclgrind reported problems in ${#reports[@]} process(es):"
  for f in "${reports[@]}"; do
    echo "---------------------------------------------------------------- $f"
    cat "$f"
  done
  echo "----------------------------------------------------------------------"
  [ "$status" -eq 0 ] && status=1
else
  echo "run-oclgrind: Oclgrind reported nothing"
  rm -rf "$work"
fi
exit "$status"
