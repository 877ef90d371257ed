"""fill_ and zero_ (csrc/ops/Fill.cpp) against CPU torch, on tensors whose elements share memory:
expanded tensors (stride 0) and overlapping as_strided views, which the CPU fills (a fill is
idempotent), and values that alias the filled tensor."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import ALL_DTYPES, DEVICE, dtype_id, make_cpu, skip_unsupported


def _value(dtype):
    return True if dtype == torch.bool else 2


def _expanded(dtype, device):
    base = make_cpu((3,), dtype, seed=1).to(device)
    return base, base.expand(4, 3)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_fill_scalar_expanded(dtype):
    skip_unsupported(dtype)
    base_cpu, view_cpu = _expanded(dtype, "cpu")
    base, view = _expanded(dtype, DEVICE)
    view_cpu.fill_(_value(dtype))
    view.fill_(_value(dtype))
    torch.testing.assert_close(base.cpu(), base_cpu, rtol=0, atol=0)
    torch.testing.assert_close(view.cpu(), view_cpu, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=dtype_id)
def test_zero_expanded(dtype):
    base = make_cpu((3, 1, 5), dtype, seed=2, nonzero=True).to(DEVICE)
    base.expand(3, 4, 5).zero_()
    base[:, :, 1:2].expand(3, 6, 7).zero_()
    assert not base.cpu().any()


def test_issue_examples():
    z = torch.zeros(3, device=DEVICE)
    r = z.expand(4, 3).fill_(2)
    torch.testing.assert_close(r.cpu(), torch.full((4, 3), 2.0))
    torch.testing.assert_close(z.cpu(), torch.full((3,), 2.0))
    z.expand(4, 3).zero_()
    torch.testing.assert_close(z.cpu(), torch.zeros(3))
    # A 0-dim base expanded to many elements, and an expanded dim of size 1 or 0.
    s = torch.zeros((), device=DEVICE)
    s.expand(1000, 7).fill_(-3)
    assert s.item() == -3
    s.expand(0, 7).fill_(5)
    assert s.item() == -3
    s.expand(1).fill_(4)
    assert s.item() == 4


def test_fill_overlapping_as_strided():
    # Strides smaller than sizes: elements overlap without a stride of 0 (the CPU fills them).
    x_cpu = make_cpu((12,), torch.float32, seed=3)
    x = x_cpu.to(DEVICE)
    for t in (x_cpu, x):
        t.as_strided((4, 4), (2, 1), 1).fill_(9)
        t.as_strided((3, 2, 3), (1, 0, 2)).zero_()
    torch.testing.assert_close(x.cpu(), x_cpu, rtol=0, atol=0)


@pytest.mark.parametrize("where", ["cpu", "ocl"])
def test_fill_tensor_value_expanded(where):
    """A 0-dim value tensor. The CPU raises for an expanded self with a CPU value (it copies);
    CUDA, like ocl, fills with a CPU value's item(). On ocl a device value fills expanded tensors
    too (a fill is idempotent), where CPU and CUDA raise."""
    value = torch.tensor(6.5, device="cpu" if where == "cpu" else DEVICE)
    base = torch.zeros(3, 1, device=DEVICE)
    base.expand(3, 5).fill_(value)
    torch.testing.assert_close(base.cpu(), torch.full((3, 1), 6.5))
    # dtype conversion from the value's dtype, as on the CPU.
    ints = torch.zeros(4, dtype=torch.int32, device=DEVICE)
    ints.expand(2, 4).fill_(value)
    torch.testing.assert_close(ints.cpu(), torch.full((4,), 6.5).to(torch.int32))


def test_fill_tensor_value_is_an_element_of_self():
    x_cpu = make_cpu((6,), torch.float32, seed=4)
    x = x_cpu.to(DEVICE)
    x.fill_(x[3])
    x_cpu.fill_(x_cpu[3])
    torch.testing.assert_close(x.cpu(), x_cpu, rtol=0, atol=0)
    y_cpu = make_cpu((4, 5), torch.float32, seed=5)
    y = y_cpu.to(DEVICE)
    y[:, 1:].fill_(y[2, 2])
    y_cpu[:, 1:].fill_(y_cpu[2, 2])
    torch.testing.assert_close(y.cpu(), y_cpu, rtol=0, atol=0)


def test_fill_tensor_value_errors_match_cpu():
    x = torch.zeros(3, device=DEVICE)
    for value in (torch.ones(2), torch.ones(1, device=DEVICE)):
        with pytest.raises(RuntimeError, match="0-dimension value tensor"):
            x.fill_(value)
