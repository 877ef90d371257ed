"""One compact pass over every kernel family whose variant or launch shape comes from the device
profile (csrc/runtime/DeviceProfile.h), against CPU torch in float64.

Under the GPU profile (`TORCH_OCL_DEVICE_PROFILE=gpu`, ci/run-gpu-profile.sh) these reach the GPU
variants on PoCL: the tiled GEMM in each size class, layout and dtype; the implicit-GEMM
convolution's forward, stride-1 input gradient and weight gradient (with split k); one element per
work-item in the streaming kernels (elementwise, norms, copies, depthwise convolution); work-group
scans; the GPU attention split; index kernels at one position per work-item; multi-tensor kernels
with non-consecutive elements; the batch of tiny ops in large work-groups. Under the CPU profile
(the default suite on PoCL) the same cases check the CPU variants. The whole op suite under the GPU
profile is `nox -s gpu_profile`; this file keeps .ci/run's GPU-profile step short.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, make_cpu, supports_dtype

pytestmark = pytest.mark.skipif(
    not torch.ocl.is_available(), reason="no OpenCL device: torch.ocl.why_unavailable() says why"
)

PROFILE = torch.ocl.device_profile() if torch.ocl.is_available() else None


def close(got: torch.Tensor, want64: torch.Tensor, rel: float = 2e-5):
    """got (ocl, any float dtype) against a float64 CPU result, to `rel` of the largest value."""
    assert got.device.type == "ocl"
    g = got.cpu().double()
    assert g.shape == want64.shape
    assert torch.equal(g.isnan(), want64.isnan()), "NaN in different places"
    fin = want64.isfinite()
    assert torch.equal(g[~fin & ~want64.isnan()], want64[~fin & ~want64.isnan()]), "Inf differs"
    scale = max(1.0, want64[fin].abs().max().item()) if fin.any() else 1.0
    err = (g[fin] - want64[fin]).abs().max().item() if fin.any() else 0.0
    assert err <= rel * scale, f"max error {err:.3g} > {rel:.1g} x {scale:.3g}"


def both(*shapes, seed=0, dtype=torch.float64, grad=False):
    """CPU float64 tensors and their float32 ocl copies."""
    cpu = [make_cpu(s, dtype, seed=seed + i) for i, s in enumerate(shapes)]
    ocl = [t.float().to(DEVICE) for t in cpu]
    if grad:
        cpu = [t.requires_grad_() for t in cpu]
        ocl = [t.requires_grad_() for t in ocl]
    return cpu, ocl


# ---------------------------------------------------------------------------------- GEMM


# (M, N, K): size classes small/medium/large on a device with few compute units, skinny products
# (few rows: a Linear on a small batch; few columns), odd edges.
GEMM_SHAPES = [
    (1, 1, 1),
    (7, 13, 5),
    (33, 65, 17),
    (130, 97, 70),
    (260, 300, 129),
    (3, 100, 40),
    (100, 5, 33),
]


@pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_layouts_and_sizes(shape, ta, tb):
    M, N, K = shape
    (a, b, bias), (ao, bo, biaso) = both((K, M) if ta else (M, K), (N, K) if tb else (K, N), (N,))
    a_, b_ = (a.t() if ta else a), (b.t() if tb else b)
    ao_, bo_ = (ao.t() if ta else ao), (bo.t() if tb else bo)
    close(ao_ @ bo_, a_ @ b_)
    close(
        torch.addmm(biaso, ao_, bo_, beta=0.5, alpha=-2.0),
        torch.addmm(bias, a_, b_, beta=0.5, alpha=-2.0),
    )


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64]
)
def test_gemm_dtypes(dtype):
    if not supports_dtype(dtype):
        pytest.skip(f"the device has no {dtype}")
    if dtype.is_floating_point:
        a, b = make_cpu((45, 70), dtype, seed=1), make_cpu((70, 38), dtype, seed=2)
        got = (a.to(DEVICE) @ b.to(DEVICE)).cpu()
        assert got.dtype == dtype
        want = (a.double() @ b.double()).to(dtype).double()
        tol = {torch.float16: 4e-3, torch.bfloat16: 3e-2, torch.float64: 1e-12}[dtype]
        assert (got.double() - want).abs().max() <= tol * max(1, want.abs().max().item())
    else:
        a = torch.randint(-(2**30), 2**30, (19, 23), dtype=dtype)
        b = torch.randint(-(2**30), 2**30, (23, 11), dtype=dtype)
        assert torch.equal((a.to(DEVICE) @ b.to(DEVICE)).cpu(), a @ b)  # wraps around like the CPU


def test_gemm_batched_broadcast_and_strided():
    (a, b, c), (ao, bo, co) = both((3, 21, 18), (18, 34), (3, 21, 34))
    close(ao @ bo, a @ b)  # b broadcast over the batch (stride 0)
    close(
        torch.baddbmm(co, ao, bo.expand(3, 18, 34), beta=2.0),
        torch.baddbmm(c, a, b.expand(3, 18, 34), beta=2.0),
    )
    (x,), (xo,) = both((40, 60))
    close(xo[::2, 1::3] @ xo[1::2, ::3].t(), x[::2, 1::3] @ x[1::2, ::3].t())  # non-contiguous
    close(torch.bmm(ao.transpose(1, 2), ao), torch.bmm(a.transpose(1, 2), a))


def test_gemm_empty_and_nan_inf():
    (a, b), (ao, bo) = both((0, 5), (5, 4))
    assert (ao @ bo).shape == (0, 4)
    (a, b), (ao, bo) = both((6, 0), (0, 4))
    close(ao @ bo, a @ b)  # K = 0: zeros
    (a, b), (ao, bo) = both((37, 29), (29, 41))
    a[3, 7], a[20, 28], b[28, 5], b[0, 40] = float("nan"), float("inf"), float("-inf"), float("nan")
    ao, bo = a.float().to(DEVICE), b.float().to(DEVICE)
    close(ao @ bo, a @ b)


def test_linear_training_step():
    torch.manual_seed(0)
    lin = torch.nn.Linear(50, 30).double()
    x = torch.randn(17, 50, dtype=torch.float64)
    lo = torch.nn.Linear(50, 30).to(DEVICE)
    lo.load_state_dict({k: v.float() for k, v in lin.state_dict().items()})
    lin(x).square().sum().backward()
    lo(x.float().to(DEVICE)).square().sum().backward()
    close(lo.weight.grad, lin.weight.grad, 1e-4)
    close(lo.bias.grad, lin.bias.grad, 1e-4)


# --------------------------------------------------------------------------- convolution

CONVS = {
    "3x3 pad": ((2, 3, 9, 11), (5, 3, 3, 3), dict(padding=1)),
    "stride dilation groups": (
        (2, 4, 9, 11),
        (6, 2, 3, 2),
        dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2), groups=2),
    ),
    "1x1": ((2, 16, 7, 7), (32, 16, 1, 1), {}),
    "wide channels stride 1": ((2, 20, 8, 8), (18, 20, 3, 3), dict(padding=1)),  # gx as a forward
    "long k split": ((8, 16, 16, 16), (32, 16, 3, 3), dict(padding=1)),  # weight grad splits k
    "depthwise": ((2, 8, 13, 10), (8, 1, 3, 3), dict(padding=1, groups=8)),
}


@pytest.mark.parametrize("case", sorted(CONVS))
def test_conv2d_forward_backward(case):
    xs, ws, kw = CONVS[case]
    (x, w, b), (xo, wo, bo) = both(xs, ws, (ws[0],), grad=True)
    y, yo = F.conv2d(x, w, b, **kw), F.conv2d(xo, wo, bo, **kw)
    close(yo, y.detach())
    g = make_cpu(y.shape, torch.float64, seed=9)
    y.backward(g)
    yo.backward(g.float().to(DEVICE))
    for dev, cpu in ((xo, x), (wo, w), (bo, b)):
        close(dev.grad, cpu.grad, 5e-5)


@pytest.mark.parametrize("dims", [1, 3])
def test_conv1d_conv3d_and_transposed(dims):
    if dims == 1:
        (x, w), (xo, wo) = both((3, 8, 15), (4, 8, 3), grad=True)
        fn, tfn, kw = F.conv1d, F.conv_transpose1d, dict(stride=2, padding=1)
    else:
        (x, w), (xo, wo) = both((1, 2, 4, 5, 6), (3, 2, 2, 3, 2), grad=True)
        fn, tfn, kw = F.conv3d, F.conv_transpose3d, dict(padding=1)
    y, yo = fn(x, w, **kw), fn(xo, wo, **kw)
    close(yo, y.detach())
    y.square().sum().backward()
    yo.square().sum().backward()
    close(xo.grad, x.grad, 5e-5)
    close(wo.grad, w.grad, 5e-5)
    wt = w.detach()  # [CO, C, k]: conv_transpose maps the CO channels of y back to C
    close(tfn(yo.detach(), wt.float().to(DEVICE), **kw), tfn(y.detach(), wt, **kw), 5e-5)


# Strided convolutions' input gradients with at least 16 input channels: on GPUs one stride-1
# convolution per phase of the stride (csrc/ops/Conv.cpp, strided_input_grad_into), including
# phases no kernel tap reaches (1x1 at stride 2: zeros, or the bias of a transposed convolution).
STRIDED = {
    "3x3 s2 p1": ((2, 16, 15, 17), (24, 16, 3, 3), dict(stride=2, padding=1)),
    "3x3 s(2,3)": ((2, 16, 13, 16), (20, 16, 3, 3), dict(stride=(2, 3))),
    "1x1 s2": ((3, 32, 9, 9), (16, 32, 1, 1), dict(stride=2)),
    "5x5 s3 p2 groups 2": ((2, 32, 16, 11), (16, 16, 5, 5), dict(stride=3, padding=2, groups=2)),
}


@pytest.mark.parametrize("case", sorted(STRIDED))
def test_strided_conv_input_gradient(case):
    xs, ws, kw = STRIDED[case]
    (x, w), (xo, wo) = both(xs, ws, grad=True)
    y, yo = F.conv2d(x, w, **kw), F.conv2d(xo, wo, **kw)
    g = make_cpu(y.shape, torch.float64, seed=7)
    g[0, 1, 0, 0] = float("nan")
    y.backward(g)
    yo.backward(g.float().to(DEVICE))
    close(xo.grad, x.grad, 5e-5)


def test_strided_transposed_conv_3d_and_bias():
    (x, w, b), (xo, wo, bo) = both((2, 16, 3, 4, 5), (16, 16, 1, 3, 2), (16,))
    for kw in (dict(stride=2), dict(stride=(1, 2, 3), padding=(0, 1, 0), output_padding=(0, 1, 2))):
        close(F.conv_transpose3d(xo, wo, bo, **kw), F.conv_transpose3d(x, w, b, **kw), 5e-5)
    (x, w, b), (xo, wo, bo) = both((2, 16, 5, 6), (16, 16, 1, 1), (16,))
    kw = dict(stride=2, output_padding=1)
    close(F.conv_transpose2d(xo, wo, bo, **kw), F.conv_transpose2d(x, w, b, **kw), 5e-5)


def test_conv_channels_last_and_nan():
    (x, w), (xo, wo) = both((2, 6, 10, 10), (8, 6, 3, 3))
    xo = xo.to(memory_format=torch.channels_last)
    close(F.conv2d(xo, wo, padding=1), F.conv2d(x, w, padding=1))
    x[0, 2, 4, 4], x[1, 0, 0, 0] = float("nan"), float("inf")
    close(F.conv2d(x.float().to(DEVICE), wo, padding=1), F.conv2d(x, w, padding=1))


# ------------------------------------------------------- streaming, norms, reductions, scans


def test_elementwise_contiguous_strided_broadcast():
    (a, b), (ao, bo) = both((1000, 37), (37,))
    close(
        torch.addcmul(ao, ao, bo, value=0.5).exp().clamp(max=3.0),
        torch.addcmul(a, a, b, value=0.5).exp().clamp(max=3.0),
    )
    close((ao.t()[3:, ::2] * 2 + 1).sin(), (a.t()[3:, ::2] * 2 + 1).sin())
    close(torch.cat([ao[:5], ao[7:9]]).contiguous(), torch.cat([a[:5], a[7:9]]))
    close(ao.t().contiguous(), a.t().contiguous())


@pytest.mark.parametrize("norm", ["layer", "group", "batch"])
def test_norms_forward_backward(norm):
    (x, w, b), (xo, wo, bo) = both((6, 12, 5, 7), (12,), (12,), grad=True)
    if norm == "layer":
        fn = lambda x, w, b: F.layer_norm(x, (7,), w[:7], b[:7])  # noqa: E731
    elif norm == "group":
        fn = lambda x, w, b: F.group_norm(x, 4, w, b)  # noqa: E731
    else:
        fn = lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)  # noqa: E731
    y, yo = fn(x, w, b), fn(xo, wo, bo)
    close(yo, y.detach(), 5e-5)
    g = make_cpu(y.shape, torch.float64, seed=3)
    y.backward(g)
    yo.backward(g.float().to(DEVICE))
    for dev, cpu in ((xo, x), (wo, w), (bo, b)):
        close(dev.grad, cpu.grad, 1e-4)


# Normalisation routes of csrc/ops/Norm.cpp: statistics and gradient sums split among
# work-groups when the rows are few and long (merged with Chan's formula), and on GPUs channel
# tiles for the by-channel sums where the channels are contiguous (layer norm's weight and bias
# gradients, channels-last batch norm), split when the channels are few.
NORM_CASES = [
    ("batch", (8, 3, 64, 64), False),
    ("batch", (8, 3, 64, 64), True),
    ("batch", (4, 40, 9, 11), True),
    ("batch1d", (20000, 7), False),
    ("group", (2, 4, 100, 100), False),
    ("layer", (2, 70000), False),
    ("layer", (3000, 5), False),
    ("layer", (4, 33, 130), False),
    ("rms", (2, 40000), False),
]


@pytest.mark.parametrize("case", NORM_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{'cl' if c[2] else 'c'}")
def test_norm_routes(case):
    kind, shape, channels_last = case
    C = shape[-1] if kind in ("layer", "rms") else shape[1]
    (x, w, b), (xo, wo, bo) = both(shape, (C,), (C,))
    if channels_last:
        xo = xo.contiguous(memory_format=torch.channels_last)
    for t in (x, w, b, xo, wo, bo):
        t.requires_grad_()
    rm, rv = torch.zeros(C, dtype=torch.float64), torch.ones(C, dtype=torch.float64)
    rmo, rvo = rm.float().to(DEVICE), rv.float().to(DEVICE)

    def fn(x, w, b, rm, rv):
        if kind.startswith("batch"):
            return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)
        if kind == "group":
            return F.group_norm(x, 2, w, b)
        if kind == "layer":
            return F.layer_norm(x, (C,), w, b)
        return F.rms_norm(x, (C,), w) + 0 * b.sum()

    y, yo = fn(x, w, b, rm, rv), fn(xo, wo, bo, rmo, rvo)
    close(yo, y.detach(), 5e-5)
    g = make_cpu(y.shape, torch.float64, seed=3)
    y.backward(g)
    yo.backward(g.float().to(DEVICE))
    for dev, cpu in ((xo, x), (wo, w), (bo, b)):
        close(dev.grad, cpu.grad, 2e-4)
    close(rmo, rm, 1e-5)
    close(rvo, rv, 1e-5)


def test_norm_split_nan_inf():
    # A NaN or Inf in one part of a split statistics row reaches that row's whole output only.
    x = make_cpu((8, 3, 64, 64), torch.float64, seed=4)
    x[3, 1, 5, 5] = float("nan")
    x[6, 2, 60, 1] = float("inf")
    y = F.batch_norm(x, None, None, training=True)
    yo = F.batch_norm(x.float().to(DEVICE), None, None, training=True)
    close(yo, y, 5e-5)


def test_reductions_and_softmax():
    (x,), (xo,) = both((33, 70, 9))
    for dim in (0, 1, 2):
        close(xo.sum(dim), x.sum(dim), 1e-5)
        close(xo.amax(dim), x.amax(dim))
        assert torch.equal(xo.argmax(dim).cpu(), x.float().argmax(dim))
        close(xo.var(dim), x.var(dim), 1e-4)
        close(torch.softmax(xo, dim), torch.softmax(x, dim))
        close(torch.log_softmax(xo, dim), torch.log_softmax(x, dim))
    close(xo.sum(), x.sum(), 1e-5)


# Each reduction route of csrc/ops/Reduce.cpp, under either profile: columns (kept dims
# contiguous; GPU: column tiles, split among work-groups when the outputs are few), few long rows
# (split into chunks, then the partials), many short rows, two runs of reduced dims (N, H, W of
# NCHW), a transposed view, an empty reduction.
REDUCE_CASES = [
    ((2000, 40), 0),
    ((5000, 3), 0),
    ((300, 1000), 0),
    ((3, 40000), 1),
    ((1, 70001), 1),
    ((700, 50), 1),
    ((3, 64, 7, 9), (0, 2, 3)),
    ((0, 9), 0),
]


@pytest.mark.parametrize("case", REDUCE_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_reduction_routes(case):
    shape, dim = case
    (x,), (xo,) = both(shape)
    close(xo.sum(dim), x.sum(dim), 1e-5)
    close(xo.mean(dim), x.mean(dim), 1e-5)
    close(xo.var(dim), x.var(dim), 1e-4)
    close(xo.norm(3, dim=dim), x.norm(3, dim=dim), 1e-4)
    if x.numel() == 0:
        return
    close(xo.amin(dim), x.amin(dim))
    xt = xo.transpose(0, -1).contiguous().transpose(0, -1)  # same values, another layout
    close(xt.sum(dim), x.sum(dim), 1e-5)
    if isinstance(dim, int):
        v, i = xo.max(dim)
        vr, ir = x.float().max(dim)
        assert torch.equal(i.cpu(), ir)
        close(v, vr.double())
        assert torch.equal(xo.argmin(dim).cpu(), x.float().argmin(dim))
    xi = make_cpu(shape, torch.int64, seed=5)
    assert torch.equal(xi.to(DEVICE).sum(dim).cpu(), xi.sum(dim))
    assert torch.equal(xi.to(DEVICE).amax(dim).cpu(), xi.amax(dim))
    xh = x.half()
    close(xh.to(DEVICE).sum(dim), xh.double().sum(dim), 2e-3)


def test_reduction_routes_nan_inf_and_ties():
    # NaN wins max/argmax wherever it is (the first NaN for argmax), Inf sums to Inf, and a tie
    # picks the first index: in columns, in split rows (a chunk boundary between the ties), both.
    x = make_cpu((40000, 3), torch.float64, seed=1)
    x[123, 0] = float("nan")
    x[30000, 1] = float("inf")
    x[39999, 2] = 1e6
    x[4, 2] = 1e6
    xo = x.float().to(DEVICE)
    close(xo.sum(0), x.sum(0), 1e-5)
    close(xo.amax(0), x.amax(0))
    assert torch.equal(xo.argmax(0).cpu(), x.float().argmax(0))
    r = make_cpu((3, 50000), torch.float64, seed=2)
    r[0, 45000] = float("nan")
    r[0, 46000] = float("nan")
    r[1, 49999] = r[1, 7] = 1e6
    r[2, 10] = float("-inf")
    ro = r.float().to(DEVICE)
    v, i = ro.max(1)
    vr, ir = r.float().max(1)
    assert torch.equal(i.cpu(), ir)
    close(v, vr.double())
    assert torch.equal(ro.argmin(1).cpu(), r.float().argmin(1))
    close(ro.sum(1), r.sum(1), 1e-5)


@pytest.mark.parametrize("n", [1, 300, 5000])
def test_scans(n):
    (x,), (xo,) = both((3, n))
    close(xo.cumsum(1), x.cumsum(1), 1e-5)
    close(xo.t().contiguous().cumsum(0), x.t().cumsum(0), 1e-5)
    v, i = xo.cummax(1)
    vr, ir = x.float().cummax(1)
    assert torch.equal(v.cpu(), vr) and torch.equal(i.cpu(), ir)


def test_sort_topk():
    (x,), (xo,) = both((7, 333))
    v, i = xo.sort(1)
    assert torch.equal(v.cpu(), x.float().sort(1).values)
    assert torch.equal(xo.topk(9, 1).values.cpu(), x.float().topk(9, 1).values)


# ------------------------------------------------------------------- attention, indexing


@pytest.mark.parametrize("causal", [False, True])
def test_attention_forward_backward(causal):
    (q, k, v), (qo, ko, vo) = both((2, 3, 37, 16), (2, 3, 45, 16), (2, 3, 45, 24), grad=True)
    if causal:
        k, v = k[:, :, :37], v[:, :, :37]
        ko, vo = ko[:, :, :37], vo[:, :, :37]
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    yo = F.scaled_dot_product_attention(qo, ko, vo, is_causal=causal)
    close(yo, y.detach(), 5e-5)
    y.square().sum().backward()
    yo.square().sum().backward()
    close(qo.grad, q.grad, 2e-4)


def test_index_gather_scatter_embedding():
    (x, src), (xo, srco) = both((50, 13), (40, 13))
    idx = torch.randint(0, 50, (40,))
    io = idx.to(DEVICE)
    close(xo.index_select(0, io), x.index_select(0, idx))
    close(xo.gather(0, io[:, None].expand(40, 13)), x.gather(0, idx[:, None].expand(40, 13)))
    close(xo.clone().index_add_(0, io, srco), x.clone().index_add_(0, idx, src), 1e-5)
    close(
        xo.clone().index_put_((io,), srco, accumulate=True),
        x.clone().index_put_((idx,), src, accumulate=True),
        1e-5,
    )
    close(
        xo.clone().scatter_add_(0, io[:, None].expand(40, 13), srco),
        x.clone().scatter_add_(0, idx[:, None].expand(40, 13), src),
        1e-5,
    )
    emb, embo = x.clone().requires_grad_(), xo.clone().requires_grad_()
    F.embedding(idx, emb).square().sum().backward()
    F.embedding(io, embo).square().sum().backward()
    close(embo.grad, emb.grad, 1e-5)


def test_pooling():
    (x,), (xo,) = both((2, 5, 13, 11), grad=True)
    y, yo = F.max_pool2d(x, 3, 2, 1), F.max_pool2d(xo, 3, 2, 1)
    close(yo, y.detach())
    y.sum().backward()
    yo.sum().backward()
    close(xo.grad, x.grad)
    close(F.adaptive_avg_pool2d(xo, 3), F.adaptive_avg_pool2d(x, 3))


# ---------------------------------------------------------- multi-tensor, tiny-op batches


def test_foreach_and_fused_adam():
    shapes = [(3,), (1000,), (17, 9), (1,), (4097,)]
    cpu = [make_cpu(s, torch.float64, seed=i) for i, s in enumerate(shapes)]
    ocl = [t.float().to(DEVICE) for t in cpu]
    for got, want in zip(torch._foreach_mul(ocl, 3.0), torch._foreach_mul(cpu, 3.0), strict=True):
        close(got, want)
    norms = torch._foreach_norm(ocl)
    for got, want in zip(norms, torch._foreach_norm(cpu), strict=True):
        close(got, want, 1e-5)
    params = [torch.nn.Parameter(t.clone()) for t in cpu]
    params_o = [torch.nn.Parameter(t.clone()) for t in ocl]
    for p, po in zip(params, params_o, strict=True):
        p.grad, po.grad = p.detach().sin(), po.detach().sin()
    torch.optim.Adam(params, lr=0.1).step()
    torch.optim.Adam(params_o, lr=0.1, fused=True).step()
    for p, po in zip(params, params_o, strict=True):
        close(po.detach(), p.detach(), 1e-5)


def test_tiny_op_batches():
    before = torch.ocl.batch_stats()["ops"]
    (a, b), (ao, bo) = both((40,), (40,))
    r, ro = a, ao
    for _ in range(20):
        r, ro = (r * 1.5 + b).tanh(), (ro * 1.5 + bo).tanh()
    close(ro, r)
    assert torch.ocl.batch_stats()["ops"] > before, "tiny ops were not batched"


def test_profile_is_what_this_run_asked_for():
    import os

    forced = os.environ.get("TORCH_OCL_DEVICE_PROFILE", "").lower()
    if forced in ("cpu", "gpu"):
        assert PROFILE.name == forced
    assert PROFILE.params["gemm_register_blocked"] == (PROFILE.name == "cpu")
