"""Batch, layer and group norm against the CPU: forward, saved statistics (values, dtypes and
shapes as the CPU returns them), running statistics, gradients of input/weight/bias, layouts
and dtypes. References are computed in float64 on the CPU; the nn modules take one SGD step."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu, skip_unsupported

# tolerances for results of reductions over up to a few hundred elements
TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-12),
    torch.float16: dict(rtol=1e-2, atol=1e-2),
    torch.bfloat16: dict(rtol=4e-2, atol=4e-2),
}


def _close(actual, expected, dtype, scale=1.0):
    tol = TOL[dtype]
    assert_ocl_close(actual, expected, rtol=tol["rtol"], atol=tol["atol"] * scale)


def _leaf(t, device=None, dtype=None):
    return t.to(device or t.device, dtype or t.dtype).detach().clone().requires_grad_()


def _run_module(make, x, dtype=torch.float32, layout=None, train=True):
    """The module in float64 on the CPU and in dtype on ocl from the same initial state: output,
    gradients, parameters' gradients and buffers after one forward/backward."""
    skip_unsupported(dtype)
    torch.manual_seed(0)
    cpu = make().double().train(train)
    dev = make().to(DEVICE, dtype).train(train)
    with torch.no_grad():
        for p, q in zip(cpu.parameters(), dev.parameters(), strict=True):
            p.copy_(make_cpu(p.shape, torch.float64, seed=p.numel(), low=0.5, high=1.5))
            q.copy_(p)
    xs = x.to(dtype)
    xc = _leaf(xs.double())
    xd = xs.to(DEVICE)
    if layout == "odd_size1_strides":
        xd = _odd_size1_strides(xd)
    elif layout is not None:
        xd = xd.contiguous(memory_format=layout)
    xd = xd.detach().requires_grad_()
    yc, yd = cpu(xc), dev(xd)
    _close(yd, yc.detach().to(dtype), dtype)
    g = make_cpu(yc.shape, torch.float64, seed=3)
    (yc * g).sum().backward()
    (yd * g.to(DEVICE, dtype)).sum().backward()
    scale = 10.0 if dtype in (torch.float16, torch.bfloat16) else 1.0
    _close(xd.grad, xc.grad.to(dtype), dtype, scale)
    for p, q in zip(cpu.parameters(), dev.parameters(), strict=True):
        _close(q.grad, p.grad.to(q.dtype), dtype, scale * 10)
    for b, c in zip(cpu.buffers(), dev.buffers(), strict=True):
        _close(c, b.to(c.dtype), dtype)


def _odd_size1_strides(t, channels_last=False):
    """t as a tensor whose size-1 dims have strides no layout computation gives them (they are
    arbitrary: is_contiguous() holds and .contiguous() returns the tensor as it is), as views of
    real models produce (timm's mobilevitv2: a [2, 96, 4, 1] input with strides (384, 4, 1, 2))."""
    if channels_last:
        t = t.contiguous(memory_format=torch.channels_last)
    strides = [
        7 + d if n == 1 else st for d, (n, st) in enumerate(zip(t.shape, t.stride(), strict=True))
    ]
    out = torch.empty_strided(t.shape, strides, dtype=t.dtype, device=t.device)
    out.copy_(t)
    assert out.stride() != t.stride()
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    assert out.is_contiguous(memory_format=fmt)
    return out


X4 = (3, 5, 7, 9)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("layout", [None, torch.channels_last])
def test_batch_norm2d(affine, track, layout):
    x = make_cpu(X4, torch.float64, seed=1)
    _run_module(
        lambda: nn.BatchNorm2d(5, affine=affine, track_running_stats=track), x, layout=layout
    )


@pytest.mark.parametrize("shape", [(6, 5), (4, 5, 11), (1, 5, 3)], ids=str)
def test_batch_norm1d(shape):
    _run_module(lambda: nn.BatchNorm1d(5, momentum=0.3), make_cpu(shape, torch.float64, seed=2))


def test_batch_norm3d_and_eval():
    x = make_cpu((2, 5, 3, 4, 3), torch.float64, seed=3)
    _run_module(lambda: nn.BatchNorm3d(5), x)
    _run_module(lambda: nn.BatchNorm3d(5), x, layout=torch.channels_last_3d)
    _run_module(lambda: nn.BatchNorm2d(5), make_cpu(X4, torch.float64, seed=4), train=False)


