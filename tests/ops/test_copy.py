"""Copies, factories, views, resize_, set_, fill_ and item() on the ocl device.

The CPU fallback is an error here: every op below must be native.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import (
    ALL_DTYPES,
    DEVICE,
    FLOAT_DTYPES,
    LARGE,
    assert_ocl_close,
    dtype_id,
    make_cpu,
    skip_unsupported,
    supports_dtype,
)

NAN, INF = float("nan"), float("inf")


def _values(dtype):
    """Representative values of a dtype, including its extremes (and NaN/inf for floats)."""
    if dtype == torch.bool:
        return [True, False, True, True, False]
    if dtype.is_floating_point:
        info = torch.finfo(dtype)
        return [0.0, -0.0, 1.5, -2.25, NAN, INF, -INF, info.max, info.min, info.tiny, 1e-3]
    info = torch.iinfo(dtype)
    return [0, 1, -1 if info.min < 0 else 2, info.min, info.max, 7, info.max // 3]


def _shape_ids(s):
    return "x".join(map(str, s)) or "scalar"


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_round_trip_every_dtype(dtype):
    skip_unsupported(dtype)
    x = torch.tensor(_values(dtype), dtype=dtype)
    xo = x.to(DEVICE)
    assert xo.device.type == "ocl" and xo.dtype == dtype and xo.shape == x.shape
    back = xo.cpu()
    assert back.device.type == "cpu"
    torch.testing.assert_close(back, x, rtol=0, atol=0, equal_nan=True)
    # Bit-exact, signed zeros and NaN payloads included.
    if dtype.itemsize > 1 or dtype != torch.bool:
        assert torch.equal(back.view(torch.uint8), x.view(torch.uint8))


@pytest.mark.parametrize(
    "shape", [(0,), (3, 0), (), (1,), (7, 13), (2, 3, 4, 5), (LARGE,)], ids=_shape_ids
)
def test_round_trip_shapes(shape):
    x = make_cpu(shape, torch.float32)
    xo = x.to(DEVICE)
    assert xo.shape == x.shape
    assert torch.equal(xo.cpu(), x)
    assert torch.equal(torch.Tensor.cpu(xo.to("cpu")), x)


def test_to_same_device_returns_self():
    xo = torch.ones(3).to(DEVICE)
    assert xo.to(DEVICE) is xo
    assert xo.to("ocl") is xo
    assert xo.to(torch.device("ocl", torch.ocl.current_device())) is xo
    assert xo.ocl() is xo


# (source dtype, destination dtype, values exactly representable or defined in both)
CONVERSIONS = [
    (torch.float32, torch.int32, [-3.7, -0.5, 0.0, 0.5, 2.9, 1000.25, -123456.0]),
    (torch.float32, torch.uint8, [0.0, 1.9, 200.5, 255.0, 17.0]),
    (torch.int64, torch.float32, [-(2**40), -1, 0, 3, 2**24 + 1]),
    (torch.float32, torch.float16, [0.1, -2.5, 65504.0, 1e5, -1e5, 6e-8, NAN, INF]),
    (torch.float16, torch.float32, [0.1, -2.5, 65504.0, 6e-8, NAN, -INF]),
    (torch.float32, torch.bfloat16, [0.1, -2.5, 3.0e38, 1.00390625, 1.01171875, NAN, -INF]),
    (torch.bfloat16, torch.float32, [0.1, -2.5, 3.0e38, NAN, INF]),
    (torch.float64, torch.float32, [0.1, 1e-50, 1e300, -1e300, 1 / 3, NAN]),
    (torch.float32, torch.float64, [0.1, 1 / 3, -INF, NAN]),
    (torch.bool, torch.float32, [True, False, True]),
    (torch.float32, torch.bool, [0.0, -0.0, 0.5, -2.0, NAN, INF]),
    (torch.int32, torch.bool, [0, 1, -1, 256, 0]),
    (torch.uint8, torch.int8, [0, 127, 128, 200, 255]),
    (torch.int64, torch.int32, [0, -1, 2**31 - 1, -(2**31), 2**32 + 5]),
    (torch.int8, torch.int64, [-128, -1, 0, 127]),
    (torch.bool, torch.int64, [True, False]),
]


@pytest.mark.parametrize(
    ("src", "dst", "values"),
    CONVERSIONS,
    ids=[f"{dtype_id(a)}-{dtype_id(b)}" for a, b, _ in CONVERSIONS],
)
def test_dtype_conversion(src, dst, values):
    skip_unsupported(src)
    skip_unsupported(dst)
    x = torch.tensor(values, dtype=src)
    expected = x.to(dst)
    xo = x.to(DEVICE)
    # On the device (a conversion kernel), host->device and device->host with conversion.
    assert_ocl_close(xo.to(dst), expected, exact=True)
    assert_ocl_close(x.to(DEVICE, dst), expected, exact=True)
    got = xo.to("cpu", dst)
    assert got.device.type == "cpu"
    torch.testing.assert_close(got, expected, rtol=0, atol=0, equal_nan=True)
    # copy_ into an existing tensor of the other dtype.
    out = torch.empty(len(values), dtype=dst, device=DEVICE)
    out.copy_(xo)
    assert_ocl_close(out, expected, exact=True)


def test_conversion_of_non_contiguous_source():
    x = make_cpu((13, 7), torch.float32, low=-100, high=100)
    xo = x.to(DEVICE)
    assert_ocl_close(xo.t().to(torch.int32), x.t().to(torch.int32))
    assert_ocl_close(xo[::2].half(), x[::2].half())


# Values outside the narrow type's range: CPU torch converts float -> uint8 through int64 and
# float -> int8/int16 through int32, then wraps. Only values inside int64 (uint8) or int32
# (int8/int16) are used: beyond them the C++ conversion itself is undefined.
WRAP_VALUES = [-1.0, -100.0, 300.0, 255.5, -0.5, 1.7, 70000.0, -40000.5, 2.0e9, -2.0e9]
WRAP_VALUES_UINT8 = WRAP_VALUES + [3e9, -3e9, 3000000128.0, 1e10, -1e10]


@pytest.mark.parametrize("n", [1, 2, 7, 64, 65, 1000, 4097, 100_003])
@pytest.mark.parametrize("dst", [torch.uint8, torch.int8, torch.int16], ids=dtype_id)
@pytest.mark.parametrize("src", FLOAT_DTYPES, ids=dtype_id)
def test_narrow_integer_conversion_wraps_like_cpu_at_every_size(src, dst, n):
    """The result of float -> uint8/int8/int16 no longer depends on the tensor's size (it
    saturated in the vectorised kernel and wrapped in the scalar one)."""
    skip_unsupported(src)
    values = torch.tensor(WRAP_VALUES_UINT8 if dst == torch.uint8 else WRAP_VALUES)
    g = torch.Generator().manual_seed(n)
    x = values[torch.randint(0, len(values), (n,), generator=g)]
    x = x + torch.rand(n, generator=g, dtype=torch.float64).float() * 0.5
    x = x.to(src)
    x = x[x.isfinite()] if src == torch.float16 else x  # 70000 is inf in float16
    xo = x.to(DEVICE)
    assert_ocl_close(xo.to(dst), x.to(dst), exact=True)
    if x.numel() > 2:  # a strided source and destination take the general kernel
        out = torch.empty(x.numel() * 2, dtype=dst, device=DEVICE)[::2]
        out.copy_(xo)
        assert_ocl_close(out, x.to(dst), exact=True)
        assert_ocl_close(xo[::3].to(dst), x[::3].to(dst), exact=True)


@pytest.mark.parametrize(
    "write",
    [
        lambda x: x[1:].copy_(x[:-1]),
        lambda x: x[:4].copy_(x[2:]),
        lambda x: x.view(2, 3).copy_(x.view(3, 2).t()),
        lambda x: x.expand(2, 6).copy_(torch.ones(2, 6, device=x.device)),
    ],
    ids=["shift-right", "shift-left", "transposed", "expanded-destination"],
)
def test_overlapping_copy_raises_like_cpu(write):
    """x[1:] = x[:-1] showed a raw OpenCL error (-8); now the CPU's explanation."""
    x = make_cpu((6,), torch.float32, seed=3)
    with pytest.raises(RuntimeError) as cpu_err:
        write(x.clone())
    xo = x.to(DEVICE)
    with pytest.raises(RuntimeError) as ocl_err:
        write(xo)
    assert str(ocl_err.value) == str(cpu_err.value)
    assert_ocl_close(xo, x, exact=True)  # untouched, and the device still works
    assert_ocl_close(xo * 2, x * 2)


