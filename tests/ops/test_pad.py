"""Padding against the CPU: constant (F.pad / constant_pad_nd, negative pads too), reflection and
replication 1d/2d/3d, circular; forward for every dtype the CPU supports, gradients against a
float64 CPU reference (and bit-for-bit repeatable: the backward kernels gather, no atomics),
contiguous, channels_last, transposed and strided inputs, unbatched and empty batches, out=,
and the CPU's errors. Runs with the CPU fallback set to raise (tests/conftest.py)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import (
    ALL_DTYPES,
    DEVICE,
    FLOAT_DTYPES,
    assert_ocl_close,
    make_cpu,
    skip_unsupported,
)

NAN, INF = float("nan"), float("inf")
NO_BOOL = tuple(d for d in ALL_DTYPES if d != torch.bool)


def _layout(x, layout):
    if layout == "channels_last":
        fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
        return x.contiguous(memory_format=fmt)
    if layout == "transposed":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "strided":
        return x[..., ::2]
    return x


def _check_error(fn, cpu_args, ocl_args):
    with pytest.raises(Exception) as cpu_err:
        fn(*cpu_args)
    with pytest.raises(type(cpu_err.value)) as dev_err:
        fn(*ocl_args)
    assert str(dev_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


def compare(fn, x, dtype=torch.float32, layout="contiguous", grad=True, seed=5):
    """fn on ocl (dtype, layout) equals fn on the CPU; with grad, the input gradient too, against
    the CPU in float64 (rounded to dtype). Returns the device result."""
    skip_unsupported(dtype)
    xs = x.to(dtype)
    cpu_in = _layout(xs, layout)
    dev_in = _layout(xs.to(DEVICE), layout)
    got, expected = fn(dev_in), fn(cpu_in)
    assert_ocl_close(got, expected, exact=True)  # padding moves values: exact
    if not grad:
        return got
    ref_in = _layout(xs.double(), layout).detach().requires_grad_()
    dev_in = dev_in.detach().requires_grad_()
    ref, out = fn(ref_in), fn(dev_in)
    g = make_cpu(ref.shape, torch.float64, seed=seed).to(dtype).double()
    (ref * g).sum().backward()
    (out * g.to(DEVICE, dtype)).sum().backward()
    assert_ocl_close(dev_in.grad, ref_in.grad.to(dtype))
    return got


# ---------------------------------------------------------------------------------------------
# constant


CONSTANT_PADS = [(1, 2), (0, 0, 2, 1), (-1, 2, 3, -2), (-2, -1), (3, 3, 0, 0, 1, 1), (2, -3, 0, 1)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_constant_dtypes(dtype):
    x = make_cpu((2, 3, 5, 6), dtype, seed=1)
    value = True if dtype == torch.bool else (3 if not dtype.is_floating_point else -2.5)
    for pad in CONSTANT_PADS:
        compare(lambda t, pad=pad: F.pad(t, pad, value=value), x, dtype, grad=False)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed", "strided"])
@pytest.mark.parametrize("pad", CONSTANT_PADS, ids=str)
def test_constant_layouts_grad(layout, pad):
    x = make_cpu((2, 3, 5, 8), torch.float64, seed=2)
    got = compare(lambda t: F.pad(t, pad, value=1.5), x, layout=layout)
    expected = F.pad(_layout(x.float(), layout), pad, value=1.5)
    assert got.stride() == expected.stride()


def test_constant_special_values_and_shapes():
    x = torch.tensor([[NAN, -0.0, INF], [-INF, 1.0, 2.0]])
    got = F.pad(x.to(DEVICE), (1, 1), value=NAN).cpu()
    assert torch.equal(got.view(torch.int32), F.pad(x, (1, 1), value=NAN).view(torch.int32))
    for shape, pad in [((0, 3), (1, 1)), ((3,), (2, 0)), ((1, 1), (0, 0)), ((4, 0), (1, 1, 0, 0))]:
        x = make_cpu(shape, torch.float32, seed=3)
        compare(lambda t, pad=pad: F.pad(t, pad, value=7.0), x, grad=False)
    x = make_cpu((3, 4), torch.uint8)
    compare(lambda t: torch.constant_pad_nd(t, (-1, -1), 300), x, torch.uint8, grad=False)


def test_constant_errors():
    x = make_cpu((3, 4), torch.float32)
    d = x.to(DEVICE)
    for pad in [(1,), (1, 1, 1, 1, 1, 1), (-3, -2), (-5, 2)]:
        _check_error(lambda t, pad=pad: torch.constant_pad_nd(t, pad), (x,), (d,))
    xu = x.to(torch.uint8)
    _check_error(lambda t: torch.constant_pad_nd(t, (1, 1), 300), (xu,), (xu.to(DEVICE),))


# ---------------------------------------------------------------------------------------------
# reflection and replication

CASES = {
    1: [(1, 2), (0, 3), (-1, 2), (3, -2)],
    2: [(1, 2, 2, 1), (0, 0, 3, 0), (-1, 2, 1, -2), (3, 3, 3, 3)],
    3: [(1, 1, 1, 1, 1, 1), (2, 0, 0, 1, 1, 2), (-1, 1, 0, 2, 1, -1)],
}
SHAPES = {1: (2, 3, 9), 2: (2, 3, 5, 7), 3: (1, 2, 4, 5, 6)}


# (spatial, layout): 3-d tensors (1-d padding) have no channels_last layout
LAYOUT_CASES = [
    (s, lay)
    for s in (1, 2, 3)
    for lay in ("contiguous", "channels_last", "transposed", "strided")
    if not (s == 1 and lay == "channels_last")
]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize(
    "spatial,layout", LAYOUT_CASES, ids=[f"{s}d-{lay}" for s, lay in LAYOUT_CASES]
)
def test_reflect_replicate(mode, spatial, layout):
    x = make_cpu(SHAPES[spatial], torch.float64, seed=spatial)
    for pad in CASES[spatial]:
        compare(lambda t, pad=pad: F.pad(t, pad, mode=mode), x, layout=layout)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("dtype", NO_BOOL, ids=str)
def test_reflect_replicate_dtypes(mode, dtype):
    for spatial in (1, 2, 3):
        x = make_cpu(SHAPES[spatial], dtype, seed=10 + spatial)
        pad = CASES[spatial][0]
        compare(lambda t, pad=pad: F.pad(t, pad, mode=mode), x, dtype, grad=dtype.is_floating_point)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_reflect_replicate_unbatched_and_empty_batch(mode):
    for spatial, shape in [(1, (3, 7)), (2, (2, 4, 5)), (3, (2, 3, 4, 5))]:
        pad = CASES[spatial][0]
        compare(
            lambda t, pad=pad: F.pad(t, pad, mode=mode), make_cpu(shape, torch.float64), grad=True
        )
        empty = make_cpu((0, *SHAPES[spatial][1:]), torch.float32)
        compare(lambda t, pad=pad: F.pad(t, pad, mode=mode), empty, grad=False)


def test_replicate_wide_padding_and_one_element():
    # every output position beyond the edges reads the edge element: long gather ranges
    x = make_cpu((1, 2, 3, 2), torch.float64, seed=20)
    compare(lambda t: F.pad(t, (9, 7, 5, 11), mode="replicate"), x)
    x = make_cpu((1, 1, 1, 1), torch.float64, seed=21)
    compare(lambda t: F.pad(t, (3, 2, 1, 4), mode="replicate"), x)


def test_backward_special_values_and_repeatable():
    x = make_cpu((1, 2, 6, 7), torch.float32, seed=22).to(DEVICE).requires_grad_()
    y = F.pad(x, (2, 3, 1, 2), mode="reflect")
    g = make_cpu(y.shape, torch.float32, seed=23)
    g[0, 0, 0, 0], g[0, 1, 3, 4], g[0, 1, 5, 6] = INF, NAN, -INF
    first = torch.autograd.grad(y, x, g.to(DEVICE), retain_graph=True)[0]
    second = torch.autograd.grad(y, x, g.to(DEVICE))[0]
    # deterministic, bit for bit
    assert torch.equal(first.cpu().view(torch.int32), second.cpu().view(torch.int32))
    xc = x.detach().cpu().requires_grad_()
    expected = torch.autograd.grad(F.pad(xc, (2, 3, 1, 2), mode="reflect"), xc, g)[0]
    assert_ocl_close(first, expected)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_backward_ops_directly(dtype):
    skip_unsupported(dtype)
    aten = torch.ops.aten
    x = make_cpu((2, 3, 5, 6), dtype, seed=24)
    for op, pad in [
        (aten.reflection_pad2d_backward, [1, 2, 2, 1]),
        (aten.replication_pad2d_backward, [2, 1, 0, 3]),
    ]:
        go = make_cpu((2, 3, 5 + pad[2] + pad[3], 6 + pad[0] + pad[1]), dtype, seed=25)
        got = op(go.to(DEVICE), x.to(DEVICE), pad)
        assert_ocl_close(got, op(go.double(), x.double(), pad).to(dtype))
        out = torch.empty(0, dtype=dtype, device=DEVICE)
        op.grad_input(go.to(DEVICE), x.to(DEVICE), pad, grad_input=out)
        assert_ocl_close(out, got.cpu(), exact=True)
    x3 = make_cpu((1, 2, 3, 4, 5), dtype, seed=26)
    go3 = make_cpu((1, 2, 5, 5, 8), dtype, seed=27)
    pad3 = [1, 2, 0, 1, 1, 1]
    got = aten.replication_pad3d_backward(go3.to(DEVICE), x3.to(DEVICE), pad3)
    assert_ocl_close(
        got, aten.replication_pad3d_backward(go3.double(), x3.double(), pad3).to(dtype)
    )


def test_out_variants():
    x = make_cpu((2, 3, 5, 6), torch.float32, seed=28)
    for op, pad in [
        (torch.ops.aten.reflection_pad2d, [1, 1, 2, 2]),
        (torch.ops.aten.replication_pad2d, [1, 0, 2, 3]),
        (torch.ops.aten.reflection_pad1d, [2, 1]),
    ]:
        xs = x[0] if len(pad) == 2 else x
        out_c, out_d = torch.empty(0), torch.empty(0, device=DEVICE)
        op.out(xs, pad, out=out_c)
        op.out(xs.to(DEVICE), pad, out=out_d)
        assert_ocl_close(out_d, out_c, exact=True)


def test_errors():
    aten = torch.ops.aten
    x = make_cpu((2, 3, 4, 5), torch.float32)
    d = x.to(DEVICE)
    cases = [
        (lambda t: aten.reflection_pad2d(t, [1, 1, 1]),),
        (lambda t: aten.reflection_pad2d(t[0, 0], [1, 1, 1, 1]),),
        (lambda t: aten.reflection_pad2d(t, [5, 1, 1, 1]),),
        (lambda t: aten.reflection_pad2d(t, [1, 1, 4, 1]),),
        (lambda t: aten.reflection_pad1d(t[0], [5, 0]),),
        (lambda t: aten.reflection_pad3d(t[None], [1, 1, 1, 1, 1, 5]),),
        (lambda t: aten.replication_pad2d(t, [1, 1]),),
        (lambda t: aten.replication_pad3d(t, [1, 1, 1, 1]),),
        (lambda t: aten.reflection_pad2d(t.bool(), [1, 1, 1, 1]),),
        (lambda t: aten.replication_pad1d(t[0].bool(), [1, 1]),),
        (lambda t: F.pad(t, (1, 1), mode="circular", value=1.0),),
        (lambda t: F.pad(t, (6, 1), mode="circular"),),
    ]
    for (fn,) in cases:
        _check_error(fn, (x,), (d,))
    g = make_cpu((2, 3, 6, 7), torch.float32)
    _check_error(
        lambda go, t: aten.replication_pad2d_backward(go, t, [2, 1, 1, 1]),
        (g, x),
        (g.to(DEVICE), d),
    )
    _check_error(
        lambda go, t: aten.reflection_pad2d_backward(go.int(), t.int(), [1, 1, 1, 1]),
        (g, x),
        (g.to(DEVICE), d),
    )


# ---------------------------------------------------------------------------------------------
# circular (ATen's _pad_circular: slices and copies, native)


@pytest.mark.parametrize(
    "spatial,pad",
    [(1, (2, 1)), (2, (1, 2, 2, 0)), (2, (-1, 2, 1, -1)), (3, (1, 1, 0, 2, 1, 0))],
    ids=str,
)
def test_circular(spatial, pad):
    x = make_cpu(SHAPES[spatial], torch.float64, seed=30)
    compare(lambda t: F.pad(t, pad, mode="circular"), x)
    xi = make_cpu(SHAPES[spatial], torch.int32, seed=31)
    compare(lambda t: F.pad(t, pad, mode="circular"), xi, torch.int32, grad=False)


def test_no_host_waits():
    x = make_cpu((2, 3, 6, 7), torch.float32).to(DEVICE).requires_grad_()
    torch.ocl.synchronize()
    with torch.ocl.sync_debug_mode("error"):
        y = F.pad(x, (1, 2, 2, 1), mode="reflect") + F.pad(x, (1, 2, 2, 1), mode="replicate")
        z = F.pad(y, (1, -1, 2, 0), value=0.5)
        z.sum().backward()
    torch.ocl.synchronize()
    assert x.grad is not None
