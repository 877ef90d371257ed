"""GFLOP/s of kernels/mm.cl through pyopencl, next to numpy's float32 matmul on the same machine.

    python benchmarks/kernels/bench_mm_pyopencl.py                 # 512 and 1024, all layouts
    python benchmarks/kernels/bench_mm_pyopencl.py --sizes 256 2048 --layouts nn nt
    python benchmarks/kernels/bench_mm_pyopencl.py -D LX=1 -D LY=8  # override tuning macros

The device is picked like tests/kernels/conftest.py picks it, except that the default filter is
TORCH_OCL_DEVICES or "Portable" (PoCL). Layout "tn" means A_TRANS, "nt" B_TRANS. Each timing is
the best of --reps runs of a square M = N = K problem; numpy runs interleaved with the kernel so
that both see the same machine load. Pin threads for steadier numbers, e.g.
POCL_MAX_PTHREAD_COUNT=1 OPENBLAS_NUM_THREADS=1.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

import numpy as np
import pyopencl as cl

KERNEL_DIR = pathlib.Path(__file__).resolve().parents[2] / "kernels"
# Defaults at the top of kernels/mm.cl.
DEFAULTS = {"TM": 6, "TN": 16, "LX": 2, "LY": 4}


def pick_device(wanted: str) -> cl.Device:
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            if wanted.lower() in (platform.name + " " + device.name).lower():
                return device
    raise SystemExit(f"no OpenCL device matches {wanted!r}")


def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    parser.add_argument("--layouts", nargs="+", default=["nn", "tn", "nt", "tt"])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("-D", dest="defines", action="append", default=[], help="NAME=VALUE")
    args = parser.parse_args()

    device = pick_device(os.environ.get("TORCH_OCL_DEVICES") or "Portable")
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    src = (KERNEL_DIR / "common.clh").read_text() + "\n" + (KERNEL_DIR / "mm.cl").read_text()
    macros = dict(DEFAULTS)
    for d in args.defines:
        name, _, value = d.partition("=")
        macros[name] = int(value)
    print(f"device: {device.platform.name} / {device.name}; macros {macros}")

    mf = cl.mem_flags
    rng = np.random.default_rng(0)
    for n in args.sizes:
        a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        c_buf = cl.Buffer(ctx, mf.READ_WRITE, n * n * 4)
        flops = 2.0 * n**3
        for layout in args.layouts:
            opts = ["-DT=float"] + [f"-D{k}={v}" for k, v in macros.items()]
            if layout[0] == "t":
                opts.append("-DA_TRANS")
            if layout[1] == "t":
                opts.append("-DB_TRANS")
            kernel = cl.Kernel(cl.Program(ctx, src).build(options=opts), "mm")
            gsize = (
                ceil_div(ceil_div(n, macros["TN"]), macros["LX"]) * macros["LX"],
                ceil_div(ceil_div(n, macros["TM"]), macros["LY"]) * macros["LY"],
            )
            lsize = (macros["LX"], macros["LY"])
            kargs = (
                *(np.int32(n),) * 3,
                a_buf, np.uint64(0), np.int64(n),
                b_buf, np.uint64(0), np.int64(n),
                c_buf, np.uint64(0), np.int64(n),
                np.float32(1), np.float32(0),
                c_buf, np.uint64(0), np.int64(0), np.int64(0),
            )  # fmt: skip
            kernel(queue, gsize, lsize, *kargs)
            queue.finish()
            got = np.empty((n, n), np.float32)
            cl.enqueue_copy(queue, got, c_buf)
            want = (a.T if layout[0] == "t" else a) @ (b.T if layout[1] == "t" else b)
            err = float(np.abs(got - want).max())
            best_ocl = best_np = float("inf")
            for _ in range(args.reps):
                t0 = time.perf_counter()
                kernel(queue, gsize, lsize, *kargs)
                queue.finish()
                best_ocl = min(best_ocl, time.perf_counter() - t0)
                t0 = time.perf_counter()
                np.matmul(a, b)
                best_np = min(best_np, time.perf_counter() - t0)
            g_ocl, g_np = flops / best_ocl / 1e9, flops / best_np / 1e9
            print(
                f"n={n:5d} {layout}: mm.cl {g_ocl:7.1f} GFLOP/s  numpy {g_np:7.1f} GFLOP/s  "
                f"ratio {g_ocl / g_np:5.2f}  max|err| {err:.2e}"
            )


if __name__ == "__main__":
    main()
