"""Minimal pyopencl-only reproducer of a miscompile in Intel's CPU OpenCL runtime.

Intel's CPU runtime from PyPI (opencl-rt 2021.2.0, libintelocl 2021.11.3) with its vectoriser on
(the default) computes a wrong sum for some work-items of the kernel WRONG below: for x in
[-1.2, -1) the four taps are -3, -2, -1 and 0, only tap 0 is inside [0, W), and the sum should be
in[0]; some lanes add in[0] twice. The kernel is kernels/grid_sampler.cl's bicubic taps cut down:
a runtime-uniform branch (`padding == 2`, never taken here) that may replace the position, then a
select that converts the position to an index only when it is in [-2, W + 2]. PoCL, and Intel's
runtime with CL_CONFIG_CPU_VECTORIZER_MODE=1, compute it right. WORKAROUND clamps the position to
[-2, W + 2] before the conversion instead, as kernels/grid_sampler.cl's to_index now does.

    python ci/intel_grid_sampler_miscompile.py                      Intel's runtime
    python ci/intel_grid_sampler_miscompile.py --platform Portable  the same on PoCL

Needs pyopencl, numpy and the Intel runtime installed and visible (ci/install-intel-opencl.sh).
Exit status: 0 if both kernels are right, 1 if one is wrong, 2 if no platform matched.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

WRONG = r"""
__kernel void k(long W, int padding, __global const float* in, __global const float* xs,
                __global float* out) {
  const long p = get_global_id(0);
  const float fx = floor(xs[p]);
  long off[4];
  for (int t = 0; t < 4; ++t) {
    float f = fx - 1 + t;
    if (padding == 2) f = W == 0 ? 0.0f : fmod(f + 0.5f, (float)W);
    const long i = (f >= -2.0f && f <= (float)(W + 2)) ? (long)f : -1;
    off[t] = (i >= 0 && i < W) ? i : -1;
  }
  float acc = 0;
  for (int t = 0; t < 4; ++t) acc += off[t] >= 0 ? in[off[t]] : 0.0f;
  out[p] = acc;
}
"""

WORKAROUND = WRONG.replace(
    "(f >= -2.0f && f <= (float)(W + 2)) ? (long)f : -1",
    "(long)clamp(f, -2.0f, (float)(W + 2))",
)
assert WORKAROUND != WRONG


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="Intel", help="substring of the platform name")
    args = ap.parse_args()
    os.environ["PYOPENCL_NO_CACHE"] = "1"
    import pyopencl as cl

    devices = [
        d
        for p in cl.get_platforms()
        if args.platform.lower() in p.name.lower()
        for d in p.get_devices()
    ]
    if not devices:
        print(f"no OpenCL platform matches {args.platform!r}", file=sys.stderr)
        return 2
    ctx = cl.Context(devices[:1])
    queue = cl.CommandQueue(ctx)
    W, n = 7, 48
    rng = np.random.default_rng(0)
    inp = rng.standard_normal(W).astype(np.float32)
    xs = rng.uniform(-1.2, 1.2, n).astype(np.float32)
    # the sum of in[i] over the taps i = floor(x) - 1 + t, t = 0..3, that fall inside [0, W)
    fx = np.floor(xs).astype(np.int64)
    ref = np.array([sum(inp[i] for i in range(f - 1, f + 3) if 0 <= i < W) for f in fx])
    mf = cl.mem_flags
    b_in = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=inp)
    b_xs = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs)
    out = np.zeros(n, np.float32)
    b_out = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    print(f"on {devices[0].platform.name} / {devices[0].name}")
    status = 0
    for name, src in (("wrong", WRONG), ("workaround", WORKAROUND)):
        prg = cl.Program(ctx, src).build()
        prg.k(queue, (n,), None, np.int64(W), np.int32(0), b_in, b_xs, b_out)
        cl.enqueue_copy(queue, out, b_out)
        bad = np.nonzero(np.abs(out - ref) > 1e-5)[0]
        if len(bad):
            status = 1
            detail = ", ".join(f"x={xs[i]:.3f}: {out[i]:.4f} not {ref[i]:.4f}" for i in bad[:4])
            print(f"{name}: {len(bad)} of {n} work-items wrong ({detail})")
        else:
            print(f"{name}: all {n} work-items right")
    return status


if __name__ == "__main__":
    sys.exit(main())
