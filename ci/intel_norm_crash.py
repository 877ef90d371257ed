"""Minimal pyopencl-only reproducer of a compiler crash in Intel's CPU OpenCL runtime.

Intel's CPU runtime from PyPI (opencl-rt 2021.2.0, libintelocl 2021.11.3) dies with SIGSEGV in
clBuildProgram on the kernel CRASH below: its vectoriser (libOclCpuBackEnd) recurses until the
stack overflows. The kernel is valid OpenCL C; PoCL builds it. It is kernels/norm.cl's norm_dx
cut down: a division by a count chosen by `per_channel`, under `if (use_sums)`, before a loop
over s whose bounds depend on the work-item. With the vectoriser off
(CL_CONFIG_CPU_VECTORIZER_MODE=1) it builds; forcing a width (4, 8, 16) still crashes.
WORKAROUND computes the count before the `if`, as kernels/norm.cl now does; it builds.

    python ci/intel_norm_crash.py              both kernels, each built in a child process
    python ci/intel_norm_crash.py --platform Portable      the same on another platform
    python ci/intel_norm_crash.py --in-process crash       build CRASH here (the process dies)

Needs pyopencl and the Intel runtime installed and visible (ci/install-intel-opencl.sh). Not run
by the test suite: on the affected runtime it kills the process that builds the kernel.
Exit status: 0 if every kernel built, 1 if one failed or crashed, 2 if no platform matched.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

CRASH = r"""
__kernel void k(long N, long C, long S, long G, int per_channel, int spt, int use_sums,
                __global const float* x, __global const float* B, __global float* y) {
  const long s0 = get_global_id(0) * spt, c = get_global_id(1);
  if (s0 >= S) return;
  const long row = per_channel ? c : c / (C / G);
  float kx = 0;
  if (use_sums) kx = B[row] / (float)(per_channel ? N : C / G);
  const long s1 = min(s0 + spt, S);
  for (long s = s0; s < s1; ++s) y[s] = use_sums ? x[s] * kx : 2;
}
"""

WORKAROUND = CRASH.replace(
    "  float kx = 0;\n  if (use_sums) kx = B[row] / (float)(per_channel ? N : C / G);\n",
    "  const float cnt = (float)(per_channel ? N : C / G);\n"
    "  float kx = 0;\n  if (use_sums) kx = B[row] / cnt;\n",
)
assert WORKAROUND != CRASH

KERNELS = {"crash": CRASH, "workaround": WORKAROUND}


def build(platform_match: str, name: str) -> int:
    import pyopencl as cl

    devices = [
        d
        for p in cl.get_platforms()
        if platform_match.lower() in p.name.lower()
        for d in p.get_devices()
    ]
    if not devices:
        print(f"no OpenCL platform matches {platform_match!r}", file=sys.stderr)
        return 2
    ctx = cl.Context(devices[:1])
    print(f"{name}: building on {devices[0].platform.name} / {devices[0].name}", flush=True)
    cl.Program(ctx, KERNELS[name]).build()
    print(f"{name}: built", flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="Intel", help="substring of the platform name")
    ap.add_argument("--in-process", choices=sorted(KERNELS), help="build one kernel here")
    args = ap.parse_args()
    if args.in_process:
        return build(args.platform, args.in_process)
    # pyopencl caches binaries: a cached build would hide the crash.
    env = dict(os.environ, PYOPENCL_NO_CACHE="1")
    status = 0
    for name in KERNELS:
        cmd = [sys.executable, __file__, "--platform", args.platform, "--in-process", name]
        rc = subprocess.run(cmd, env=env).returncode
        if rc == 2:
            return 2
        if rc < 0:
            print(f"{name}: the build killed the process (signal {-rc})")
        elif rc:
            print(f"{name}: the build failed (exit {rc})")
        status = status or int(rc != 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
