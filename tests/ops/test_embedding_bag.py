"""F.embedding_bag / nn.EmbeddingBag on the ocl device (csrc/ops/EmbeddingBag.cpp,
kernels/embedding_bag.cl) against PyTorch on the CPU in float64: sum, mean and max, 1-d input with
offsets and 2-d input, per_sample_weights, padding_idx, include_last_offset, empty bags, NaN,
non-contiguous weights, and the gradients of the weight and of per_sample_weights (dense backward,
deterministic: bit-equal on a second run), all with the CPU fallback set to raise.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

MODES = ("sum", "mean", "max")


def _case(n_weights=11, dim=5, n=17, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    w = make_cpu((n_weights, dim), dtype, seed=seed)
    idx = torch.randint(0, n_weights, (n,), generator=g)
    # bags of lengths 0, 1, 3, ... including empty ones (repeated offsets)
    offsets = torch.tensor([0, 0, 1, 4, 4, 9, 16])[: max(1, min(7, n))].clamp(max=n)
    return w, idx, offsets


def _run(dev, w, idx, offsets, grad_out=None, psw=None, **kw):
    w = w.detach().to(dev).requires_grad_(grad_out is not None)
    p = None
    if psw is not None:
        p = psw.detach().to(dev).requires_grad_(grad_out is not None)
    out = F.embedding_bag(
        idx.to(dev),
        w,
        None if offsets is None else offsets.to(dev),
        per_sample_weights=p,
        **kw,
    )
    if grad_out is None:
        return out, None, None
    out.backward(grad_out.to(dev))
    return out, w.grad, None if p is None else p.grad


def _compare(w, idx, offsets, *, psw=None, grad=True, exact=False, **kw):
    ref_out = F.embedding_bag(idx, w, offsets, per_sample_weights=psw, **kw)
    g = make_cpu(ref_out.shape, w.dtype, seed=7) if grad else None
    out, gw, gp = _run(DEVICE, w, idx, offsets, g, psw, **kw)
    rout, rgw, rgp = _run("cpu", w, idx, offsets, g, psw, **kw)
    assert_ocl_close(out.detach(), rout.detach(), exact=exact)
    if grad:
        assert_ocl_close(gw, rgw)
        if psw is not None:
            assert_ocl_close(gp, rgp)
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding_idx", [None, 3])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_1d(mode, padding_idx, include_last_offset):
    w, idx, offsets = _case()
    idx[2] = idx[5] = 3  # padding positions (and repeats of the same row)
    _compare(
        w,
        idx,
        offsets,
        mode=mode,
        padding_idx=padding_idx,
        include_last_offset=include_last_offset,
    )


@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_2d_input(mode):
    w = make_cpu((9, 6), torch.float64)
    idx = torch.tensor([[1, 2, 4, 1], [4, 3, 2, 8], [0, 0, 0, 0]])
    _compare(w, idx, None, mode=mode)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(mode):
    # Each row's gradient over its number of occurrences, as nn.Embedding (and CUDA's
    # embedding_bag) define it: the reference is F.embedding with scale_grad_by_freq, reduced
    # per bag on the CPU. (The CPU's own embedding_bag backward divides by the count of another
    # row here, so it is not the reference.)
    w = make_cpu((9, 6), torch.float64)
    idx = torch.tensor([[1, 2, 4, 1], [4, 3, 2, 8], [0, 0, 0, 0]])
    g = make_cpu((3, 6), torch.float64, seed=7)
    wd = w.to(DEVICE).requires_grad_()
    out = F.embedding_bag(idx.to(DEVICE), wd, mode=mode, scale_grad_by_freq=True)
    out.backward(g.to(DEVICE))
    wc = w.clone().requires_grad_()
    emb = F.embedding(idx, wc, scale_grad_by_freq=True)
    ref = emb.sum(1) if mode == "sum" else emb.mean(1)
    ref.backward(g)
    assert_ocl_close(out.detach(), ref.detach())
    assert_ocl_close(wd.grad, wc.grad)


@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_per_sample_weights(padding_idx, include_last_offset):
    w, idx, offsets = _case(seed=3)
    idx[0] = idx[7] = 2
    psw = make_cpu((idx.numel(),), torch.float64, seed=5)
    _compare(
        w,
        idx,
        offsets,
        psw=psw,
        mode="sum",
        padding_idx=padding_idx,
        include_last_offset=include_last_offset,
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_dtypes(dtype, mode):
    skip_unsupported(dtype)
    w64, idx, offsets = _case(n_weights=40, dim=33, n=60, seed=2)
    w = w64.to(dtype)
    got = F.embedding_bag(idx.to(DEVICE), w.to(DEVICE), offsets.to(DEVICE), mode=mode)
    ref = F.embedding_bag(idx, w.double(), offsets, mode=mode).to(dtype)
    assert_ocl_close(got, ref)


def test_embedding_bag_int32_indices_and_layouts():
    # int32 indices with int64 offsets (promoted), a transposed (non-contiguous) weight, a
    # strided per_sample_weights, odd sizes
    w = make_cpu((7, 13), torch.float64).t()  # 13 rows of 7, non-contiguous
    idx = torch.tensor([12, 0, 5, 5, 7, 1, 2], dtype=torch.int32)
    offsets = torch.tensor([0, 3, 3, 6])
    psw = make_cpu((14,), torch.float64, seed=4)[::2]
    _compare(w, idx, offsets, psw=psw, mode="sum")
    for mode in MODES:
        _compare(w, idx, offsets, mode=mode)


def test_embedding_bag_empty_and_one():
    w = make_cpu((5, 3), torch.float64)
    # no indices at all: every bag empty (zeros; max mode too)
    for mode in MODES:
        _compare(w, torch.empty(0, dtype=torch.long), torch.tensor([0, 0, 0]), mode=mode)
    # one index, one bag
    for mode in MODES:
        _compare(w, torch.tensor([4]), torch.tensor([0]), mode=mode)
    # zero bags (include_last_offset with a single offset)
    got = F.embedding_bag(
        torch.tensor([1, 2]).to(DEVICE),
        w.to(DEVICE),
        torch.tensor([0]).to(DEVICE),
        include_last_offset=True,
    )
    assert tuple(got.shape) == (0, 3)
    # a zero-width weight
    e = torch.empty(4, 0, dtype=torch.float64)
    _compare(e, torch.tensor([1, 2, 3]), torch.tensor([0, 1]), mode="sum", grad=False)


def test_embedding_bag_nan_and_inf():
    w = torch.tensor([[1.0, float("nan")], [2.0, 3.0], [float("nan"), 0.0], [float("inf"), -1.0]])
    w = w.double()
    idx = torch.tensor([0, 1, 2, 1, 3, 0])
    offsets = torch.tensor([0, 2, 4])
    for mode in MODES:
        _compare(w, idx, offsets, mode=mode, grad=mode != "max")
    # the max's NaN positions: a NaN stays only where it comes first, as on the CPU
    got = torch.ops.aten._embedding_bag(
        w.to(DEVICE), idx.to(DEVICE), offsets.to(DEVICE), False, 2, False, None, False, -1
    )
    ref = torch.ops.aten._embedding_bag(w, idx, offsets, False, 2, False, None, False, -1)
    assert_ocl_close(got[0], ref[0])
    assert_ocl_close(got[3], ref[3])


def test_embedding_bag_module_and_determinism():
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(50, 16, mode="mean").double()
    idx = torch.randint(0, 50, (400,))
    offsets = torch.arange(0, 400, 7)
    dev_bag = torch.nn.EmbeddingBag(50, 16, mode="mean").double().to(DEVICE)
    dev_bag.load_state_dict(bag.state_dict())
    dev_bag(idx.to(DEVICE), offsets.to(DEVICE)).sum().backward()
    bag(idx, offsets).sum().backward()
    assert_ocl_close(dev_bag.weight.grad, bag.weight.grad)
    first = dev_bag.weight.grad.clone()
    dev_bag.weight.grad = None
    dev_bag(idx.to(DEVICE), offsets.to(DEVICE)).sum().backward()
    assert torch.equal(first.cpu(), dev_bag.weight.grad.cpu())


def test_embedding_bag_no_host_wait():
    w, idx, offsets = _case()
    w, idx, offsets = w.to(DEVICE).requires_grad_(), idx.to(DEVICE), offsets.to(DEVICE)
    torch.ocl.synchronize()
    before = torch.ocl.host_wait_count()
    for mode in MODES:
        F.embedding_bag(idx, w, offsets, mode=mode).sum().backward()
    assert torch.ocl.host_wait_count() == before


def test_embedding_bag_errors():
    w = make_cpu((5, 3), torch.float32).to(DEVICE)
    idx = torch.tensor([0, 1, 9]).to(DEVICE)
    offsets = torch.tensor([0, 2]).to(DEVICE)
    # an index out of range: raised at the next wait, and the device stays usable
    with pytest.raises(RuntimeError, match="embedding_bag: an index is out of range"):
        F.embedding_bag(idx, w, offsets).cpu()
    assert_ocl_close(w.sum(0) * 0, torch.zeros(3))
    with pytest.raises(RuntimeError, match="only supported for mode='sum'"):
        F.embedding_bag(
            idx, w, offsets, mode="max", per_sample_weights=torch.ones(3, device=DEVICE)
        )
    with pytest.raises(RuntimeError, match="offsets has to be a 1D Tensor"):
        torch.ops.aten._embedding_bag(w, idx, offsets.view(1, 2))