def test_copy_onto_itself_and_from_a_clone_work():
    x = make_cpu((6,), torch.float32, seed=4)
    xo = x.to(DEVICE)
    xo.copy_(xo)
    xo[1:] = xo[:-1].clone()
    x[1:] = x[:-1].clone()
    assert_ocl_close(xo, x, exact=True)


def test_non_contiguous_host_to_device():
    x = make_cpu((13, 7), torch.float32)
    # Non-contiguous CPU source into a contiguous ocl destination.
    dst = torch.empty(7, 13, device=DEVICE)
    dst.copy_(x.t())
    assert_ocl_close(dst, x.t().contiguous(), exact=True)
    dst2 = torch.empty(13, 4, device=DEVICE)
    dst2.copy_(x[:, ::2])
    assert_ocl_close(dst2, x[:, ::2].contiguous(), exact=True)
    # Contiguous CPU source into a non-contiguous ocl destination.
    base = torch.zeros(13, 7, device=DEVICE)
    base.t().copy_(x.t().contiguous())
    assert_ocl_close(base, x, exact=True)
    strided = torch.zeros(7, 26, device=DEVICE)
    strided[:, ::2].copy_(x.t())
    expected = torch.zeros(7, 26)
    expected[:, ::2] = x.t()
    assert_ocl_close(strided, expected, exact=True)
    # .to() keeps the strides of a dense non-contiguous tensor.
    xo = x.t().to(DEVICE)
    assert xo.stride() == x.t().stride()
    assert_ocl_close(xo, x.t(), exact=True)


