"""masked_select and nonzero (csrc/ops/Compact.cpp, kernels/compact.cl) against CPU torch:
every layout of `shapes`, every dtype, NaN/Inf/-0.0, all and none selected, sizes around the
work-group tiles, the host wait they need, and printing without any CPU fallback."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import (
    ALL_DTYPES,
    DEVICE,
    LARGE,
    assert_ocl_close,
    dtype_id,
    make_cpu,
    shape_params,
    shapes,
    skip_unsupported,
)

ODD = next(s for s in shapes if s.id == "odd_7x13")


@pytest.mark.parametrize("shape", shape_params())
def test_masked_select_layouts(shape):
    """Self and mask in the layout of the case (broadcast: one of each shape)."""
    (x_cpu, x), (y_cpu, y) = shape.make(torch.float32, 2, seed=1)
    m_cpu, m = y_cpu > 0, y > 0
    assert_ocl_close(torch.masked_select(x, m), torch.masked_select(x_cpu, m_cpu), exact=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_masked_select_dtypes(dtype):
    skip_unsupported(dtype)
    x_cpu = make_cpu((7, 13), dtype, seed=3)
    if dtype.is_floating_point:
        x_cpu.view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0])
    m_cpu = make_cpu((7, 13), torch.bool, seed=4)
    m_cpu.view(-1)[:4] = True
    got = torch.masked_select(x_cpu.to(DEVICE), m_cpu.to(DEVICE))
    expected = torch.masked_select(x_cpu, m_cpu)
    assert got.dtype == expected.dtype
    # bit-exact: NaN payloads and -0.0 are copied, not converted
    assert torch.equal(got.cpu().view(-1).view(torch.uint8), expected.view(-1).view(torch.uint8))


@pytest.mark.parametrize(
    "n",
    [
        1,
        255,
        256,
        257,
        1023,
        1024,
        1025,
        4 * 256 * 64 + 3,
        pytest.param(LARGE, marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_masked_select_sizes(n, density):
    """Tile (256) and group boundaries; nothing and everything selected."""
    x_cpu = make_cpu((n,), torch.float32, seed=5)
    m_cpu = torch.rand(n, generator=torch.Generator().manual_seed(6)) < density
    got = torch.masked_select(x_cpu.to(DEVICE), m_cpu.to(DEVICE))
    assert_ocl_close(got, torch.masked_select(x_cpu, m_cpu), exact=True)


def test_masked_select_broadcast_and_out():
    x_cpu = make_cpu((5, 1, 3), torch.float32, seed=7)
    m_cpu = make_cpu((4, 3), torch.bool, seed=8)
    assert_ocl_close(
        torch.masked_select(x_cpu.to(DEVICE), m_cpu.to(DEVICE)),
        torch.masked_select(x_cpu, m_cpu),
        exact=True,
    )
    out = torch.empty(2, device=DEVICE)
    r = torch.masked_select(x_cpu.to(DEVICE), m_cpu.to(DEVICE), out=out)
    assert r is out
    assert_ocl_close(out, torch.masked_select(x_cpu, m_cpu), exact=True)


def test_masked_select_errors():
    x = make_cpu((4,), torch.float32).to(DEVICE)
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        torch.masked_select(x, torch.ones(4, dtype=torch.uint8, device=DEVICE))
    with pytest.raises(RuntimeError, match="same device"):
        torch.masked_select(x, torch.ones(4, dtype=torch.bool))
    with pytest.raises(RuntimeError):
        torch.masked_select(x, torch.ones(5, dtype=torch.bool, device=DEVICE))  # no broadcast


@pytest.mark.parametrize("shape", shape_params())
def test_nonzero_layouts(shape):
    (x_cpu, x) = shape.make(torch.float32, 1, seed=9, integral=True)[0]
    assert_ocl_close(torch.nonzero(x), torch.nonzero(x_cpu), exact=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_nonzero_dtypes_and_specials(dtype):
    skip_unsupported(dtype)
    x_cpu = make_cpu((6, 5, 3), dtype, seed=10, low=-1, high=2, integral=True)
    if dtype.is_floating_point:
        x_cpu.view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -0.0, 0.0])
    assert_ocl_close(torch.nonzero(x_cpu.to(DEVICE)), torch.nonzero(x_cpu), exact=True)


@pytest.mark.parametrize("ndim", range(0, 9))
def test_nonzero_ranks(ndim):
    shape = (3, 2, 1, 2, 3, 1, 2, 2)[:ndim]
    x_cpu = make_cpu(shape, torch.int32, seed=11, low=0, high=2)
    got = torch.nonzero(x_cpu.to(DEVICE))
    assert_ocl_close(got, torch.nonzero(x_cpu), exact=True)
    assert_ocl_close(
        torch.nonzero(x_cpu.to(DEVICE), as_tuple=True)[0] if ndim else got,
        torch.nonzero(x_cpu, as_tuple=True)[0] if ndim else torch.nonzero(x_cpu),
        exact=True,
    )


@pytest.mark.parametrize("n", [257, 4 * 256 * 64 + 3, pytest.param(LARGE, marks=pytest.mark.slow)])
def test_nonzero_large_and_out(n):
    x_cpu = (torch.rand(n, generator=torch.Generator().manual_seed(12)) < 0.3).float()
    assert_ocl_close(torch.nonzero(x_cpu.to(DEVICE)), torch.nonzero(x_cpu), exact=True)
    out = torch.empty(0, dtype=torch.long, device=DEVICE)
    torch.nonzero(x_cpu.to(DEVICE), out=out)
    assert_ocl_close(out, torch.nonzero(x_cpu), exact=True)


def test_one_host_wait_named_after_the_op():
    x = make_cpu((100,), torch.float32, seed=13).to(DEVICE)
    m = x > 0
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.masked_select(x, m)
    assert torch.ocl.host_wait_count() - before == 1
    with torch.ocl.sync_debug_mode("error"):
        with pytest.raises(RuntimeError, match="masked_select"):
            torch.masked_select(x, m)
        with pytest.raises(RuntimeError, match="nonzero"):
            torch.nonzero(x)


def test_printing_runs_native():
    """print() of an ocl tensor uses masked_select; with the fallback an error, it still works."""
    x_cpu = make_cpu((3, 4), torch.float32, seed=14)
    x_cpu[0, 0] = float("nan")
    text = repr(x_cpu.to(DEVICE))
    assert "device='ocl:0'" in text and "nan" in text
    assert repr(x_cpu).split("tensor(")[1].split("]]")[0] in text
