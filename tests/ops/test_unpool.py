"""max_unpool2d / max_unpool3d forward (and their composite backward) against the CPU: indices
from max_pool with several kernels/strides/paddings and explicit output sizes, batched and
unbatched, one element, odd, channels_last (kept, as on the CPU) and strided inputs, random
indices with duplicates (the last value in input order wins, as on the CPU), float64/float16/
bfloat16, infinities and NaN, out-of-range indices (raised at the next wait) and the CPU's
errors. Runs with the CPU fallback set to raise."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu, skip_unsupported

POOL = {2: F.max_pool2d, 3: F.max_pool3d}
UNPOOL = {2: F.max_unpool2d, 3: F.max_unpool3d}
CASES = [
    (2, (2, 3, 6, 8), dict(kernel_size=2)),
    (2, (1, 2, 7, 9), dict(kernel_size=3, stride=2, padding=1)),
    (2, (3, 5, 4), dict(kernel_size=(2, 1))),  # unbatched
    (2, (1, 1, 1, 1), dict(kernel_size=1)),
    (3, (2, 2, 4, 5, 6), dict(kernel_size=2)),
    (3, (1, 3, 5, 7, 3), dict(kernel_size=(3, 2, 1), stride=(2, 2, 1), padding=(1, 0, 0))),
    (3, (2, 4, 4, 4), dict(kernel_size=2)),  # unbatched
]
IDS = [f"{d}d-{'x'.join(map(str, s))}-{i}" for i, (d, s, _) in enumerate(CASES)]


def check(dims, x, kw, dtype=torch.float32, output_size=None):
    skip_unsupported(dtype)
    y, idx = POOL[dims](x.float(), return_indices=True, **kw)
    y = y.to(dtype)
    size = output_size or x.shape[-dims:]
    yc = y.clone().requires_grad_()
    exp = UNPOOL[dims](yc, idx, **kw, output_size=size)
    yd = y.to(DEVICE).requires_grad_()
    got = UNPOOL[dims](yd, idx.to(DEVICE), **kw, output_size=size)
    assert_ocl_close(got, exp.detach(), exact=True)
    assert got.stride() == exp.stride()
    go = make_cpu(exp.shape, torch.float32, seed=3).to(dtype)
    (gc,) = torch.autograd.grad(exp, yc, go)
    (gd,) = torch.autograd.grad(got, yd, go.to(DEVICE))
    assert_ocl_close(gd, gc, exact=True)


@pytest.mark.parametrize("dims,shape,kw", CASES, ids=IDS)
def test_unpool(dims, shape, kw):
    x = make_cpu(shape, torch.float32, seed=1)
    check(dims, x, kw)


def test_output_size_larger():
    x = make_cpu((2, 3, 6, 8), torch.float32, seed=2)
    check(2, x, dict(kernel_size=2), output_size=(7, 9))
    x = make_cpu((1, 2, 4, 4, 6), torch.float32, seed=2)
    check(3, x, dict(kernel_size=2), output_size=(5, 4, 7))


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
def test_layouts(layout):
    x = make_cpu((2, 3, 6, 8), torch.float32, seed=4)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    if layout == "channels_last":
        y, idx = (
            y.contiguous(memory_format=torch.channels_last),
            idx.contiguous(memory_format=torch.channels_last),
        )
    else:
        y, idx = torch.cat([y, y], -1)[..., ::2], torch.cat([idx, idx], -1)[..., ::2]
    exp = F.max_unpool2d(y, idx, 2)
    got = F.max_unpool2d(y.to(DEVICE), idx.to(DEVICE), 2)
    assert_ocl_close(got, exp, exact=True)
    assert got.stride() == exp.stride()


@pytest.mark.parametrize("dims", [2, 3])
def test_duplicate_indices(dims):
    shape = (2, 3) + (4, 5, 6)[-dims:]
    x = make_cpu(shape, torch.float32, seed=5)
    idx = torch.randint(0, 7, shape, generator=torch.Generator().manual_seed(6))
    size = (3, 3, 3)[-dims:]
    aten = torch.ops.aten
    fn = (
        (lambda t, i: aten.max_unpool2d(t, i, size))
        if dims == 2
        else (lambda t, i: aten.max_unpool3d(t, i, size, [1, 1, 1], [0, 0, 0]))
    )
    exp = fn(x, idx)
    got = fn(x.to(DEVICE), idx.to(DEVICE))
    assert_ocl_close(got, exp, exact=True)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_dtypes(dtype):
    x = make_cpu((2, 3, 6, 8), torch.float32, seed=7)
    x[0, 0, 0, 0], x[1, 2, 3, 3], x[0, 1, 5, 7] = float("inf"), float("nan"), -float("inf")
    check(2, x, dict(kernel_size=2), dtype)
    check(3, make_cpu((1, 2, 4, 4, 4), torch.float32, seed=8), dict(kernel_size=2), dtype)


def test_bad_index_raises_at_the_next_wait():
    x = make_cpu((1, 2, 4, 4), torch.float32, seed=9)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    idx[0, 1, 1, 0] = 16
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(y, idx, 2)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(y.to(DEVICE), idx.to(DEVICE), 2).cpu()
    idx[0, 1, 1, 0] = -1
    with pytest.raises(RuntimeError, match="invalid max index"):
        torch.ops.aten.max_unpool3d(
            y[None].to(DEVICE), idx[None].to(DEVICE), [1, 4, 4], [1, 1, 1], [0, 0, 0]
        ).cpu()
    # the device stays usable
    assert_ocl_close(
        F.max_unpool2d(y.to(DEVICE), idx.clamp(0).to(DEVICE), 2), F.max_unpool2d(y, idx.clamp(0), 2)
    )


def test_errors():
    x = make_cpu((1, 2, 4, 4), torch.float32, seed=10)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    aten = torch.ops.aten
    cases = [
        lambda t, i: aten.max_unpool2d(t, i.int(), [4, 4]),
        lambda t, i: aten.max_unpool2d(t, i, [4]),
        lambda t, i: aten.max_unpool2d(t[0, 0], i[0, 0], [4, 4]),
        lambda t, i: aten.max_unpool2d(t, i[:, :1], [4, 4]),
        lambda t, i: aten.max_unpool2d(t[:, :0], i[:, :0], [4, 4]),
        lambda t, i: aten.max_unpool2d(t.long(), i, [4, 4]),
        lambda t, i: aten.max_unpool3d(t[None], i[None], [1, 4, 4], [0, 1, 1], [0, 0, 0]),
        lambda t, i: aten.max_unpool3d(t[None], i[None], [1, 4, 4], [1, 1], [0, 0, 0]),
        lambda t, i: aten.max_unpool3d(t[None].int(), i[None], [1, 4, 4], [1, 1, 1], [0, 0, 0]),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_err:  # noqa: PT011 (the CPU's type, checked below)
            fn(y, idx)
        with pytest.raises(cpu_err.type):
            fn(y.to(DEVICE), idx.to(DEVICE))