def test_non_contiguous_device_to_host():
    x = make_cpu((13, 7), torch.float32)
    xo = x.to(DEVICE)
    # Non-contiguous ocl source into a contiguous CPU destination.
    assert torch.equal(xo.t().contiguous().cpu(), x.t().contiguous())
    assert torch.equal(xo.t().cpu(), x.t())
    assert torch.equal(xo[::3, 1::2].cpu(), x[::3, 1::2])
    dst = torch.empty(7, 13)
    dst.copy_(xo.t())
    assert torch.equal(dst, x.t())
    # Contiguous ocl source into a non-contiguous CPU destination.
    dst_t = torch.zeros(7, 13).t()
    dst_t.copy_(xo)
    assert torch.equal(dst_t, x)
    dst_s = torch.zeros(13, 14)
    dst_s[:, ::2].copy_(xo)
    assert torch.equal(dst_s[:, ::2], x) and torch.equal(dst_s[:, 1::2], torch.zeros(13, 7))
    # With a dtype change on the way.
    dst_d = torch.zeros(7, 13, dtype=torch.float64)
    dst_d.copy_(xo.t())
    assert torch.equal(dst_d, x.t().double())


def test_device_to_device_copies():
    x = make_cpu((13, 7), torch.float32)
    xo = x.to(DEVICE)
    # Contiguous, same dtype.
    y = torch.empty_like(xo)
    y.copy_(xo)
    assert_ocl_close(y, x, exact=True)
    assert y.data_ptr() != xo.data_ptr()
    # Non-contiguous source and destination.
    z = torch.zeros(7, 13, device=DEVICE)
    z.copy_(xo.t())
    assert_ocl_close(z, x.t().contiguous(), exact=True)
    w = torch.zeros(13, 14, device=DEVICE)
    w[:, 1::2].copy_(xo)
    expected = torch.zeros(13, 14)
    expected[:, 1::2] = x
    assert_ocl_close(w, expected, exact=True)
    # Overlapping copy within one tensor (through a temporary, as on the CPU).
    v = x.clone()
    vo = xo.clone()
    v[1:].copy_(v[:-1].clone())
    vo[1:].copy_(vo[:-1].clone())
    assert_ocl_close(vo, v, exact=True)
    # Copy to itself is a no-op.
    xo.copy_(xo)
    assert_ocl_close(xo, x, exact=True)


