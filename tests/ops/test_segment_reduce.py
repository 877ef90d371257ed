"""torch.segment_reduce and its backward on the ocl device (csrc/ops/SegmentReduce.cpp,
kernels/segment_reduce.cl) against PyTorch on the CPU in float64: every reduction, lengths and
offsets, axes 0 and 1 (2-d lengths), initial values, empty segments, NaN, ties in max/min, zeros
in prod, half precision, and gradients against CPU autograd, with the CPU fallback set to raise.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

REDUCTIONS = ("sum", "mean", "max", "min", "prod")


def _run(dev, data, reduce, grad=None, **kw):
    x = data.detach().to(dev).requires_grad_(grad is not None)
    kw = {k: (v.to(dev) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    out = torch.segment_reduce(x, reduce, **kw)
    if grad is None:
        return out, None
    out.backward(grad.to(dev))
    return out.detach(), x.grad


def _compare(data, reduce, grad=True, **kw):
    ref, _ = _run("cpu", data, reduce, **kw)
    g = make_cpu(tuple(ref.shape), data.dtype, low=0.5, high=2, seed=5) if grad else None
    out, gi = _run(DEVICE, data, reduce, g, **kw)
    rout, rgi = _run("cpu", data, reduce, g, **kw)
    assert_ocl_close(out, rout)
    if grad:
        assert_ocl_close(gi, rgi)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("initial", [None, 2.0])
def test_segment_reduce_lengths_and_offsets(reduce, initial):
    data = make_cpu((10, 3), torch.float64)
    lengths = torch.tensor([3, 0, 1, 4, 2])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    grad = initial is not None or reduce != "mean"  # the CPU's empty-mean gradient is NaN
    _compare(data, reduce, lengths=lengths, initial=initial, grad=grad)
    _compare(data, reduce, offsets=offsets, initial=initial, grad=grad)
    _compare(data, reduce, lengths=lengths.int(), initial=initial, grad=grad)


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_segment_reduce_axis1_and_specials(reduce):
    data = make_cpu((2, 7, 4), torch.float64, integral=True, low=-2, high=3)  # ties and zeros
    data[1, 2, 1] = float("nan")
    lengths = torch.tensor([[2, 5], [3, 4]])
    _compare(data, reduce, lengths=lengths, axis=1, initial=1.5)
    data[1, 2, 1] = 1.0
    _compare(data, reduce, lengths=lengths, axis=1, unsafe=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
def test_segment_reduce_dtypes(dtype):
    skip_unsupported(dtype)
    data = make_cpu((30, 5), dtype)
    lengths = torch.tensor([1, 7, 0, 22])
    for reduce in REDUCTIONS:
        got = torch.segment_reduce(data.to(DEVICE), reduce, lengths=lengths.to(DEVICE), initial=0.5)
        ref = torch.segment_reduce(data, reduce, lengths=lengths, initial=0.5)
        assert_ocl_close(got, ref, rtol=1e-2 if dtype != torch.float32 else None)


def test_segment_reduce_empty_and_errors():
    e = torch.empty(0, 3, dtype=torch.float64)
    _compare(e, "sum", lengths=torch.tensor([0, 0]), grad=False)
    one = make_cpu((1,), torch.float64)
    _compare(one, "max", lengths=torch.tensor([1]))
    x = make_cpu((6,), torch.float32).to(DEVICE)
    with pytest.raises(RuntimeError, match="Either lengths or offsets must be defined"):
        torch.segment_reduce(x, "sum")
    with pytest.raises(RuntimeError, match="reduce argument must be either"):
        torch.segment_reduce(x, "median", lengths=torch.tensor([6]).to(DEVICE))
    # lengths that do not add up: raised at the next wait, the device stays usable
    with pytest.raises(RuntimeError, match="does not add up"):
        torch.segment_reduce(x, "sum", lengths=torch.tensor([2, 2]).to(DEVICE)).cpu()
    torch.segment_reduce(x, "sum", lengths=torch.tensor([2, 4]).to(DEVICE)).cpu()


def test_segment_reduce_no_host_wait():
    x = make_cpu((50, 3), torch.float32).to(DEVICE).requires_grad_()
    lengths = torch.tensor([10, 20, 20]).to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    torch.segment_reduce(x, "mean", lengths=lengths).sum().backward()
    assert torch.ocl.host_wait_count() == before