def test_batch_norm_cumulative_average_and_running_stats():
    x = make_cpu(X4, torch.float64, seed=5)
    cpu, dev = nn.BatchNorm2d(5, momentum=None), nn.BatchNorm2d(5, momentum=None).to(DEVICE)
    for i in range(3):
        cpu(x.float() * (i + 1))
        dev(x.float().to(DEVICE) * (i + 1))
    assert_ocl_close(dev.running_mean, cpu.running_mean, rtol=1e-5, atol=1e-6)
    assert_ocl_close(dev.running_var, cpu.running_var, rtol=1e-5, atol=1e-6)
    assert_ocl_close(dev.num_batches_tracked, cpu.num_batches_tracked)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_batch_norm_dtypes(dtype):
    _run_module(lambda: nn.BatchNorm2d(5), make_cpu(X4, torch.float64, seed=6), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batch_norm_mixed_dtype_outputs(dtype):
    """half/bfloat16 input with float parameters: the CPU returns float statistics."""
    x = make_cpu(X4, torch.float64, seed=7).to(dtype)
    w, b = make_cpu((5,), torch.float32, seed=8), make_cpu((5,), torch.float32, seed=9)
    rm, rv = torch.zeros(5), torch.ones(5)
    ref = torch.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5)
    args = [t.to(DEVICE) for t in (x, w, b)]
    rmd, rvd = torch.zeros(5, device=DEVICE), torch.ones(5, device=DEVICE)
    got = torch.native_batch_norm(*args, rmd, rvd, True, 0.1, 1e-5)
    for a, e in zip(got, ref, strict=True):
        _close(a, e, dtype)
    _close(rmd, rm, torch.float32)
    _close(rvd, rv, torch.float32)


def test_batch_norm_legit_variants():
    x = make_cpu(X4, torch.float32, seed=10)
    w, b = make_cpu((5,), torch.float32, seed=11), make_cpu((5,), torch.float32, seed=12)
    d = [t.to(DEVICE) for t in (x, w, b)]
    for train in (True, False):
        rm, rv = torch.rand(5), torch.rand(5) + 0.5
        rmd, rvd = rm.to(DEVICE), rv.to(DEVICE)
        ref = torch.ops.aten._native_batch_norm_legit(x, w, b, rm, rv, train, 0.2, 1e-3)
        got = torch.ops.aten._native_batch_norm_legit(*d, rmd, rvd, train, 0.2, 1e-3)
        for a, e in zip(got, ref, strict=True):
            _close(a, e, torch.float32)
        _close(rmd, rm, torch.float32)
        _close(rvd, rv, torch.float32)
    ref = torch.ops.aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)
    got = torch.ops.aten._native_batch_norm_legit.no_stats(*d, True, 0.1, 1e-5)
    for a, e in zip(got, ref, strict=True):
        _close(a, e, torch.float32)
    rm, rv = torch.rand(5), torch.rand(5) + 0.5
    rmd, rvd = rm.to(DEVICE), rv.to(DEVICE)
    ref = torch.ops.aten._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5)
    got = torch.ops.aten._batch_norm_with_update(*d, rmd, rvd, 0.1, 1e-5)
    for a, e in zip(got[:3], ref[:3], strict=True):
        _close(a, e, torch.float32)
    _close(rvd, rv, torch.float32)