def test_broadcasting_copy():
    row = torch.arange(5, dtype=torch.float32).reshape(1, 5)
    expected = row.expand(4, 5).contiguous()
    # Host -> device.
    dst = torch.empty(4, 5, device=DEVICE)
    dst.copy_(row)
    assert_ocl_close(dst, expected, exact=True)
    # Device -> device.
    dst2 = torch.empty(4, 5, device=DEVICE)
    dst2.copy_(row.to(DEVICE))
    assert_ocl_close(dst2, expected, exact=True)
    # Device -> host.
    dst3 = torch.empty(4, 5)
    dst3.copy_(row.to(DEVICE))
    assert torch.equal(dst3, expected)
    # A 0-dim source, with a dtype change.
    dst4 = torch.empty(3, 2, dtype=torch.int32, device=DEVICE)
    dst4.copy_(torch.tensor(7.9))
    assert_ocl_close(dst4, torch.full((3, 2), 7, dtype=torch.int32))
    # Broadcast into a non-contiguous destination.
    dst5 = torch.zeros(5, 4, device=DEVICE).t()
    dst5.copy_(row.to(DEVICE))
    assert_ocl_close(dst5, expected, exact=True)


def test_copy_shape_mismatch_raises():
    dst = torch.empty(4, 5, device=DEVICE)
    with pytest.raises(RuntimeError):
        dst.copy_(torch.ones(3, 5))
    with pytest.raises(RuntimeError):
        dst.copy_(torch.ones(3, 5, device=DEVICE))


# ------------------------------------------------------------------------------------------
# Pinned memory and non_blocking


def test_pin_memory():
    x = make_cpu((64, 33), torch.float32)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu"
    assert torch.equal(p, x)
    e = torch.empty(10, pin_memory=True)
    assert e.is_pinned()


def test_non_blocking_host_to_device_from_pinned():
    x = make_cpu((257, 129), torch.float32)
    p = x.pin_memory()
    xo = p.to(DEVICE, non_blocking=True)
    yo = xo * 2 + 1  # queued behind the copy on the same stream
    torch.ocl.synchronize()
    assert_ocl_close(xo, x, exact=True)
    assert_ocl_close(yo, x * 2 + 1)
    # Overwriting the pinned source after synchronising does not change the device copy.
    p.fill_(0)
    assert_ocl_close(xo, x, exact=True)


def test_non_blocking_device_to_pinned_host():
    x = make_cpu((257, 129), torch.float32)
    xo = x.to(DEVICE)
    torch.ocl.synchronize()
    dst = torch.empty(257, 129, pin_memory=True)
    waits = torch.ocl.host_wait_count()
    dst.copy_(xo, non_blocking=True)
    assert torch.ocl.host_wait_count() == waits, "a non_blocking copy into pinned memory waited"
    torch.ocl.synchronize()
    assert torch.equal(dst, x)
    # .to(non_blocking=True) of a device tensor gives a pinned CPU tensor on CUDA; here any CPU
    # tensor with the right values is acceptable once synchronised.
    back = xo.to("cpu", non_blocking=True)
    torch.ocl.synchronize()
    assert torch.equal(back, x)


def test_non_blocking_from_pageable_memory():
    x = make_cpu((1000,), torch.float32)
    xo = x.to(DEVICE, non_blocking=True)
    x.fill_(-1)  # the copy must have taken the data already (staged)
    torch.ocl.synchronize()
    assert_ocl_close(xo, make_cpu((1000,), torch.float32), exact=True)


