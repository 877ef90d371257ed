#!/usr/bin/env bash
# torch-ocl on a machine with an NVIDIA GPU and a CUDA build of torch already installed, with no
# network: build the native library from this checkout against that torch, point an ICD loader at
# NVIDIA's OpenCL driver, then run bench_nn against CUDA on the same GPU and the test suite.
#
#   OUT=results-dir [BUDGET_S=470] [JOBS=16] bash ci/nvidia-device-check.sh
#
# Needs python3 with torch (CUDA build), pytest, pytest-xdist, numpy, cmake, ninja and a C++20
# compiler; pyopencl (cp wheel, it bundles an ICD loader), pytools, siphash24, platformdirs and
# expecttest where they are missing (install them first, e.g. from wheels carried over: pip
# install --no-index --target DIR *.whl and PYTHONPATH=DIR). No OpenCL headers are needed.
# Writes to $OUT: run.log, build.log, bench_nn_gpu.json/.png, pytest.log,
# junit.xml, cache/ (the kernel cache and the GEMM tuning file). Steps stop at BUDGET_S seconds in
# all (the tests get what is left). Targets (issue 25): GEMM 4096 float32 >= 70% of cuBLAS,
# resnet50 training step >= 65% of CUDA's speed, transformer block >= 60%.
set -u
OUT=${OUT:-gpu-results}
BUDGET_S=${BUDGET_S:-470}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
exec > >(tee "$OUT/run.log") 2>&1
export PYTHONUNBUFFERED=1

echo "== $(elapsed)s environment"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))" || exit 1
# NVIDIA's OpenCL driver sits beside the CUDA driver; containers often lack its .icd file.
if [ -z "${OCL_ICD_VENDORS:-}" ] && ! ls /etc/OpenCL/vendors/*nvidia* >/dev/null 2>&1; then
  lib=$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libnvidia-opencl.so*' \
    -print 2>/dev/null | head -1)
  [ -n "$lib" ] || { echo "no libnvidia-opencl.so here: NVIDIA's OpenCL driver is missing"; exit 1; }
  mkdir -p /tmp/nvidia-icd && echo "$lib" >/tmp/nvidia-icd/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/nvidia-icd/  # the trailing / matters to Khronos' loader
  echo "ICD: $lib"
fi
python3 ci/opencl_platforms.py || true

echo "== $(elapsed)s build against the installed torch"
site=$(mktemp -d /tmp/torch-ocl-site.XXXXXX)
{ timeout 300 cmake -S . -B /tmp/torch-ocl-build -G Ninja -DPython_EXECUTABLE="$(command -v python3)" &&
  timeout 300 cmake --build /tmp/torch-ocl-build -j"$JOBS" -- -k 0; } >"$OUT/build.log" 2>&1
rc=$?
tail -3 "$OUT/build.log"
[ $rc -eq 0 ] || { grep -m 30 -A 4 "error" "$OUT/build.log"; exit 2; }
cp -r python/torch_ocl "$site/" && cmake --install /tmp/torch-ocl-build --prefix "$site" >/dev/null || exit 3
# The torch.backends entry point (autoload) as an installed wheel would declare it.
dist=$site/torch_ocl-0.0.0.dist-info
mkdir -p "$dist"
printf 'Metadata-Version: 2.1\nName: torch-ocl\nVersion: 0.0.0\n' >"$dist/METADATA"
printf '[torch.backends]\ntorch_ocl = _torch_ocl_autoload:load\n' >"$dist/entry_points.txt"
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
export TORCH_OCL_DEVICES=${TORCH_OCL_DEVICES:-NVIDIA}

echo "== $(elapsed)s smoke"
timeout 60 python3 - <<'PY' || exit 4
import torch, torch_ocl  # noqa: F401
print("ocl:", torch.ocl.device_count(), torch.ocl.get_device_name(0))
a, b = torch.randn(300, 200), torch.randn(200, 100)
err = (torch.mm(a.to("ocl"), b.to("ocl")).cpu().double() - a.double() @ b.double()).abs().max()
print("mm 300x200x100 max error vs float64:", err.item())
PY

echo "== $(elapsed)s device profile and GEMM tuning"
# The tuning file lands in $OUT/cache (it comes back with the results).
export TORCH_OCL_CACHE_DIR=$OUT/cache
timeout 120 python3 - <<'PY' || echo "tuning step failed or timed out"
import torch, torch_ocl  # noqa: F401
p = torch.ocl.device_profile(0)
print("profile:", p.name, p.source, p.vendor, p.arch, p.params)
for size, dtype in ((4096, torch.float32), (4096, torch.float16), (1024, torch.float32)):
    r = torch.ocl.tune_gemm(size, size, size, dtype=dtype, max_candidates=24)
    ok = {t: s for t, s in r.times.items() if s is not None}
    fl = 2 * size**3 / ok[r.best] / 1e9
    print(f"tuned mm {size} {dtype}: best {r.best} {fl:.0f} GFLOP/s of {len(ok)} working tiles; "
          f"default {p.params['gemm_large']}: {r.times.get(p.params['gemm_large'])}")
PY

echo "== $(elapsed)s bench_nn --suite gpu vs CUDA"
timeout 240 python3 benchmarks/bench_nn.py --baseline cuda --suite gpu --quick \
  --json "$OUT/bench_nn_gpu.json" --png "$OUT/bench_nn_gpu.png" 2>&1 | grep -E "^\[|ratio|failed"

echo "== $(elapsed)s tests"
left=$((BUDGET_S - $(elapsed)))
if [ $left -gt 30 ]; then
  # SIGINT at the budget: pytest still prints its summary and writes the JUnit file.
  timeout -s INT -k 15 $left python3 -m pytest tests/ops tests/runtime tests/models tests/kernels \
    -q -n "$JOBS" --maxprocesses="$JOBS" -p no:cacheprovider --junitxml="$OUT/junit.xml" \
    >"$OUT/pytest.log" 2>&1
  echo "pytest exit $?"
  tail -40 "$OUT/pytest.log"
fi
echo "== $(elapsed)s done"
