"""Tests for kernels/grid_sampler.cl's bicubic forward (2-d) against a NumPy float64 reference.

Grid positions reach up to 1.3 normalized units outside the input, so that many of the 4x4 taps
of a point fall outside it: with zeros padding those read zero. Intel's CPU runtime (opencl-rt
2021.2, vectoriser on) miscompiled the tap indices when to_index was a select (some work-items
took an out-of-range tap for tap 0; ci/intel_grid_sampler_miscompile.py), which this test caught
there (zeros padding, align_corners=False); the op tests (tests/ops/test_grid_sampler.py)
check every mode through torch.
"""

import numpy as np
import pytest
from cl_tags import buffer, need_fp64

cl = pytest.importorskip("pyopencl")

A = -0.75
PAD = {"zeros": 0, "border": 1}


def cubic(t):
    """The four bicubic coefficients of fraction t (ATen's cubic convolution, A = -0.75)."""

    def near(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def reference(inp, grid, padding, align):
    """F.grid_sample(inp, grid, mode="bicubic", padding_mode, align_corners) in float64:
    inp [N, C, H, W], grid [N, OH, OW, 2]; border padding clips each tap."""
    N, C, H, W = inp.shape
    _, OH, OW, _ = grid.shape
    out = np.zeros((N, C, OH, OW))

    def unnorm(v, size):
        return (v + 1) / 2 * (size - 1) if align else ((v + 1) * size - 1) / 2

    for n in range(N):
        for oh in range(OH):
            for ow in range(OW):
                ix, iy = unnorm(grid[n, oh, ow, 0], W), unnorm(grid[n, oh, ow, 1], H)
                fx, fy = np.floor(ix), np.floor(iy)
                cx, cy = cubic(ix - fx), cubic(iy - fy)
                for b in range(4):
                    for a in range(4):
                        i, j = int(fx) - 1 + a, int(fy) - 1 + b
                        if padding == "border":
                            i, j = min(max(i, 0), W - 1), min(max(j, 0), H - 1)
                        if 0 <= i < W and 0 <= j < H:
                            out[n, :, oh, ow] += inp[n, :, j, i] * cx[a] * cy[b]
    return out


def strides5(shape5):
    """Offset 0 and the element strides of a contiguous array viewed as the kernel's 5-d
    shape."""
    return [np.uint64(0)] + [np.int64(s // 8) for s in np.empty(shape5).strides]


@pytest.mark.parametrize("tag", ["float", "double"])
@pytest.mark.parametrize("padding", ["zeros", "border"])
@pytest.mark.parametrize("align", [0, 1])
def test_bicubic_forward(ctx, queue, build, has_fp64, rng, tag, padding, align):
    need_fp64(has_fp64, tag)
    dt = np.float64 if tag == "double" else np.float32
    N, C, H, W, OH, OW = 2, 3, 5, 7, 8, 16
    inp = rng.standard_normal((N, C, H, W)).astype(dt)
    grid = rng.uniform(-1.3, 1.3, (N, OH, OW, 2)).astype(dt)
    prg = build("grid_sampler", [f"-DT_={tag}", f"-DACC_T={tag}", "-DDIMS=2", "-DMODE_BICUBIC"])
    out = np.zeros((N, C, OH, OW), dt)
    b_in, b_grid, b_out = buffer(ctx, inp), buffer(ctx, grid), buffer(ctx, out)
    geom = [np.int64(v) for v in (N, C, 1, H, W, 1, OH, OW)] + [
        np.int32(PAD[padding]),
        np.int32(align),
    ]
    cl.Kernel(prg, "grid_sampler_forward")(
        queue, (N * OH * OW,), None, *geom,
        b_in, *strides5((N, C, 1, H, W)),
        b_grid, *strides5((N, 1, OH, OW, 2)),
        b_out, *strides5((N, C, 1, OH, OW)),
    )  # fmt: skip
    cl.enqueue_copy(queue, out, b_out)
    tol = 1e-12 if tag == "double" else 2e-5
    np.testing.assert_allclose(out, reference(inp, grid, padding, align), rtol=tol, atol=tol)
