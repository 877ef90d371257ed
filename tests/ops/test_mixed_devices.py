"""A CPU tensor among an ocl op's inputs: the error names the problem as PyTorch's does ("Expected
all tensors to be on the same device"), whichever side the CPU tensor is on, for the structured
ops (ATen's generated CUDA wrappers check devices; PrivateUse1 registrations get no such check:
ops/Structured.h does it) and for the ops that reach a kernel launch without one
(runtime/Allocator.cpp). 0-dim CPU tensors stay accepted where PyTorch accepts them (scalars),
and the process stays usable."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close

MESSAGE = "Expected all tensors to be on the same device"

CASES = {
    "mm_cpu_first": lambda c, o: torch.mm(c, o),
    "mm_cpu_second": lambda c, o: torch.mm(o, c),
    "matmul_batched": lambda c, o: torch.matmul(c.expand(2, 4, 4), o),
    "bmm": lambda c, o: torch.bmm(c.unsqueeze(0), o.unsqueeze(0)),
    "addmm": lambda c, o: torch.addmm(o, c, o),
    "linear": lambda c, o: torch.nn.functional.linear(o, c),
    "layer_norm_weight": lambda c, o: torch.nn.functional.layer_norm(o, (4,), c[0]),
    "cross_entropy_target": lambda c, o: torch.nn.functional.cross_entropy(
        o, torch.tensor([0, 1, 2, 3])
    ),
    "add": lambda c, o: o + c,
    "cat": lambda c, o: torch.cat([o, c]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cpu_input_is_a_clear_error(name):
    c = torch.randn(4, 4)
    o = torch.randn(4, 4).to(DEVICE)
    with pytest.raises(RuntimeError, match=MESSAGE):
        CASES[name](c, o)
    assert_ocl_close(o @ o, o.cpu() @ o.cpu())  # still usable


def test_cpu_scalar_tensor_is_accepted():
    o = torch.randn(5).to(DEVICE)
    s = torch.tensor(2.5)
    assert_ocl_close(o * s, o.cpu() * s)
    assert_ocl_close(torch.lerp(o, o * 2, s), torch.lerp(o.cpu(), o.cpu() * 2, s))