# ------------------------------------------------------------------------------------------
# item(), tolist()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_item_every_dtype(dtype):
    skip_unsupported(dtype)
    for v in _values(dtype):
        x = torch.tensor(v, dtype=dtype)
        xo = x.to(DEVICE)
        got, want = xo.item(), x.item()
        assert type(got) is type(want)
        if isinstance(want, float) and want != want:
            assert got != got
        else:
            assert got == want, (dtype, v, got, want)
    # A one-element tensor of any shape, and an element of a larger tensor (storage offset).
    x = torch.tensor(_values(dtype), dtype=dtype)
    xo = x.to(DEVICE)
    for i in range(len(x)):
        got, want = xo[i].item(), x[i].item()
        assert (got != got and want != want) or got == want
    assert xo[2:3].reshape(1, 1, 1).item() == x[2].item() or x[2].item() != x[2].item()


def test_item_of_many_elements_raises():
    with pytest.raises(RuntimeError):
        torch.ones(2, device=DEVICE).item()


def test_python_number_conversions():
    xo = torch.tensor(2.5).to(DEVICE)
    assert float(xo) == 2.5 and int(xo) == 2 and bool(xo)
    assert int(torch.tensor(7).to(DEVICE)) == 7
    assert not bool(torch.tensor(False).to(DEVICE))


def test_tolist():
    x = make_cpu((3, 4), torch.float32)
    assert x.to(DEVICE).tolist() == x.tolist()
    i = make_cpu((2, 3, 2), torch.int64)
    assert i.to(DEVICE).tolist() == i.tolist()
    b = make_cpu((5,), torch.bool)
    assert b.to(DEVICE).tolist() == b.tolist()
    assert torch.tensor(3).to(DEVICE).tolist() == 3
    assert torch.empty(0).to(DEVICE).tolist() == []
    assert x.to(DEVICE).t().tolist() == x.t().tolist()


# ------------------------------------------------------------------------------------------
# Factories


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_empty_and_full(dtype):
    skip_unsupported(dtype)
    e = torch.empty(3, 4, dtype=dtype, device=DEVICE)
    assert e.device.type == "ocl" and e.dtype == dtype and e.shape == (3, 4)
    assert e.is_contiguous()
    value = True if dtype == torch.bool else 3
    assert_ocl_close(
        torch.full((3, 4), value, dtype=dtype, device=DEVICE),
        torch.full((3, 4), value, dtype=dtype),
    )
    assert_ocl_close(torch.zeros(5, dtype=dtype, device=DEVICE), torch.zeros(5, dtype=dtype))
    assert_ocl_close(torch.ones(2, 3, dtype=dtype, device=DEVICE), torch.ones(2, 3, dtype=dtype))


def test_empty_variants():
    e = torch.empty(0, device=DEVICE)
    assert e.numel() == 0 and e.device.type == "ocl"
    s = torch.empty_strided((3, 4), (1, 3), device=DEVICE)
    assert s.stride() == (1, 3) and s.shape == (3, 4) and s.device.type == "ocl"
    z = torch.empty_strided((2, 3), (0, 1), device=DEVICE)
    assert z.stride() == (0, 1)
    base = torch.ones(2, 2, dtype=torch.float16, device=DEVICE)
    n = base.new_empty((5, 6))
    assert n.device == base.device and n.dtype == torch.float16 and n.shape == (5, 6)
    n2 = base.new_empty((4,), dtype=torch.int32)
    assert n2.dtype == torch.int32 and n2.device.type == "ocl"
    ns = base.new_empty_strided((2, 3), (1, 2))
    assert ns.stride() == (1, 2) and ns.device.type == "ocl"
    like = torch.empty_like(torch.empty(13, 7, device=DEVICE).t())
    assert like.stride() == (1, 7)
    cl = torch.empty(2, 3, 4, 5, device=DEVICE, memory_format=torch.channels_last)
    assert cl.is_contiguous(memory_format=torch.channels_last)
    assert torch.empty((), device=DEVICE).dim() == 0
    assert torch.tensor([1.5, 2.5], device=DEVICE).cpu().tolist() == [1.5, 2.5]
    assert torch.zeros_like(like).cpu().eq(0).all()


