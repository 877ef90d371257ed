"""torch.hash_tensor on the ocl device (csrc/ops/HashTensor.cpp, kernels/hash_tensor.cl) against
PyTorch on the CPU, bit for bit: every dtype, full and partial reductions, keepdim, a 0-dim input,
non-contiguous input, NaN / -0.0 / Inf / subnormal floats, out=, and the CPU's errors.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import ALL_DTYPES, DEVICE, dtype_id, make_cpu, skip_unsupported


def _same(got, ref):
    assert got.device.type == "ocl"
    assert got.dtype == ref.dtype == torch.uint64
    assert got.shape == ref.shape
    assert torch.equal(got.cpu().view(torch.int64), ref.view(torch.int64))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_hash_tensor_dtypes_and_dims(dtype):
    skip_unsupported(dtype)
    x = make_cpu((4, 5, 3), dtype)
    for kw in [{}, {"dim": 1}, {"dim": (0, 2)}, {"dim": -1, "keepdim": True}, {"dim": (0, 1, 2)}]:
        _same(torch.hash_tensor(x.to(DEVICE), **kw), torch.hash_tensor(x, **kw))
    t = x.transpose(0, 2)
    _same(torch.hash_tensor(t.to(DEVICE), dim=1), torch.hash_tensor(t, dim=1))


def test_hash_tensor_special_floats_and_out():
    vals = [float("nan"), -0.0, 0.0, float("inf"), -float("inf"), 1e-45, 3e-39, -2.5, 1e38]
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        skip_unsupported(dtype)
        x = torch.tensor(vals).to(dtype)
        for v in x:
            _same(torch.hash_tensor(v.to(DEVICE)), torch.hash_tensor(v))
        _same(torch.hash_tensor(x.to(DEVICE)), torch.hash_tensor(x))
    x = make_cpu((3, 7), torch.float32)
    out = torch.empty(0, dtype=torch.uint64, device=DEVICE)
    torch.hash_tensor(x.to(DEVICE), dim=0, out=out)
    _same(out, torch.hash_tensor(x, dim=0))


def test_hash_tensor_errors():
    for dev in ("cpu", DEVICE):
        with pytest.raises(RuntimeError, match="Unknown hash_tensor mode"):
            torch.hash_tensor(torch.ones(3).to(dev), mode=1)
        with pytest.raises(IndexError, match="to have non-zero size"):
            torch.hash_tensor(torch.empty(0, 3).to(dev), 0)
