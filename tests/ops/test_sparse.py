"""Sparse COO and CSR tensors on ocl (csrc/ops/sparse/, kernels/sparse.cl): conversions,
coalesce, sparse x dense products, sampled_addmm, nn.Embedding(sparse=True) with SGD and
Adagrad, printing and device moves, each against the CPU (float64 where rounding matters) over
awkward shapes, with the CPU fallback raising (tests/conftest.py).
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, make_cpu
from torch import nn


def _sparse_dense(shape, density=0.3, dtype=torch.float64, seed=0):
    x = make_cpu(shape, dtype, seed=seed)
    g = torch.Generator().manual_seed(seed + 100)
    keep = torch.rand(shape, generator=g) < density
    return torch.where(keep, x, torch.zeros((), dtype=dtype))


SHAPES = [
    pytest.param((0, 3), id="empty"),
    pytest.param((1, 1), id="one"),
    pytest.param((5, 7), id="small"),
    pytest.param((3, 4, 6), id="3d"),
    pytest.param((300, 200), id="large"),
]


def _same(got, expected, exact=False):
    assert got.device.type == DEVICE.type
    tol = 0 if exact else 1e-12
    torch.testing.assert_close(got.cpu(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
def test_to_sparse_and_back(shape, dtype):
    d = _sparse_dense(shape, dtype=dtype)
    s_ref = d.to_sparse()
    s = d.to(DEVICE).to_sparse()
    assert s.is_sparse and s.device.type == DEVICE.type
    _same(s._indices(), s_ref._indices(), exact=True)
    _same(s._values(), s_ref._values(), exact=True)
    _same(s.to_dense(), d, exact=True)


def test_to_sparse_hybrid():
    d = _sparse_dense((4, 5, 3), seed=1)
    s_ref, s = d.to_sparse(2), d.to(DEVICE).to_sparse(2)
    assert s.sparse_dim() == 2 and s.dense_dim() == 1
    _same(s._indices(), s_ref._indices(), exact=True)
    _same(s._values(), s_ref._values(), exact=True)
    _same(s.to_dense(), d, exact=True)


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (5, 7), (64, 33)], ids=str)
def test_to_sparse_csr_and_back(shape):
    d = _sparse_dense(shape, seed=2)
    c_ref = d.to_sparse_csr()
    c = d.to(DEVICE).to_sparse_csr()
    assert c.layout == torch.sparse_csr and c.device.type == DEVICE.type
    _same(c.crow_indices(), c_ref.crow_indices(), exact=True)
    _same(c.col_indices(), c_ref.col_indices(), exact=True)
    _same(c.values(), c_ref.values(), exact=True)
    _same(c.to_dense(), d, exact=True)
    coo = c.to_sparse()
    _same(coo.to_dense(), d, exact=True)
    _same(coo.to_sparse_csr().crow_indices(), c_ref.crow_indices(), exact=True)


def _uncoalesced(nnz, shape, dense=(), dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    if nnz == 0:
        idx = torch.zeros(len(shape), 0, dtype=torch.long)
        return torch.sparse_coo_tensor(idx, torch.zeros((0, *dense), dtype=dtype), (*shape, *dense))
    idx = torch.stack([torch.randint(0, n, (nnz,), generator=g) for n in shape])
    vals = torch.randn((nnz, *dense), generator=g, dtype=dtype)
    return torch.sparse_coo_tensor(idx, vals, (*shape, *dense))


@pytest.mark.parametrize(
    "nnz, shape, dense",
    [
        (0, (4, 5), ()),
        (1, (1, 1), ()),
        (30, (3, 4), ()),
        (50, (6, 2, 3), ()),
        (40, (5, 5), (3,)),
        (20000, (70, 90), ()),
    ],
    ids=["empty", "one", "duplicates", "3d", "hybrid", "large"],
)
def test_coalesce(nnz, shape, dense):
    s_cpu = _uncoalesced(nnz, shape, dense, seed=nnz)
    s = s_cpu.to(DEVICE)
    assert not s.is_coalesced() or nnz <= 1
    ref = s_cpu.coalesce()
    got = s.coalesce()
    assert got.is_coalesced()
    _same(got._indices(), ref._indices(), exact=True)
    _same(got._values(), ref._values())
    _same(got.to_dense(), s_cpu.to_dense())


def test_coalesce_float32_is_deterministic():
    s_cpu = _uncoalesced(500, (4, 4), dtype=torch.float32, seed=3)
    ref = s_cpu.double().coalesce()
    s = s_cpu.to(DEVICE)
    first = s.coalesce()._values().cpu()
    torch.ocl.empty_cache()
    junk = torch.randn(10000, device=DEVICE)  # other memory contents
    second = s.coalesce()._values().cpu()
    del junk
    torch.testing.assert_close(first, second, rtol=0, atol=0)
    torch.testing.assert_close(first.double(), ref._values(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["coo", "coo-uncoalesced", "csr"])
@pytest.mark.parametrize("m, k, n", [(5, 7, 3), (1, 1, 1), (0, 4, 3), (40, 64, 33)], ids=str)
def test_sparse_mm(layout, m, k, n):
    if layout == "coo-uncoalesced":
        a_cpu = _uncoalesced(3 * m, (m, k), seed=4) if m else _uncoalesced(0, (m, k))
    else:
        a_cpu = _sparse_dense((m, k), seed=4).to_sparse()
    if layout == "csr":
        a_cpu = a_cpu.to_dense().to_sparse_csr()
    b_cpu = make_cpu((k, n), torch.float64, seed=5)
    ref = torch.sparse.mm(a_cpu, b_cpu) if layout != "csr" else a_cpu.to_dense() @ b_cpu
    a, b = a_cpu.to(DEVICE), b_cpu.to(DEVICE)
    _same(torch.sparse.mm(a, b), ref)
    _same(torch.mm(a, b), ref)
    c_cpu = make_cpu((m, n), torch.float64, seed=6)
    ref2 = 0.5 * c_cpu + 2.0 * (a_cpu.to_dense() @ b_cpu)
    _same(torch.addmm(c_cpu.to(DEVICE), a, b, beta=0.5, alpha=2.0), ref2)
    # beta = 0 ignores self, NaN included
    nan = torch.full((m, n), float("nan"), dtype=torch.float64)
    _same(torch.addmm(nan.to(DEVICE), a, b, beta=0.0), a_cpu.to_dense() @ b_cpu)


def test_sparse_mm_transposed_dense_and_float32():
    a_cpu = _sparse_dense((9, 12), seed=7, dtype=torch.float32).to_sparse()
    b_cpu = make_cpu((5, 12), torch.float32, seed=8).t()  # non-contiguous
    ref = a_cpu.double().to_dense() @ b_cpu.double()
    got = torch.sparse.mm(a_cpu.to(DEVICE), b_cpu.to(DEVICE))
    torch.testing.assert_close(got.cpu().double(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m, k, n", [(5, 7, 3), (1, 1, 1), (30, 16, 20)], ids=str)
def test_sampled_addmm(m, k, n):
    s_cpu = _sparse_dense((m, n), seed=9).to_sparse_csr()
    a_cpu, b_cpu = (
        make_cpu((m, k), torch.float64, seed=10),
        make_cpu((k, n), torch.float64, seed=11),
    )
    ref = torch.sparse.sampled_addmm(s_cpu, a_cpu, b_cpu, beta=0.5, alpha=1.5)
    got = torch.sparse.sampled_addmm(
        s_cpu.to(DEVICE), a_cpu.to(DEVICE), b_cpu.to(DEVICE), beta=0.5, alpha=1.5
    )
    assert got.layout == torch.sparse_csr
    _same(got.crow_indices(), ref.crow_indices(), exact=True)
    _same(got.col_indices(), ref.col_indices(), exact=True)
    _same(got.values(), ref.values())


def test_add_dense_and_sparse():
    d_cpu = make_cpu((6, 5), torch.float64, seed=12)
    s_cpu = _uncoalesced(20, (6, 5), seed=13)
    _same(d_cpu.to(DEVICE) + s_cpu.to(DEVICE), d_cpu + s_cpu)
    t = d_cpu.to(DEVICE)
    t.add_(s_cpu.to(DEVICE), alpha=-0.5)
    _same(t, d_cpu.add(s_cpu, alpha=-0.5))
    both = s_cpu.to(DEVICE) + s_cpu.to(DEVICE)
    assert both.is_sparse
    _same(both.to_dense(), (s_cpu + s_cpu).to_dense())


def test_print_and_device_moves():
    s_cpu = _sparse_dense((4, 3), seed=14).to_sparse()
    s = s_cpu.to(DEVICE)
    text = str(s)
    assert "indices=" in text and "values=" in text and "layout=torch.sparse_coo" in text
    back = s.cpu()
    assert back.is_sparse and back.device.type == "cpu"
    _same(s.to_dense(), s_cpu.to_dense())
    torch.testing.assert_close(back.to_dense(), s_cpu.to_dense(), rtol=0, atol=0)
    c = s_cpu.to_dense().to_sparse_csr().to(DEVICE)
    assert "crow_indices=" in str(c)
    torch.testing.assert_close(c.cpu().to_dense(), s_cpu.to_dense(), rtol=0, atol=0)


def test_operations_on_empty_and_errors():
    e = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (3, 3))
    e = e.to(DEVICE)
    assert e._nnz() == 0
    _same(e.coalesce().to_dense(), torch.zeros(3, 3))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.sparse.mm(e, torch.ones(4, 2, device=DEVICE))
    _same(torch.sparse.mm(e, torch.ones(3, 2, device=DEVICE)), torch.zeros(3, 2))


@pytest.mark.parametrize("optim", ["sgd", "sgd-momentum", "adagrad", "sparse_adam"])
def test_embedding_sparse_gradients_with_optimizers(optim):
    torch.manual_seed(0)
    emb_cpu = nn.Embedding(20, 6, sparse=True, padding_idx=3).double()
    emb = nn.Embedding(20, 6, sparse=True, padding_idx=3).double()
    emb.load_state_dict(emb_cpu.state_dict())
    emb = emb.to(DEVICE)

    def make(params):
        if optim == "sgd":
            return torch.optim.SGD(params, lr=0.1)
        if optim == "sgd-momentum":
            return torch.optim.SGD(params, lr=0.1, momentum=0.9)
        if optim == "sparse_adam":
            return torch.optim.SparseAdam(params, lr=0.01)
        return torch.optim.Adagrad(params, lr=0.1)

    opt_cpu, opt = make(emb_cpu.parameters()), make(emb.parameters())
    g = torch.Generator().manual_seed(1)
    for _ in range(3):
        idx = torch.randint(0, 20, (4, 7), generator=g)  # duplicates and padding_idx
        target = torch.randn(4, 7, 6, generator=g, dtype=torch.float64)
        for module, o, i, t in (
            (emb_cpu, opt_cpu, idx, target),
            (emb, opt, idx.to(DEVICE), target.to(DEVICE)),
        ):
            o.zero_grad()
            loss = ((module(i) - t) ** 2).sum()
            loss.backward()
            assert module.weight.grad.is_sparse
            o.step()
    torch.testing.assert_close(
        emb.weight.detach().cpu(), emb_cpu.weight.detach(), rtol=1e-12, atol=1e-12
    )


def test_products_do_not_wait():
    s = _uncoalesced(40, (8, 6), seed=15).to(DEVICE)
    c = _sparse_dense((8, 6), seed=16).to_sparse_csr().to(DEVICE)
    b = make_cpu((6, 5), torch.float64, seed=17).to(DEVICE)
    torch.ocl.synchronize()
    waits = torch.ocl.host_wait_count()
    r1 = torch.sparse.mm(s, b)
    r2 = c @ b
    assert torch.ocl.host_wait_count() == waits
    _same(r1, s.cpu().to_dense() @ b.cpu())
    _same(r2, c.cpu().to_dense() @ b.cpu())


@pytest.mark.parametrize("other", ["scalar", "zero-dim", "dense"])
def test_mul(other):
    s_cpu = _uncoalesced(25, (5, 4), dense=(3,), seed=18)
    o_cpu = {
        "scalar": 2.5,
        "zero-dim": torch.tensor(-1.5, dtype=torch.float64),
        "dense": make_cpu((5, 4, 3), torch.float64, seed=19),
    }[other]
    o = o_cpu.to(DEVICE) if isinstance(o_cpu, torch.Tensor) else o_cpu
    ref = (s_cpu * o_cpu).to_dense()
    got = s_cpu.to(DEVICE) * o
    assert got.is_sparse
    _same(got.to_dense(), ref)
    with pytest.raises(NotImplementedError, match="two sparse"):
        s_cpu.to(DEVICE) * s_cpu.to(DEVICE)


def test_csr_with_sparse_second_factor_is_not_implemented():
    c = _sparse_dense((4, 4), seed=20).to_sparse_csr().to(DEVICE)
    with pytest.raises(NotImplementedError, match="CSR mat1 with dense self and mat2"):
        torch.addmm(torch.zeros(4, 4, dtype=torch.float64, device=DEVICE), c, c)
    _same(c @ torch.eye(4, dtype=torch.float64, device=DEVICE), c.cpu().to_dense())


def test_sparse_mm_gradients():
    s_cpu = _uncoalesced(12, (5, 4), seed=21)
    b_cpu = make_cpu((4, 3), torch.float64, seed=22)
    grads = []
    for dev in ("cpu", DEVICE):
        s = s_cpu.detach().clone().to(dev).requires_grad_()
        b = b_cpu.detach().clone().to(dev).requires_grad_()
        (
            torch.sparse.mm(s, b) * torch.arange(15.0, dtype=torch.float64, device=dev).view(5, 3)
        ).sum().backward()
        grads.append((s.grad.coalesce().to_dense().cpu(), b.grad.cpu()))
    torch.testing.assert_close(grads[1][0], grads[0][0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grads[1][1], grads[0][1], rtol=1e-12, atol=1e-12)