def test_fill_and_zero():
    x = torch.empty(7, 13, device=DEVICE)
    x.fill_(2.5)
    assert_ocl_close(x, torch.full((7, 13), 2.5))
    x.t()[::2].zero_()
    expected = torch.full((7, 13), 2.5)
    expected.t()[::2].zero_()
    assert_ocl_close(x, expected)
    # fill_ with a 0-dim tensor on the device and on the CPU.
    x.fill_(torch.tensor(-1.0).to(DEVICE))
    assert_ocl_close(x, torch.full((7, 13), -1.0))
    x.fill_(torch.tensor(4))
    assert_ocl_close(x, torch.full((7, 13), 4.0))
    i = torch.empty(5, dtype=torch.int64, device=DEVICE).fill_(2**40 + 3)
    assert i.cpu().tolist() == [2**40 + 3] * 5
    b = torch.empty(4, dtype=torch.bool, device=DEVICE).fill_(True)
    assert b.cpu().all()
    h = torch.empty(3, dtype=torch.float16, device=DEVICE).fill_(NAN)
    assert torch.isnan(h.cpu()).all()
    if supports_dtype(torch.float64):
        d = torch.empty(3, dtype=torch.float64, device=DEVICE).fill_(0.1)
        assert d.cpu().tolist() == [0.1] * 3


# ------------------------------------------------------------------------------------------
# clone, contiguous, views


def test_clone_and_contiguous():
    x = make_cpu((13, 7), torch.float32)
    xo = x.to(DEVICE)
    c = xo.clone()
    assert c.data_ptr() != xo.data_ptr()
    assert_ocl_close(c, x, exact=True)
    c.fill_(0)
    assert_ocl_close(xo, x, exact=True)  # the original is untouched
    t = xo.t()
    assert not t.is_contiguous()
    ct = t.clone()
    assert ct.stride() == t.stride()  # preserve_format keeps dense strides
    assert_ocl_close(ct, x.t(), exact=True)
    cc = t.clone(memory_format=torch.contiguous_format)
    assert cc.is_contiguous()
    assert_ocl_close(cc, x.t(), exact=True)
    k = t.contiguous()
    assert k.is_contiguous()
    assert_ocl_close(k, x.t().contiguous(), exact=True)
    assert xo.contiguous() is xo
    s = xo[:, ::2].contiguous()
    assert s.is_contiguous()
    assert_ocl_close(s, x[:, ::2].contiguous(), exact=True)


VIEW_CASES = {
    "view": lambda t: t.view(7, 13),
    "view_flat": lambda t: t.view(-1),
    "reshape": lambda t: t.reshape(91),
    "reshape_copy": lambda t: t.t().reshape(91),
    "transpose": lambda t: t.transpose(0, 1),
    "permute": lambda t: t.unsqueeze(0).permute(2, 0, 1),
    "narrow": lambda t: t.narrow(1, 2, 4),
    "narrow0": lambda t: t.narrow(0, 5, 3),
    "expand": lambda t: t[:, :1].expand(13, 6),
    "expand_new_dim": lambda t: t[0].expand(3, 7),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "squeeze": lambda t: t[:, :1].squeeze(1),
    "as_strided": lambda t: t.as_strided((4, 3), (5, 2), 3),
    "as_strided_overlap": lambda t: t.as_strided((5, 4), (1, 1)),
    "select": lambda t: t[3],
    "select_col": lambda t: t[:, 2],
    "slice_step": lambda t: t[1:12:3, ::2],
    "diagonal": lambda t: t.diagonal(),
    "flatten": lambda t: t.flatten(),
    "unflatten": lambda t: t.unflatten(0, (13, 1)),
    "t": lambda t: t.t(),
    "chunk": lambda t: t.chunk(3, dim=0)[2],
    "split": lambda t: t.split(4, dim=1)[1],
    "unbind": lambda t: t.unbind(1)[4],
    "view_dtype": lambda t: t.view(torch.int32),
    "chain": lambda t: t.t()[1:, ::2].unsqueeze(0).transpose(0, 2)[2],
}