@pytest.mark.parametrize("normalized", [(9,), (7, 9), (5, 7, 9)], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(normalized, affine):
    x = make_cpu(X4, torch.float64, seed=13)
    _run_module(lambda: nn.LayerNorm(normalized, elementwise_affine=affine), x)


def test_layer_norm_noncontiguous_and_stats():
    x = make_cpu((4, 6, 10), torch.float64, seed=14).transpose(0, 1)
    _run_module(lambda: nn.LayerNorm(10), x)
    w, b = make_cpu((10,), torch.float32, seed=15), make_cpu((10,), torch.float32, seed=16)
    xf = x.float()
    ref = torch.native_layer_norm(xf, [10], w, b, 1e-5)
    got = torch.native_layer_norm(xf.to(DEVICE), [10], w.to(DEVICE), b.to(DEVICE), 1e-5)
    for a, e in zip(got, ref, strict=True):
        _close(a, e, torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_layer_norm_dtypes(dtype):
    _run_module(lambda: nn.LayerNorm(9), make_cpu(X4, torch.float64, seed=17), dtype=dtype)
    if dtype == torch.float64:
        return
    x = make_cpu((6, 33), torch.float64, seed=18).to(dtype)
    w = make_cpu((33,), torch.float32, seed=19)
    ref = torch.native_layer_norm(x, [33], w, None, 1e-5)  # mixed: float statistics
    got = torch.native_layer_norm(x.to(DEVICE), [33], w.to(DEVICE), None, 1e-5)
    for a, e in zip(got, ref, strict=True):
        _close(a, e, dtype)


@pytest.mark.parametrize("groups,channels", [(1, 6), (3, 6), (6, 6)])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(groups, channels, affine):
    x = make_cpu((3, channels, 5, 7), torch.float64, seed=20)
    _run_module(lambda: nn.GroupNorm(groups, channels, affine=affine), x)


def test_group_norm_shapes_layouts_dtypes():
    _run_module(lambda: nn.GroupNorm(2, 4), make_cpu((3, 4, 5), torch.float64, seed=21))
    _run_module(lambda: nn.GroupNorm(2, 4), make_cpu((1, 4), torch.float64, seed=22))
    x = make_cpu((2, 6, 4, 5), torch.float64, seed=23)
    _run_module(lambda: nn.GroupNorm(3, 6), x, layout=torch.channels_last)
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        _run_module(lambda: nn.GroupNorm(3, 6), x, dtype=dtype)


def _norm_net():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.BatchNorm2d(4),
        nn.GroupNorm(2, 4),
        nn.LayerNorm((5, 6)),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.LayerNorm(24),
    )


def test_norm_modules_sgd_step_and_no_host_waits():
    cpu, dev = _norm_net().double(), _norm_net().to(DEVICE)
    x = make_cpu((3, 4, 5, 6), torch.float64, seed=24)
    g = make_cpu((3, 24), torch.float64, seed=25)

    def step(model, x, g):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        (model(x) * g).sum().backward()
        opt.step()

    step(cpu, x, g)
    with torch.ocl.sync_debug_mode("error"):
        step(dev, x.float().to(DEVICE), g.float().to(DEVICE))
    for p, q in zip(cpu.parameters(), dev.parameters(), strict=True):
        assert_ocl_close(q.detach(), p.detach().float(), rtol=1e-4, atol=1e-5)
    for b, c in zip(cpu.buffers(), dev.buffers(), strict=True):
        assert_ocl_close(c, b.to(c.dtype), rtol=1e-4, atol=1e-5)


def test_functional_forms():
    x = make_cpu((4, 6, 5), torch.float32, seed=26)
    xd = x.to(DEVICE)
    _close(F.group_norm(xd, 3), F.group_norm(x.double(), 3).float(), torch.float32)
    _close(F.layer_norm(xd, (6, 5)), F.layer_norm(x.double(), (6, 5)).float(), torch.float32)
    ref = F.batch_norm(x.double(), None, None, training=True)
    _close(F.batch_norm(xd, None, None, training=True), ref.float(), torch.float32)


# Group norm over 3 groups of a [3, 6, 1, 1] input would normalise 2 values per group (outputs
# +-1, gradients that amplify rounding): not among the cases.
SIZE1_CASES = [
    (shape, norm)
    for shape in [(2, 6, 4, 1), (2, 6, 1, 5), (3, 6, 1, 1), (1, 6, 3, 1)]
    for norm in ["batch", "group1", "group3", "layer"]
    if not (norm == "group3" and shape == (3, 6, 1, 1))
]


@pytest.mark.parametrize("shape,norm", SIZE1_CASES)
def test_size1_dims_with_odd_strides(shape, norm):
    """Normalisation reads a tensor whose size-1 dims have arbitrary strides as its layout says
    (the step between elements comes from the dims with more than one element)."""
    make = {
        "batch": lambda: nn.BatchNorm2d(6),
        "group1": lambda: nn.GroupNorm(1, 6),
        "group3": lambda: nn.GroupNorm(3, 6),
        "layer": lambda: nn.LayerNorm(shape[1:]),
    }[norm]
    _run_module(make, make_cpu(shape, torch.float64, seed=24), layout="odd_size1_strides")


def test_size1_dims_with_odd_strides_channels_last():
    x = make_cpu((2, 6, 4, 1), torch.float64, seed=25)
    for make in (lambda: nn.BatchNorm2d(6), lambda: nn.GroupNorm(2, 6)):
        torch.manual_seed(0)
        cpu, dev = make().double(), make().to(DEVICE)
        xd = _odd_size1_strides(x.float().to(DEVICE), channels_last=True)
        _close(dev(xd), cpu(x).detach().float(), torch.float32)
