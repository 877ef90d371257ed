"""mm, addmm (and what is built on them: matmul of 2-D and folded 3-D operands, nn.Linear forward
and backward) on the ocl device against a float64 CPU reference.

Tolerance: each output element is a k-term dot product, so its error is bounded by about
k * eps * (|A| @ |B|); the check uses a fraction of that bound plus one rounding of the result.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # noqa: N812
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

NAN = float("nan")
EPS = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.float16: 2.0**-11,
    torch.bfloat16: 2.0**-8,
}


def assert_mm_close(actual, expected_dtype, ref64, bound64, k):
    """actual (ocl) against a float64 reference; bound64 = |A| @ |B| (+ |beta*C|)."""
    assert actual.device.type == "ocl"
    assert actual.dtype == expected_dtype, (actual.dtype, expected_dtype)
    assert actual.shape == ref64.shape, (actual.shape, ref64.shape)
    got = actual.cpu().double()
    # float32 accumulation for the half types (as on the CPU), plus the final rounding.
    acc = (
        EPS[torch.float32]
        if expected_dtype in (torch.float16, torch.bfloat16)
        else (EPS[expected_dtype])
    )
    tol = (2 * max(k, 1) ** 0.5 + 4) * acc * bound64 + EPS[expected_dtype] * ref64.abs()
    nan_ref = torch.isnan(ref64)
    assert torch.equal(torch.isnan(got), nan_ref), "NaNs differ"
    diff = (got - ref64).abs()
    bad = (diff > tol) & ~nan_ref
    assert not bad.any(), (
        f"{int(bad.sum())} elements over tolerance, worst {(diff - tol)[bad].max().item():.3g}"
    )


def check_mm(a, b, ao, bo):
    out = torch.mm(ao, bo)
    a64, b64 = a.double(), b.double()
    assert_mm_close(out, torch.mm(a, b).dtype, a64 @ b64, a64.abs() @ b64.abs(), a.shape[1])
    return out


MM_SHAPES = [
    (1, 1, 1),
    (7, 13, 5),
    (64, 64, 64),
    (127, 65, 33),
    (33, 1, 17),
    (1, 300, 1),
    (5, 0, 4),  # empty inner dimension: zeros
    (0, 4, 3),
    (3, 4, 0),
    pytest.param((200, 190, 210), marks=pytest.mark.slow),
]


@pytest.mark.parametrize("mkn", MM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mm_shapes(mkn):
    m, k, n = mkn
    a = make_cpu((m, k), torch.float32, low=-1, high=1)
    b = make_cpu((k, n), torch.float32, low=-1, high=1, seed=1)
    check_mm(a, b, a.to(DEVICE), b.to(DEVICE))


@pytest.mark.parametrize("layout", ["at_b", "a_bt", "at_bt", "sliced", "offset"])
def test_mm_transposed_and_strided(layout):
    m, k, n = 37, 29, 23
    a = make_cpu((m, k), torch.float32, low=-1, high=1)
    b = make_cpu((k, n), torch.float32, low=-1, high=1, seed=1)
    at = a.t().contiguous()  # (k, m)
    bt = b.t().contiguous()  # (n, k)
    ao, bo, ato, bto = (t.to(DEVICE) for t in (a, b, at, bt))
    if layout == "at_b":
        check_mm(at.t(), b, ato.t(), bo)
    elif layout == "a_bt":
        check_mm(a, bt.t(), ao, bto.t())
    elif layout == "at_bt":
        check_mm(at.t(), bt.t(), ato.t(), bto.t())
    elif layout == "sliced":
        wide = make_cpu((m, 2 * k), torch.float32, low=-1, high=1, seed=2)
        check_mm(wide[:, ::2], b, wide.to(DEVICE)[:, ::2], bo)
    else:  # views with a storage offset
        big = make_cpu((m + 3, k + 2), torch.float32, low=-1, high=1, seed=3)
        check_mm(big[3:, 2:], b, big.to(DEVICE)[3:, 2:], bo)


# Shapes past Matmul.cpp's packing thresholds on CPU devices (an operand of >= 2^18 elements
# read by >= 64 rows or columns): B row-major, or A transposed, is copied into the kernel's
# fastest layout first. On a GPU the same shapes run in place.
PACKED = {
    "b_rowmajor": ((70, 520, 530), False, False),  # K*N = 275,600, M = 70: B packed
    "a_trans": ((600, 500, 70), True, False),  # M*K = 300,000, N = 70: A packed
    "both": ((520, 520, 520), True, False),
    "b_strided_rows": ((66, 513, 520), False, True),  # B a view with row stride 2*N
}


@pytest.mark.parametrize("case", sorted(PACKED))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=dtype_id)
def test_mm_large_operands_packed(case, dtype):
    skip_unsupported(dtype)
    (m, k, n), a_trans, b_strided = PACKED[case]
    a = make_cpu((m, k), dtype, low=-1, high=1, seed=4)
    b = make_cpu((k, 2 * n if b_strided else n), dtype, low=-1, high=1, seed=5)
    ao, bo = a.to(DEVICE), b.to(DEVICE)
    if a_trans:
        ao = a.t().contiguous().to(DEVICE).t()
    if b_strided:
        b, bo = b[:, ::2], bo[:, ::2]
    bias = make_cpu((n,), dtype, low=-1, high=1, seed=6)
    out = torch.addmm(bias.to(DEVICE), ao, bo, beta=0.5, alpha=2.0)
    a64, b64, c64 = a.double(), b.double(), bias.double()
    ref = 0.5 * c64 + 2.0 * (a64 @ b64)
    assert_mm_close(out, dtype, ref, 2.0 * (a64.abs() @ b64.abs()) + 0.5 * c64.abs(), k)
    # Batched, with one operand broadcast over the batch (batch stride 0).
    ab = torch.stack([a, -a]).to(DEVICE)
    got = torch.bmm(ab, bo.expand(2, k, n))
    ref = torch.stack([a64 @ b64, -(a64 @ b64)])
    assert_mm_close(got, dtype, ref, (a64.abs() @ b64.abs()).expand(2, m, n), k)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=dtype_id)
def test_mm_dtypes(dtype):
    skip_unsupported(dtype)
    a = make_cpu((31, 47), dtype, low=-1, high=1)
    b = make_cpu((47, 19), dtype, low=-1, high=1, seed=1)
    check_mm(a, b, a.to(DEVICE), b.to(DEVICE))
    check_mm(a, b.t().contiguous().t(), a.to(DEVICE), b.t().contiguous().to(DEVICE).t())


def test_mm_out_and_operator():
    a = make_cpu((9, 8), torch.float32)
    b = make_cpu((8, 7), torch.float32, seed=1)
    ao, bo = a.to(DEVICE), b.to(DEVICE)
    out = torch.empty(9, 7, device=DEVICE)
    r = torch.mm(ao, bo, out=out)
    assert r is out
    a64, b64 = a.double(), b.double()
    assert_mm_close(out, torch.float32, a64 @ b64, a64.abs() @ b64.abs(), 8)
    assert_mm_close(ao @ bo, torch.float32, a64 @ b64, a64.abs() @ b64.abs(), 8)
    assert_mm_close(torch.matmul(ao, bo), torch.float32, a64 @ b64, a64.abs() @ b64.abs(), 8)
    # out= into a non-contiguous tensor.
    out_t = torch.empty(7, 9, device=DEVICE).t()
    torch.mm(ao, bo, out=out_t)
    assert_mm_close(out_t, torch.float32, a64 @ b64, a64.abs() @ b64.abs(), 8)


def test_mm_shape_mismatch_raises():
    with pytest.raises(RuntimeError):
        torch.mm(torch.ones(3, 4, device=DEVICE), torch.ones(5, 2, device=DEVICE))


def test_matmul_folds_batch_into_mm():
    x = make_cpu((4, 5, 6), torch.float32)
    w = make_cpu((6, 3), torch.float32, seed=1)
    got = torch.matmul(x.to(DEVICE), w.to(DEVICE))
    x64, w64 = x.double(), w.double()
    assert_mm_close(got, torch.float32, x64 @ w64, x64.abs() @ w64.abs(), 6)


def _addmm_ref(c, a, b, beta, alpha):
    a64, b64, c64 = a.double(), b.double(), c.double()
    prod = a64 @ b64
    ref = alpha * prod if beta == 0 else beta * c64 + alpha * prod
    bound = abs(alpha) * (a64.abs() @ b64.abs()) + (0 if beta == 0 else abs(beta) * c64.abs())
    return ref, bound


@pytest.mark.parametrize(
    ("beta", "alpha", "bias_shape"),
    [
        (1, 1, (9, 7)),
        (1, 1, (7,)),
        (0.5, 2.0, (9, 7)),
        (1, 1, (1, 7)),
        (0, 1, (9, 7)),
        (1, -1.5, (9, 1)),
        (2, 0, (9, 7)),
    ],
)
def test_addmm(beta, alpha, bias_shape):
    a = make_cpu((9, 11), torch.float32)
    b = make_cpu((11, 7), torch.float32, seed=1)
    c = make_cpu(bias_shape, torch.float32, seed=2)
    got = torch.addmm(c.to(DEVICE), a.to(DEVICE), b.to(DEVICE), beta=beta, alpha=alpha)
    ref, bound = _addmm_ref(c.expand(9, 7), a, b, beta, alpha)
    assert_mm_close(got, torch.float32, ref, bound, 11)


def test_addmm_beta_zero_ignores_nan_input():
    a = make_cpu((4, 3), torch.float32)
    b = make_cpu((3, 5), torch.float32, seed=1)
    c = torch.full((4, 5), NAN)
    got = torch.addmm(c.to(DEVICE), a.to(DEVICE), b.to(DEVICE), beta=0)
    ref, bound = _addmm_ref(c, a, b, 0, 1)
    assert_mm_close(got, torch.float32, ref, bound, 3)


def test_addmm_inplace_out_and_transposed():
    a = make_cpu((6, 10), torch.float32)
    b = make_cpu((5, 10), torch.float32, seed=1)  # used as b.t()
    c = make_cpu((6, 5), torch.float32, seed=2)
    ao, bo, co = a.to(DEVICE), b.to(DEVICE), c.to(DEVICE)
    ref, bound = _addmm_ref(c, a, b.t(), 1, 1)
    out = torch.empty(6, 5, device=DEVICE)
    torch.addmm(co, ao, bo.t(), out=out)
    assert_mm_close(out, torch.float32, ref, bound, 10)
    c2 = co.clone()
    c2.addmm_(ao, bo.t())
    assert_mm_close(c2, torch.float32, ref, bound, 10)
    assert_mm_close(F.linear(ao, bo, co[0]), torch.float32, *_addmm_ref(c[0], a, b.t(), 1, 1), 10)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16], ids=dtype_id)
def test_addmm_dtypes(dtype):
    skip_unsupported(dtype)
    a = make_cpu((12, 9), dtype, low=-1, high=1)
    b = make_cpu((9, 8), dtype, low=-1, high=1, seed=1)
    c = make_cpu((8,), dtype, low=-1, high=1, seed=2)
    got = torch.addmm(c.to(DEVICE), a.to(DEVICE), b.to(DEVICE))
    ref, bound = _addmm_ref(c.expand(12, 8), a, b, 1, 1)
    assert_mm_close(got, dtype, ref, bound, 9)


# ------------------------------------------------------------------------------------------
# nn.Linear


def _linear_pair(in_f, out_f, bias=True):
    torch.manual_seed(0)
    cpu = torch.nn.Linear(in_f, out_f, bias=bias).double()
    dev = torch.nn.Linear(in_f, out_f, bias=bias)
    with torch.no_grad():
        dev.weight.copy_(cpu.weight.float())
        if bias:
            dev.bias.copy_(cpu.bias.float())
    return cpu, dev.to(DEVICE)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_linear_forward(bias):
    cpu, dev = _linear_pair(20, 12, bias)
    assert dev.weight.device.type == "ocl"
    x = make_cpu((16, 20), torch.float32)
    got = dev(x.to(DEVICE))
    ref = cpu(x.double())
    w = cpu.weight.detach()
    bound = x.double().abs() @ w.abs().t() + (cpu.bias.detach().abs() if bias else 0)
    assert_mm_close(got, torch.float32, ref.detach(), bound.detach(), 20)
    # A batch of sequences (3-D input).
    x3 = make_cpu((2, 5, 20), torch.float32, seed=4)
    got3 = dev(x3.to(DEVICE))
    ref3 = cpu(x3.double()).detach()
    bound3 = x3.double().abs() @ w.abs().t() + (cpu.bias.detach().abs() if bias else 0)
    assert_mm_close(got3, torch.float32, ref3, bound3, 20)


def test_linear_backward():
    cpu, dev = _linear_pair(20, 12)
    x = make_cpu((16, 20), torch.float32)
    g = make_cpu((16, 12), torch.float32, seed=5)
    x_cpu = x.double().requires_grad_()
    x_dev = x.to(DEVICE).requires_grad_()
    cpu(x_cpu).backward(g.double())
    dev(x_dev).backward(g.to(DEVICE))
    w = cpu.weight.detach()
    # grad_input = g @ W, grad_weight = g^T @ x, grad_bias = sum(g, 0)
    assert_mm_close(x_dev.grad, torch.float32, x_cpu.grad, g.double().abs() @ w.abs(), 12)
    assert_mm_close(
        dev.weight.grad, torch.float32, cpu.weight.grad, g.double().abs().t() @ x.double().abs(), 16
    )
    assert_mm_close(dev.bias.grad, torch.float32, cpu.bias.grad, g.double().abs().sum(0), 16)
    assert dev.weight.grad.device.type == "ocl"


# ------------------------------------------------------------------------------------------
# out= checks, outputs aliasing an operand, integer matrices (issue 10, items 3, 4 and 13)

X23 = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]


def _raises_like_cpu(fn_cpu, fn_ocl):
    """fn_ocl raises the exception type and message that fn_cpu raises on the CPU."""
    with pytest.raises(Exception) as cpu_err:
        fn_cpu()
    with pytest.raises(type(cpu_err.value)) as ocl_err:
        fn_ocl()
    assert str(ocl_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


@pytest.mark.parametrize("out_dtype", [torch.float64, torch.float16, torch.int64], ids=dtype_id)
def test_mm_out_of_wrong_dtype_raises_like_cpu(out_dtype):
    x = torch.tensor(X23)
    xo = x.to(DEVICE)
    _raises_like_cpu(
        lambda: torch.mm(x, x.t(), out=torch.empty(0, dtype=out_dtype)),
        lambda: torch.mm(xo, xo.t(), out=torch.empty(0, dtype=out_dtype, device=DEVICE)),
    )
    _raises_like_cpu(
        lambda: torch.addmm(x[:, :2], x, x.t(), out=torch.empty(2, 2, dtype=out_dtype)),
        lambda: torch.addmm(
            xo[:, :2], xo, xo.t(), out=torch.empty(2, 2, dtype=out_dtype, device=DEVICE)
        ),
    )


def test_addmm_bias_of_other_dtype_raises_like_cpu():
    x = torch.tensor(X23)
    xo = x.to(DEVICE)
    bias = torch.zeros(2, 2, dtype=torch.float64)
    _raises_like_cpu(
        lambda: torch.addmm(bias, x, x.t()), lambda: torch.addmm(bias.to(DEVICE), xo, xo.t())
    )
    _raises_like_cpu(
        lambda: bias.clone().addmm_(x, x.t()), lambda: bias.to(DEVICE).addmm_(xo, xo.t())
    )


def test_mm_out_of_wrong_shape_resizes_like_cpu():
    a, b = make_cpu((5, 4), torch.float32), make_cpu((4, 3), torch.float32, seed=1)
    for shape in [(0,), (3, 5), (15,)]:
        out = torch.empty(shape, device=DEVICE)
        if out.numel():  # resizing a non-empty out warns, as on the CPU
            with pytest.warns(UserWarning, match="was resized"):
                r = torch.mm(a.to(DEVICE), b.to(DEVICE), out=out)
        else:
            r = torch.mm(a.to(DEVICE), b.to(DEVICE), out=out)
        assert r is out
        a64, b64 = a.double(), b.double()
        assert_mm_close(out, torch.float32, a64 @ b64, a64.abs() @ b64.abs(), 4)


@pytest.mark.parametrize("case", ["mm_out_a", "mm_out_b", "addmm__a", "addmm__b", "addmm_out_a"])
def test_mm_output_aliasing_an_operand(case):
    # 40 x 40: several work-groups, so a kernel writing its output while reading it shows.
    x = make_cpu((40, 40), torch.float32, low=-1, high=1)
    w = make_cpu((40, 40), torch.float32, low=-1, high=1, seed=1)
    c = make_cpu((40, 40), torch.float32, low=-1, high=1, seed=2)
    xo, wo, co = x.to(DEVICE), w.to(DEVICE), c.to(DEVICE)
    x64, w64 = x.double(), w.double()
    if case == "mm_out_a":
        torch.mm(xo, wo, out=xo)
        got, ref, bound = xo, x64 @ w64, x64.abs() @ w64.abs()
    elif case == "mm_out_b":
        torch.mm(xo, wo, out=wo)
        got, ref, bound = wo, x64 @ w64, x64.abs() @ w64.abs()
    elif case == "addmm__a":
        xo.addmm_(xo, wo)
        got, (ref, bound) = xo, _addmm_ref(x, x, w, 1, 1)
    elif case == "addmm__b":
        wo.addmm_(xo, wo, beta=0.5, alpha=2)
        got, (ref, bound) = wo, _addmm_ref(w, x, w, 0.5, 2)
    else:
        torch.addmm(co, xo, wo, out=wo)
        got, (ref, bound) = wo, _addmm_ref(c, x, w, 1, 1)
    assert_mm_close(got, torch.float32, ref, bound, 40)


def test_mm_output_overlapping_an_operand_partially():
    # out is a window of the storage that also holds a: rows shifted by one.
    base = make_cpu((41, 40), torch.float32, low=-1, high=1)
    w = make_cpu((40, 40), torch.float32, low=-1, high=1, seed=1)
    bo = base.to(DEVICE)
    a_o, out_o = bo[:40], bo[1:]
    torch.mm(a_o, w.to(DEVICE), out=out_o)
    a64, w64 = base[:40].double(), w.double()
    assert_mm_close(out_o, torch.float32, a64 @ w64, a64.abs() @ w64.abs(), 40)


INT_MM_DTYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


@pytest.mark.parametrize("dtype", INT_MM_DTYPES, ids=dtype_id)
def test_mm_integer_dtypes_like_cpu(dtype):
    # Values over the whole range: products and sums wrap around as on the CPU.
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -(2**40)), min(info.max, 2**40)
    a = make_cpu((13, 21), dtype, low=lo, high=hi)
    b = make_cpu((21, 17), dtype, low=lo, high=hi, seed=1)
    ao, bo = a.to(DEVICE), b.to(DEVICE)
    assert_ocl_close(torch.mm(ao, bo), torch.mm(a, b))
    assert_ocl_close(torch.mm(ao.t().contiguous().t(), bo.t().contiguous().t()), torch.mm(a, b))
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.mm(ao, bo, out=out)
    assert_ocl_close(out, torch.mm(a, b))


@pytest.mark.parametrize("dtype", INT_MM_DTYPES, ids=dtype_id)
def test_addmm_integer_dtypes_like_cpu(dtype):
    a = make_cpu((9, 30), dtype)
    b = make_cpu((30, 11), dtype, seed=1)
    c = make_cpu((11,), dtype, seed=2)
    ao, bo, co = a.to(DEVICE), b.to(DEVICE), c.to(DEVICE)
    assert_ocl_close(torch.addmm(co, ao, bo), torch.addmm(c, a, b))
    assert_ocl_close(
        torch.addmm(co, ao, bo, beta=3, alpha=2), torch.addmm(c, a, b, beta=3, alpha=2)
    )
    assert_ocl_close(torch.addmm(co, ao, bo, beta=0), torch.addmm(c, a, b, beta=0))
    s = make_cpu((9, 11), dtype, seed=3)
    so = s.to(DEVICE)
    so.addmm_(ao, bo)
    assert_ocl_close(so, s.clone().addmm_(a, b))


def test_mm_bool_raises_like_cpu():
    m = torch.ones(3, 3, dtype=torch.bool)
    with pytest.raises(RuntimeError):
        torch.mm(m, m)
    with pytest.raises(RuntimeError):
        torch.mm(m.to(DEVICE), m.to(DEVICE))


# --- bmm / baddbmm / batched matmul: every batch in one launch --------------------------------

BMM_SHAPES = [(1, 1, 1, 1), (3, 7, 5, 19), (4, 33, 17, 65), (2, 1, 300, 1), (5, 4, 0, 3),
              (0, 3, 4, 5), (3, 0, 4, 5)]  # fmt: skip


def _bmm_layout(x, kind):
    """x (B x R x C) on the device in the given layout, with the same values."""
    if kind == "contiguous":
        return x.to(DEVICE)
    if kind == "transposed":  # each matrix stored column-major
        return x.transpose(1, 2).contiguous().to(DEVICE).transpose(1, 2)
    if kind == "batch-last":  # the batch is the innermost dimension
        return x.permute(1, 2, 0).contiguous().to(DEVICE).permute(2, 0, 1)
    if kind == "padded":  # a gap between matrices and rows
        big = torch.zeros(x.shape[0], x.shape[1] + 1, x.shape[2] + 3, dtype=x.dtype)
        big[:, : x.shape[1], : x.shape[2]] = x
        return big.to(DEVICE)[:, : x.shape[1], : x.shape[2]]
    raise AssertionError(kind)


@pytest.mark.parametrize("shape", BMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kinds", [("contiguous", "contiguous"), ("transposed", "padded"),
                                   ("padded", "transposed"), ("batch-last", "contiguous")],
                         ids=lambda k: "-".join(k))  # fmt: skip
def test_bmm_matches_float64(shape, kinds):
    nb, m, k, n = shape
    a = make_cpu((nb, m, k), torch.float32, seed=1)
    b = make_cpu((nb, k, n), torch.float32, seed=2)
    got = torch.bmm(_bmm_layout(a, kinds[0]), _bmm_layout(b, kinds[1]))
    a64, b64 = a.double(), b.double()
    assert_mm_close(got, torch.float32, a64 @ b64, a64.abs() @ b64.abs(), k)


@pytest.mark.parametrize("bias_shape", [(3, 7, 19), (7, 19), (1, 1, 19), (3, 7, 1)])
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, -2.0), (0.0, 1.5)])
def test_baddbmm(bias_shape, beta, alpha):
    a, b = make_cpu((3, 7, 5), torch.float32, seed=3), make_cpu((3, 5, 19), torch.float32, seed=4)
    c = make_cpu(bias_shape, torch.float32, seed=5)
    if beta == 0:
        c[..., 0] = NAN  # ignored when beta == 0, as on the CPU
    got = torch.baddbmm(c.to(DEVICE), a.to(DEVICE), b.to(DEVICE), beta=beta, alpha=alpha)
    a64, b64, c64 = a.double(), b.double(), c.double()
    prod = alpha * (a64 @ b64)
    ref = prod if beta == 0 else beta * c64 + prod
    bound = abs(alpha) * (a64.abs() @ b64.abs()) + (0 if beta == 0 else abs(beta) * c64.abs())
    assert_mm_close(got, torch.float32, ref, bound.expand(ref.shape), 5)


def test_baddbmm_inplace_out_and_aliasing():
    a, b = make_cpu((2, 6, 6), torch.float32, seed=6), make_cpu((2, 6, 6), torch.float32, seed=7)
    c = make_cpu((2, 6, 6), torch.float32, seed=8)
    co = c.to(DEVICE)
    co.baddbmm_(a.to(DEVICE), b.to(DEVICE), beta=0.5)
    assert_ocl_close(co, (0.5 * c.double() + a.double() @ b.double()).float())
    ao = a.to(DEVICE)
    torch.bmm(ao, b.to(DEVICE), out=ao)  # out is an operand: computed into a temporary
    assert_ocl_close(ao, (a.double() @ b.double()).float())
    out = torch.empty(0, device=DEVICE)
    torch.baddbmm(c.to(DEVICE), a.to(DEVICE), b.to(DEVICE), out=out)
    assert_ocl_close(out, (c.double() + a.double() @ b.double()).float())
    with pytest.raises(RuntimeError) as cpu_err:
        torch.bmm(a, b, out=torch.empty(2, 6, 6, dtype=torch.float64))
    with pytest.raises(RuntimeError) as ocl_err:
        torch.bmm(a.to(DEVICE), b.to(DEVICE), out=torch.empty(2, 6, 6, dtype=torch.float64,
                                                              device=DEVICE))  # fmt: skip
    assert str(ocl_err.value) == str(cpu_err.value)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int64,
                                   torch.int8], ids=dtype_id)  # fmt: skip
def test_bmm_dtypes(dtype):
    skip_unsupported(dtype)
    a = make_cpu((3, 5, 4), dtype, seed=9)
    b = make_cpu((3, 4, 6), dtype, seed=10)
    got = torch.bmm(a.to(DEVICE), b.to(DEVICE))
    if dtype.is_floating_point:
        a64, b64 = a.double(), b.double()
        assert_mm_close(got, dtype, a64 @ b64, a64.abs() @ b64.abs(), 4)
    else:
        assert_ocl_close(got, torch.bmm(a, b), exact=True)


def test_bmm_errors_like_cpu():
    for a, b in [((2, 3, 4), (2, 5, 6)), ((2, 3, 4), (3, 4, 6)), ((3, 4), (3, 4, 5))]:
        x, y = make_cpu(a, torch.float32), make_cpu(b, torch.float32)
        with pytest.raises(RuntimeError) as cpu_err:
            torch.bmm(x, y)
        with pytest.raises(RuntimeError) as ocl_err:
            torch.bmm(x.to(DEVICE), y.to(DEVICE))
        assert str(ocl_err.value) == str(cpu_err.value)


def test_batched_matmul_and_attention_scores_backward():
    """matmul of 4-d tensors (attention: q @ k^T, p @ v) reaches bmm, forward and backward."""
    q = make_cpu((2, 3, 5, 8), torch.float32, seed=11).requires_grad_()
    k = make_cpu((2, 3, 5, 8), torch.float32, seed=12).requires_grad_()
    v = make_cpu((2, 3, 5, 8), torch.float32, seed=13).requires_grad_()
    qo, ko, vo = (t.detach().to(DEVICE).requires_grad_() for t in (q, k, v))
    out = torch.softmax(qo @ ko.transpose(-1, -2), -1) @ vo
    ref = torch.softmax(q.double() @ k.double().transpose(-1, -2), -1) @ v.double()
    # CPU float32 itself is 1.9e-6 from float64 here (outputs up to ~1.5), more than float32's
    # default atol of 1e-6; a GEMM that sums k in order (the GPU profile's tiled kernel, as
    # cuBLAS) lands at 2-3e-6.
    assert_ocl_close(out, ref.float(), rtol=1e-5, atol=5e-6)
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    # The gradients go through softmax's exp: CPU float32 itself is ~6e-5 off float64 here
    # (largest gradient ~36); the tolerance scales with the gradient's size.
    for dev, cpu in ((qo, q), (ko, k), (vo, v)):
        scale = cpu.grad.abs().max().item()
        assert_ocl_close(dev.grad, cpu.grad.float(), rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
@pytest.mark.parametrize("op", ["mm", "addmm", "bmm", "mv"])
def test_half_gemm_reads_operands_in_place(dtype, op):
    # The half types accumulate in float32. gemv (mv) reads and stores them as they are on every
    # device, mm/bmm on GPUs: no float32 copies of the operands or the result (2x their bytes
    # each). A CPU device widens mm's operands to float32 once (Matmul.cpp: faster there).
    n = 256
    shapes = {"mm": [(n, n), (n, n)], "addmm": [(n,), (n, n), (n, n)],
              "bmm": [(2, n, n), (2, n, n)], "mv": [(n, n), (n,)]}[op]  # fmt: skip
    xs = [make_cpu(s, dtype, low=-1, high=1, seed=i) for i, s in enumerate(shapes)]
    ds = [x.to(DEVICE) for x in xs]
    torch.ocl.synchronize()
    before = torch.ocl.memory_allocated()
    torch.ocl.reset_peak_memory_stats()
    got = getattr(torch, op)(*ds)
    torch.ocl.synchronize()
    extra = torch.ocl.max_memory_allocated() - before
    # Matmul.cpp takes any device with CPU among its OpenCL types for a CPU device: Oclgrind's are
    # GPU|ACCELERATOR|CPU, which get_device_properties shows as "GPU".
    props = torch.ocl.get_device_properties(DEVICE)
    cpu_device = props.type == "CPU" or "Oclgrind" in props.name
    in_place = op == "mv" or not cpu_device
    widened = sum(x.numel() * 4 for x in ds) + got.numel() * 8  # + an expanded bias
    limit = 0 if in_place else widened
    assert extra <= got.numel() * got.element_size() + limit + 512, (extra, got.numel())
    x64 = [x.double() for x in xs]
    want = getattr(torch, op)(*x64)
    bound = getattr(torch, op)(*[x.abs() for x in x64])
    assert_mm_close(got, dtype, want, bound, n)
