"""fractional_max_pool2d / fractional_max_pool3d forward (values and indices) and backward against
the CPU on the same random samples: kernel sizes, output sizes (including output = input - pool
+ 1 and a single output), batched and unbatched, channels_last and strided inputs, every float
dtype (float16/bfloat16 window starts computed in their precision, as on the CPU), NaN and Inf,
overlapping windows (gradients added deterministically), F.fractional_max_pool* with
output_ratio, and the CPU's errors. Runs with the CPU fallback set to raise."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu, skip_unsupported

aten = torch.ops.aten
CASES = [
    (2, (2, 3, 9, 11), [2, 2], [4, 5]),
    (2, (3, 7, 8), [3, 2], [3, 5]),  # unbatched
    (2, (1, 2, 5, 5), [2, 2], [4, 4]),  # overlapping windows
    (2, (2, 1, 6, 7), [3, 3], [1, 1]),
    (2, (0, 2, 6, 7), [2, 2], [3, 3]),
    (3, (2, 2, 6, 7, 8), [2, 2, 2], [3, 4, 5]),
    (3, (2, 5, 6, 7), [2, 3, 2], [2, 3, 4]),  # unbatched
    (3, (1, 2, 6, 6, 7), [2, 2, 2], [4, 4, 5]),  # overlapping
]
IDS = [f"{d}d-{'x'.join(map(str, s))}-k{k}-o{o}" for d, s, k, o in CASES]


def run(dims, x, k, o, samples, dtype):
    fwd = aten.fractional_max_pool2d if dims == 2 else aten.fractional_max_pool3d
    bwd = aten.fractional_max_pool2d_backward if dims == 2 else aten.fractional_max_pool3d_backward
    y, idx = fwd(x, k, o, samples)
    go = make_cpu(tuple(y.shape), torch.float32, seed=7).to(dtype).to(x.device)
    return y, idx, bwd(go, x, k, o, idx)


def check(dims, x, k, o, dtype=torch.float32, seed=1):
    skip_unsupported(dtype)
    batch = x.shape[0] if x.dim() == dims + 2 else 1
    samples = make_cpu((batch, x.shape[-dims - 1], dims), torch.float32, low=0, high=1, seed=seed)
    x, samples = x.to(dtype), samples.to(dtype)
    exp = run(dims, x, k, o, samples, dtype)
    got = run(dims, x.to(DEVICE), k, o, samples.to(DEVICE), dtype)
    assert_ocl_close(got[0], exp[0], exact=True)
    assert_ocl_close(got[1], exp[1], exact=True)
    assert_ocl_close(got[2], exp[2])


@pytest.mark.parametrize("dims,shape,k,o", CASES, ids=IDS)
def test_fractional_max_pool(dims, shape, k, o):
    check(dims, make_cpu(shape, torch.float32, seed=2), k, o)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_dtypes(dtype):
    for seed in range(3):
        check(2, make_cpu((2, 3, 13, 17), torch.float32, seed=3), [2, 3], [6, 7], dtype, seed)
        check(
            3, make_cpu((1, 2, 9, 7, 8), torch.float32, seed=4), [2, 2, 3], [4, 3, 5], dtype, seed
        )


def test_layouts_and_special_values():
    x = make_cpu((2, 3, 9, 11), torch.float32, seed=5)
    x[0, 0, 1, 1], x[1, 2, 4, 4], x[0, 1, 8, 10] = float("nan"), float("inf"), -float("inf")
    x[1, 1] = -float("inf")  # a plane of -inf: the window's first element
    check(2, x, [2, 2], [4, 5])
    check(2, x.contiguous(memory_format=torch.channels_last), [2, 2], [4, 5])
    check(2, make_cpu((2, 3, 9, 22), torch.float32, seed=5)[..., ::2], [3, 2], [3, 5])
    check(3, make_cpu((2, 2, 6, 7, 8), torch.float32, seed=6).transpose(2, 4), [2, 2, 2], [3, 3, 3])


def test_functional_with_autograd():
    for dims, shape in ((2, (2, 3, 10, 12)), (3, (1, 2, 6, 8, 7))):
        fn = F.fractional_max_pool2d if dims == 2 else F.fractional_max_pool3d
        x = make_cpu(shape, torch.float32, seed=8)
        samples = make_cpu((shape[0], shape[1], dims), torch.float32, low=0, high=1, seed=9)
        xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
        yc = fn(xc, 2, output_ratio=(0.5,) * dims, _random_samples=samples)
        yd = fn(xd, 2, output_ratio=(0.5,) * dims, _random_samples=samples.to(DEVICE))
        assert_ocl_close(yd, yc.detach(), exact=True)
        yc.sum().backward()
        yd.sum().backward()
        assert_ocl_close(xd.grad, xc.grad)
        # the device's own samples: a valid pooling (every output is an input value)
        y = fn(x.to(DEVICE), 2, output_size=[3] * dims).cpu()
        assert torch.isin(y, x).all()


def test_deterministic_backward():
    x = make_cpu((2, 3, 9, 9), torch.float32, seed=10).to(DEVICE)
    s = make_cpu((2, 3, 2), torch.float32, low=0, high=1, seed=11).to(DEVICE)
    y, idx = aten.fractional_max_pool2d(x, [3, 3], [7, 7], s)
    go = make_cpu((2, 3, 7, 7), torch.float32, seed=12).to(DEVICE)
    a = aten.fractional_max_pool2d_backward(go, x, [3, 3], [7, 7], idx).cpu()
    b = aten.fractional_max_pool2d_backward(go, x, [3, 3], [7, 7], idx).cpu()
    assert torch.equal(a.view(torch.int32), b.view(torch.int32))


def test_errors():
    x = make_cpu((1, 2, 6, 6), torch.float32, seed=13)
    s = make_cpu((1, 2, 2), torch.float32, low=0, high=1, seed=14)
    s3 = make_cpu((1, 2, 3), torch.float32, low=0, high=1, seed=14)
    cases = [
        lambda t, u, v: aten.fractional_max_pool2d(t, [2, 2], [6, 6], u),  # output too large
        lambda t, u, v: aten.fractional_max_pool2d(t, [2, 2], [3, 3], u.double()),
        lambda t, u, v: aten.fractional_max_pool2d(t, [2, 2], [3, 3], u[:, :1]),
        lambda t, u, v: aten.fractional_max_pool2d(t.long(), [2, 2], [3, 3], u.long()),
        lambda t, u, v: aten.fractional_max_pool2d(t[0, 0], [2, 2], [3, 3], u),
        lambda t, u, v: aten.fractional_max_pool3d(
            t[None], [2, 2, 2], [1, 3, 3], v
        ),  # pool T > input T
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_err:  # noqa: PT011 (the CPU's type, checked below)
            fn(x, s, s3)
        with pytest.raises(cpu_err.type):
            fn(x.to(DEVICE), s.to(DEVICE), s3.to(DEVICE))