@pytest.mark.parametrize("case", list(VIEW_CASES))
def test_views_read_back(case):
    x = make_cpu((13, 7), torch.float32)
    xo = x.to(DEVICE)
    fn = VIEW_CASES[case]
    expected = fn(x)
    got = fn(xo)
    assert got.device.type == "ocl"
    assert got.shape == expected.shape and got.stride() == expected.stride()
    assert got.storage_offset() == expected.storage_offset()
    torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)


def test_views_share_storage():
    xo = torch.zeros(4, 6, device=DEVICE)
    v = xo.view(24)
    v[5:8].fill_(1)
    xo.t()[2].fill_(2)
    xo.narrow(0, 3, 1).fill_(3)
    expected = torch.zeros(4, 6)
    expected.view(24)[5:8].fill_(1)
    expected.t()[2].fill_(2)
    expected.narrow(0, 3, 1).fill_(3)
    assert_ocl_close(xo, expected)
    assert v.untyped_storage().data_ptr() == xo.untyped_storage().data_ptr()


# ------------------------------------------------------------------------------------------
# resize_, set_


def test_resize():
    x = make_cpu((10,), torch.float32)
    xo = x.to(DEVICE)
    xo.resize_(4)
    assert xo.shape == (4,)
    assert_ocl_close(xo, x[:4], exact=True)
    xo.resize_(2, 5)  # back within the original storage
    assert_ocl_close(xo, x.view(2, 5), exact=True)
    xo.resize_(100)  # grows the storage: the old contents stay in front
    assert xo.shape == (100,)
    assert_ocl_close(xo[:10], x, exact=True)
    xo[10:].fill_(1.0)
    assert_ocl_close(xo[10:], torch.ones(90), exact=True)
    xo.resize_(0)
    assert xo.numel() == 0
    xo.resize_(3, 3).fill_(7)
    assert_ocl_close(xo, torch.full((3, 3), 7.0))
    e = torch.empty(0, dtype=torch.int64, device=DEVICE)
    e.resize_(1000)
    e.fill_(-5)
    assert e.cpu().eq(-5).all()
    # resize_ of a non-contiguous tensor gives a contiguous tensor of the new size.
    t = torch.zeros(5, 4, device=DEVICE).t()
    t.resize_(2, 2)
    assert t.is_contiguous() and t.shape == (2, 2)


def test_resize_as_and_out_resizing():
    a = torch.ones(3, 4, device=DEVICE)
    b = torch.empty(0, device=DEVICE)
    b.resize_as_(a)
    assert b.shape == (3, 4) and b.device.type == "ocl"


def test_set_():
    x = make_cpu((12,), torch.float32)
    xo = x.to(DEVICE)
    t = torch.empty(0, device=DEVICE)
    t.set_(xo)
    assert t.data_ptr() == xo.data_ptr() and t.shape == xo.shape
    assert_ocl_close(t, x, exact=True)
    u = torch.empty(0, device=DEVICE)
    u.set_(xo.untyped_storage(), 2, (3, 2), (1, 3))
    assert_ocl_close(u, x.as_strided((3, 2), (1, 3), 2), exact=True)
    u.fill_(0)  # writes through to xo
    expected = x.clone()
    expected.as_strided((3, 2), (1, 3), 2).fill_(0)
    assert_ocl_close(xo, expected, exact=True)
    w = torch.empty(0, device=DEVICE)
    w.set_(xo.untyped_storage())
    assert w.shape == (12,)
    t.set_()
    assert t.numel() == 0 and t.device.type == "ocl"


def test_float16_widening_is_exact_for_every_bit_pattern():
    # kernels/common.clh widens float16 bits with integer operations: all 65536 patterns
    # (zeros, subnormals, normals, Inf, NaN) against the CPU.
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)
    h = bits.view(torch.float16)
    got = h.to(DEVICE).float().cpu()
    want = h.float()
    assert torch.equal(got.isnan(), want.isnan())
    ok = ~want.isnan()
    assert torch.equal(got[ok].view(torch.int32), want[ok].view(torch.int32))


