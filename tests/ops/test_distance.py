"""cdist / pdist (_cdist_forward/_cdist_backward, _pdist_forward/_pdist_backward through ATen's
DispatchStubs) against a float64 CPU reference: p = 0, 0.5, 1, 1.5, 2, 3, inf, forward and
gradients, batched and broadcast batches, the matmul route of p = 2 on larger inputs (ATen's
composite), empty, one-row, odd, non-contiguous and large shapes, equal rows (zero distances),
float64, NaN and Inf, determinism and the CPU's errors. Runs with the CPU fallback set to raise."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, TOLERANCES, assert_ocl_close, make_cpu, skip_unsupported

PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]
NO_MM = "donot_use_mm_for_euclid_dist"


def _atol(cpu, ref, dtype):
    """The dtype's tolerance, or twice the CPU's own error in dtype where larger (|d|^(p-1) for
    p < 1 is large for small differences)."""
    base = TOLERANCES[dtype][1]
    if cpu.numel() == 0:
        return base
    err = (cpu.double() - ref).abs()
    err = err[err.isfinite()]
    return max(base, 2 * err.max().item()) if err.numel() else base


def check(fn, inputs, dtype=torch.float32, seed=1):
    """fn on ocl in dtype equals fn in float64 on the CPU, gradients of every input too."""
    skip_unsupported(dtype)
    xs = [x.to(dtype) for x in inputs]
    ref_in = [x.double().requires_grad_() for x in xs]
    cpu_in = [x.clone().requires_grad_() for x in xs]
    dev_in = [x.to(DEVICE).requires_grad_() for x in xs]
    ref, cpu, got = fn(*ref_in), fn(*cpu_in), fn(*dev_in)
    assert_ocl_close(got, ref.detach().to(dtype), atol=_atol(cpu.detach(), ref.detach(), dtype))
    if ref.numel() == 0:
        return got
    go = make_cpu(ref.shape, torch.float64, seed=seed).to(dtype)
    ref_g = torch.autograd.grad(ref, ref_in, go.double())
    cpu_g = torch.autograd.grad(cpu, cpu_in, go)
    got_g = torch.autograd.grad(got, dev_in, go.to(DEVICE))
    for r, c, g in zip(ref_g, cpu_g, got_g, strict=True):
        assert_ocl_close(g, r.to(dtype), atol=_atol(c, r, dtype), rtol=1e-4)
    return got


@pytest.mark.parametrize("p", PS, ids=str)
@pytest.mark.parametrize(
    "s1,s2",
    [((5, 3), (4, 3)), ((2, 1, 6, 4), (3, 7, 4)), ((1, 1), (1, 1)), ((9, 7), (30, 7))],
    ids=str,
)
def test_cdist(p, s1, s2):
    a, b = make_cpu(s1, torch.float64, seed=2), make_cpu(s2, torch.float64, seed=3)
    check(lambda x, y: torch.cdist(x, y, p, compute_mode=NO_MM), [a, b])
    # equal rows: zero distances, whose gradients are zero (or a subgradient) as on the CPU
    b2 = (
        torch.cat([a[..., :2, :].expand(*b.shape[:-2], 2, a.shape[-1]), b], -2)
        if len(s1) == len(s2)
        else b
    )
    check(lambda x, y: torch.cdist(x, y, p, compute_mode=NO_MM), [a, b2])


@pytest.mark.parametrize("p", PS, ids=str)
@pytest.mark.parametrize("shape", [(7, 5), (2, 3), (1, 4), (0, 3), (5, 0), (13, 1)], ids=str)
def test_pdist(p, shape):
    x = make_cpu(shape, torch.float64, seed=4)
    check(lambda t: torch.pdist(t, p), [x])
    if shape[0] > 2:
        x[2] = x[0]  # a zero distance
        check(lambda t: torch.pdist(t, p), [x])


def test_euclidean_matmul_route_and_layouts():
    a = make_cpu((3, 40, 6), torch.float64, seed=5)
    b = make_cpu((3, 12, 12), torch.float64, seed=6)[..., ::2]  # non-contiguous
    check(lambda x, y: torch.cdist(x, y), [a, b])  # p = 2 with > 25 rows: ATen's matmul route
    check(
        lambda x, y: torch.cdist(x, y, 1.0), [a.transpose(-1, -2).contiguous().transpose(-1, -2), b]
    )
    x = make_cpu((6, 10), torch.float64, seed=7)[:, ::2]
    check(lambda t: torch.pdist(t, 3.0), [x])


@pytest.mark.parametrize(
    "shape", [((0, 3), (4, 3)), ((2, 0), (3, 0)), ((0, 2, 3), (0, 4, 3))], ids=str
)
def test_cdist_empty(shape):
    a, b = make_cpu(shape[0], torch.float64, seed=8), make_cpu(shape[1], torch.float64, seed=9)
    for p in (1.0, 2.0):
        check(lambda x, y, p=p: torch.cdist(x, y, p, compute_mode=NO_MM), [a, b])


def test_float64():
    a, b = make_cpu((4, 5), torch.float64, seed=10), make_cpu((6, 5), torch.float64, seed=11)
    for p in (0.5, 2.0, 3.0):
        check(lambda x, y, p=p: torch.cdist(x, y, p, compute_mode=NO_MM), [a, b], torch.float64)
        check(lambda t, p=p: torch.pdist(t, p), [a], torch.float64)


def test_special_values():
    a = make_cpu((4, 3), torch.float32, seed=12)
    b = make_cpu((5, 3), torch.float32, seed=13)
    a[1, 1], b[2, 0], b[3, 2] = float("nan"), float("inf"), -float("inf")
    for p in PS:
        got = torch.cdist(a.to(DEVICE), b.to(DEVICE), p, compute_mode=NO_MM)
        assert_ocl_close(got, torch.cdist(a, b, p, compute_mode=NO_MM))
        assert_ocl_close(torch.pdist(a.to(DEVICE), p), torch.pdist(a, p))


def test_deterministic_backward():
    x = make_cpu((40, 8), torch.float32, seed=14).to(DEVICE).requires_grad_()
    grads = [torch.autograd.grad(torch.pdist(x, 1.5).sum(), x)[0].cpu() for _ in range(2)]
    assert torch.equal(grads[0].view(torch.int32), grads[1].view(torch.int32))


@pytest.mark.slow
def test_large():
    a, b = (
        make_cpu((3, 300, 33), torch.float64, seed=15),
        make_cpu((3, 257, 33), torch.float64, seed=16),
    )
    check(lambda x, y: torch.cdist(x, y, 1.0), [a, b])
    check(lambda t: torch.pdist(t, 2.0), [make_cpu((301, 17), torch.float64, seed=17)])


def test_errors():
    a, b = make_cpu((3, 4), torch.float32, seed=18), make_cpu((5, 4), torch.float32, seed=19)
    cases = [
        lambda x, y: torch.cdist(x.half(), y.half(), 1.0),
        lambda x, y: torch.cdist(x.int(), y.int(), 1.0),
        lambda x, y: torch.cdist(x, y[:, :3], 1.0),
        lambda x, y: torch.cdist(x, y, -1.0),
        lambda x, y: torch.cdist(x[0], y, 1.0),
        lambda x, y: torch.pdist(x.half(), 2.0),
        lambda x, y: torch.pdist(x[None], 2.0),
        lambda x, y: torch.pdist(x, -2.0),
        lambda x, y: torch.ops.aten._pdist_forward(x.t(), 2.0),
    ]
    for fn in cases:
        with pytest.raises(Exception) as cpu_err:  # noqa: PT011 (the CPU's type, checked below)
            fn(a, b)
        with pytest.raises(cpu_err.type):
            fn(a.to(DEVICE), b.to(DEVICE))
    assert_ocl_close(torch.cdist(a.to(DEVICE), b.to(DEVICE), 1.0), torch.cdist(a, b, 1.0))
