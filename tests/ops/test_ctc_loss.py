"""F.ctc_loss / nn.CTCLoss on the ocl device (csrc/ops/Ctc.cpp, kernels/ctc.cl) against PyTorch
on the CPU in float64: padded and concatenated targets, int64 and int32 targets, every
reduction, zero_infinity, impossible alignments (infinite loss), empty targets, zero-length
inputs, blank other than 0, unbatched input, lengths as lists and as CPU tensors, and the
gradient of log_probs against CPU autograd, with the CPU fallback set to raise.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, skip_unsupported


def _inputs(T=12, N=4, C=6, S=5, seed=0, dtype=torch.float64, blank=0):
    g = torch.Generator().manual_seed(seed)
    lp = torch.randn(T, N, C, generator=g, dtype=torch.float64).log_softmax(2).to(dtype)
    labels = [c for c in range(C) if c != blank]
    tg = torch.tensor(labels)[torch.randint(0, len(labels), (N, S), generator=g)]
    il = [T, T - 1, max(T - 5, 0), T][:N]
    tl = [S, 3, 1, 0][:N]
    return lp, tg, il, tl


def _both(lp, targets, il, tl, **kw):
    """loss and gradient on the device and on the CPU (float64)."""
    out = []
    for dev in (DEVICE, "cpu"):
        x = lp.detach().to(dev).requires_grad_()
        t = targets.to(dev) if dev != "cpu" else targets
        loss = F.ctc_loss(x, t, il, tl, **kw)
        g = torch.linspace(0.5, 1.5, loss.numel(), dtype=loss.dtype).reshape(loss.shape)
        loss.backward(g.to(dev))
        out.append((loss.detach(), x.grad))
    (dl, dg), (cl, cg) = out
    return dl, dg, cl, cg


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_padded(reduction, zero_infinity):
    lp, tg, il, tl = _inputs()
    dl, dg, cl, cg = _both(lp, tg, il, tl, reduction=reduction, zero_infinity=zero_infinity)
    assert_ocl_close(dl, cl)
    assert_ocl_close(dg, cg)


@pytest.mark.parametrize("tdtype", [torch.int64, torch.int32], ids=dtype_id)
def test_ctc_concatenated_targets(tdtype):
    lp, tg, il, tl = _inputs(seed=1)
    flat = torch.cat([tg[b, : tl[b]] for b in range(len(tl))]).to(tdtype)
    dl, dg, cl, cg = _both(lp, flat, il, tl, reduction="none")
    assert_ocl_close(dl, cl)
    assert_ocl_close(dg, cg)


def test_ctc_impossible_alignment_and_repeats():
    # targets longer than the input (+inf loss), repeated labels (need a blank between them)
    T, C = 4, 5
    lp = torch.randn(T, 3, C, dtype=torch.float64).log_softmax(2)
    tg = torch.tensor([[1, 1, 1, 1], [2, 2, 3, 0], [1, 2, 3, 4]])
    il, tl = [4, 4, 4], [3, 2, 4]
    for zi in (False, True):
        dl, dg, cl, cg = _both(lp, tg, il, tl, reduction="none", zero_infinity=zi)
        assert_ocl_close(dl, cl)
        assert_ocl_close(dg, cg)


def test_ctc_zero_lengths_blank_and_unbatched():
    lp, tg, il, tl = _inputs(T=7, N=3, C=5, S=3, seed=2, blank=4)
    il = [0, 7, 3]
    tl = [0, 3, 2]
    dl, dg, cl, cg = _both(lp, tg, il, tl, blank=4, reduction="none")
    assert_ocl_close(dl, cl)
    assert_ocl_close(dg, cg)
    # unbatched: [T, C] log_probs, [S] targets, scalar lengths
    x = lp[:, 1]
    dl, dg, cl, cg = _both(x, tg[1], torch.tensor(7), torch.tensor(3), blank=4, reduction="sum")
    assert_ocl_close(dl, cl)
    assert_ocl_close(dg, cg)


def test_ctc_float32_module_and_tensor_lengths():
    skip_unsupported(torch.float32)
    lp, tg, il, tl = _inputs(T=30, N=5, C=20, S=8, seed=3, dtype=torch.float32)
    il, tl = [30, 25, 30, 12, 1][:5], [8, 8, 4, 5, 0]
    ctc = torch.nn.CTCLoss(reduction="mean")
    x = lp.detach().to(DEVICE).requires_grad_()
    loss = ctc(x, tg.to(DEVICE), torch.tensor(il), torch.tensor(tl))
    loss.backward()
    ref_x = lp.double().requires_grad_()
    ref = ctc(ref_x, tg, torch.tensor(il), torch.tensor(tl))
    ref.backward()
    assert_ocl_close(loss.detach(), ref.detach().float(), rtol=1e-4, atol=1e-5)
    assert_ocl_close(x.grad, ref_x.grad.float(), rtol=1e-4, atol=1e-5)


def test_ctc_long_target_many_work_items():
    # 2 * S + 1 > the work-group size: several extended positions per work-item
    lp, tg, il, tl = _inputs(T=300, N=2, C=4, S=140, seed=4)
    tl = [140, 100]
    dl, dg, cl, cg = _both(lp, tg, [300, 290], tl, reduction="none")
    assert_ocl_close(dl, cl)
    assert_ocl_close(dg, cg)


def test_ctc_no_host_wait():
    lp, tg, il, tl = _inputs()
    x = lp.to(DEVICE).requires_grad_()
    t = tg.to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    F.ctc_loss(x, t, il, tl, reduction="sum").backward()
    assert torch.ocl.host_wait_count() == before


def test_ctc_errors_match_the_cpu():
    lp, tg, il, tl = _inputs(T=5, N=2, C=4, S=3)
    for dev in ("cpu", DEVICE):
        x, t = lp.to(dev), tg.to(dev)
        with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5"):
            torch.ops.aten._ctc_loss(x, t, [6, 5], [1, 1], 0, False)
        with pytest.raises(RuntimeError, match="blank must be in label range"):
            torch.ops.aten._ctc_loss(x, t, [5, 5], [1, 1], 4, False)
        with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
            torch.ops.aten._ctc_loss(x, t, [5], [1, 1], 0, False)
        with pytest.raises(RuntimeError, match="Expected tensor to have size at least 4"):
            torch.ops.aten._ctc_loss(x, t, [5, 5], [4, 1], 0, False)