def test_float16_narrowing_rounds_like_cpu():
    # float -> float16 rounds to nearest even with overflow to Inf, on every kind of value:
    # random bit patterns over the whole float range, values around every half rounding tie
    # (exact ties included), the subnormal range and the overflow threshold.
    g = torch.Generator().manual_seed(0)
    rand_bits = torch.randint(-(2**31), 2**31 - 1, (1 << 18,), generator=g, dtype=torch.int64)
    anywhere = rand_bits.to(torch.int32).view(torch.float32)
    halves = torch.arange(0, 2**15, dtype=torch.int32).to(torch.int16).view(torch.float16)
    h = halves.float()[torch.isfinite(halves.float())]
    nxt = torch.nextafter(h, torch.tensor(float("inf")))
    ties = torch.cat([h, (h[:-1] + h[1:]) / 2])
    near = torch.cat([ties, torch.nextafter(ties, ties + 1), torch.nextafter(ties, ties - 1), nxt])
    special = torch.tensor([65504.0, 65519.996, 65520.0, 65536.0, 1e-8, 2.0**-25, 2.0**-24,
                            3 * 2.0**-26, 2.0**-14, float("inf"), float("nan"), 0.0])  # fmt: skip
    x = torch.cat([anywhere, near, -near, special, -special])
    got = x.to(DEVICE).half().cpu()
    want = x.half()
    assert torch.equal(got.isnan(), want.isnan())
    ok = ~want.isnan()
    assert torch.equal(got[ok].view(torch.int16), want[ok].view(torch.int16))


# Neg views (torch._neg_view: a tensor whose stored values are the negatives of its values). ATen
# resolves them for most ops by copying, and copying itself must handle the bit: before, any op
# on a neg view of an ocl tensor recursed until the process crashed.
NEG_VIEW_CASES = {
    "to cpu": lambda n, y: n.cpu().to(y.device),
    "add": lambda n, y: n + y,
    "sum": lambda n, y: n.sum(),
    "item": lambda n, y: torch.tensor(n[1, 2].item(), device=y.device),
    "copy into plain": lambda n, y: torch.empty_like(y).copy_(n),
    "strided copy": lambda n, y: torch.zeros(8, 6, dtype=y.dtype, device=y.device).copy_(n.t()),
    "copy into neg view": lambda n, y: torch._neg_view(y.clone()).copy_(n).clone(),
    "plain into neg view": lambda n, y: torch._neg_view(torch.empty_like(y)).copy_(y).clone(),
    "in-place on neg view": lambda n, y: n.clone().add_(y),
    "resolve_neg": lambda n, y: n.resolve_neg(),
    "to float16": lambda n, y: n.half(),
    "matmul": lambda n, y: n @ y.t(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=dtype_id)
@pytest.mark.parametrize("case", sorted(NEG_VIEW_CASES))
def test_neg_views(case, dtype):
    fn = NEG_VIEW_CASES[case]
    x = make_cpu((6, 8), dtype, seed=7)
    x.view(-1)[:3] = torch.tensor([NAN, INF, -0.0] if dtype.is_floating_point else [1, -2, 0])
    y = make_cpu((6, 8), dtype, seed=8)
    expected = fn(torch._neg_view(x), y)
    xo, yo = x.to(DEVICE), y.to(DEVICE)
    got = fn(torch._neg_view(xo), yo)
    assert not got.is_neg() or expected.is_neg()
    assert_ocl_close(got.resolve_neg(), expected.resolve_neg(), exact=case != "matmul")
    # The neg view's memory was not changed.
    assert_ocl_close(xo, x, exact=True)


def test_neg_view_host_to_device_and_back():
    x = make_cpu((5, 7), torch.float32, seed=9)
    on_device = torch._neg_view(x).to(DEVICE)
    assert_ocl_close(on_device.resolve_neg(), -x, exact=True)
    back = torch.empty(5, 7)
    back.copy_(torch._neg_view(x.to(DEVICE)))
    assert torch.equal(back, -x)
    target = torch._neg_view(torch.empty(5, 7, device=DEVICE))
    target.copy_(x)
    assert torch.equal(target.cpu(), x)
