"""Convolution on ocl (csrc/ops/Conv.cpp, kernels/conv.cl) against CPU float64 (mkldnn off):
forward and the three gradients for 1d/2d/3d, stride/padding ('same', 'valid')/dilation/groups,
depthwise, 1x1, transposed with output_padding and groups, batch 1, odd sizes, empty batches,
unbatched inputs, channels-last and non-contiguous inputs, float16/bfloat16/float64, the result
memory formats of CPU torch, nn modules training one SGD step, and torchvision's resnet18."""

from __future__ import annotations

import copy
import dataclasses
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import (
    DEVICE,
    dtype_id,
    make_cpu,
    parse_tuning_lines,
    skip_unsupported,
    tuning_line,
)

# float32 results must be within this fraction of the largest reference value (float64).
REL = {torch.float32: 1e-4, torch.float64: 1e-10, torch.float16: 4e-3, torch.bfloat16: 3e-2}


@pytest.fixture(autouse=True)
def _no_mkldnn():
    """CPU float32 convolutions through oneDNN differ from float64 by far more than ours do."""
    with torch.backends.mkldnn.flags(enabled=False):
        yield


@dataclasses.dataclass
class Case:
    dims: int
    N: int
    C: int
    CO: int
    size: tuple
    k: tuple
    stride: object = 1
    padding: object = 0
    dilation: object = 1
    groups: int = 1
    bias: bool = True
    transposed: bool = False
    output_padding: object = 0
    name: str = ""

    def weight_shape(self):
        if self.transposed:
            return (self.C, self.CO // self.groups, *self.k)
        return (self.CO, self.C // self.groups, *self.k)

    def fn(self, x, w, b):
        if self.transposed:
            f = getattr(F, f"conv_transpose{self.dims}d")
            return f(x, w, b, self.stride, self.padding, self.output_padding, self.groups,
                     self.dilation)  # fmt: skip
        f = getattr(F, f"conv{self.dims}d")
        return f(x, w, b, self.stride, self.padding, self.dilation, self.groups)


# Every case selects a different code path or geometry corner (see Conv.cpp's header).
CASES = [
    Case(1, 2, 3, 4, (9,), (3,), padding=1, name="1d"),
    Case(
        1, 3, 4, 6, (11,), (2,), stride=3, dilation=2, groups=2, padding="valid", name="1d-s3d2g2"
    ),
    Case(1, 2, 3, 5, (8,), (4,), padding="same", name="1d-same-even-kernel"),
    Case(2, 2, 3, 5, (7, 6), (3, 3), padding=1, name="2d-3x3"),
    Case(2, 2, 4, 6, (9, 7), (3, 2), stride=2, name="2d-stride2-odd"),
    Case(2, 2, 3, 4, (8, 9), (3, 3), padding=2, dilation=2, name="2d-dilation2"),
    Case(2, 3, 4, 6, (7, 8), (3, 3), stride=(2, 1), padding=(1, 0), groups=2, name="2d-groups2"),
    Case(2, 2, 6, 6, (7, 7), (3, 3), groups=3, padding="same", dilation=(2, 1), name="2d-same-g3"),
    Case(2, 2, 3, 4, (6, 5), (2, 2), padding="valid", bias=False, name="2d-valid-nobias"),
    Case(2, 2, 5, 7, (9, 10), (1, 1), name="1x1-per-image"),
    Case(2, 3, 5, 7, (3, 5), (1, 1), name="1x1-small"),
    Case(2, 2, 6, 4, (9, 10), (1, 1), groups=2, name="1x1-groups2"),
    Case(2, 2, 5, 7, (9, 8), (1, 1), stride=2, name="1x1-stride2"),
    Case(2, 2, 4, 4, (7, 9), (3, 3), padding=1, groups=4, name="depthwise"),
    Case(2, 2, 3, 6, (8, 7), (3, 3), stride=2, padding=1, groups=3, name="depthwise-mult2"),
    Case(2, 2, 5, 5, (9, 9), (5, 3), dilation=2, padding=(4, 2), groups=5, name="depthwise-dil"),
    Case(2, 2, 4, 8, (6, 11), (1, 5), padding=(0, 2), groups=4, name="depthwise-1x5-mult2"),
    Case(1, 2, 6, 6, (20,), (7,), padding=3, groups=6, name="1d-depthwise-k7"),
    # rows wider than a CPU device's blocks of 8 and chunks of 64: the register-block path, the
    # overlapping last block, a chunk boundary inside a row, stride 2 along the width
    Case(2, 2, 3, 3, (5, 75), (3, 3), padding=1, groups=3, name="depthwise-wide"),
    Case(2, 2, 2, 4, (4, 70), (3, 5), stride=(1, 2), padding=2, groups=2, name="depthwise-wide-s2"),
    Case(2, 2, 1, 4, (6, 7), (3, 3), padding=1, name="one-input-channel"),
    Case(2, 1, 3, 4, (5, 6), (3, 3), padding=1, name="batch1"),
    # maps of >= 256 outputs: one image at a time, GEMMs in place
    Case(2, 3, 4, 6, (17, 16), (3, 3), padding=1, groups=2, name="2d-per-image-g2"),
    Case(
        2,
        2,
        4,
        4,
        (17, 16),
        (3, 3),
        stride=2,
        padding=1,
        output_padding=1,
        transposed=True,
        name="t2d-per-image",
    ),  # fmt: skip
    Case(2, 3, 2, 3, (4, 4), (4, 4), name="kernel-covers-input"),
    Case(2, 2, 2, 3, (3, 2), (3, 3), padding=2, name="padding-beyond-input"),
    Case(3, 2, 3, 4, (4, 5, 3), (3, 3, 3), padding=1, name="3d"),
    Case(3, 2, 4, 6, (5, 4, 6), (2, 3, 2), stride=(2, 1, 2), groups=2, name="3d-stride-g2"),
    Case(3, 2, 3, 3, (4, 5, 5), (3, 3, 3), padding=1, groups=3, name="3d-depthwise"),
    Case(1, 2, 3, 4, (7,), (3,), stride=2, output_padding=1, transposed=True, name="t1d"),
    Case(
        2,
        2,
        3,
        4,
        (5, 4),
        (3, 3),
        stride=2,
        padding=1,
        output_padding=1,
        transposed=True,
        name="t2d",
    ),  # fmt: skip
    Case(
        2,
        2,
        4,
        6,
        (4, 3),
        (3, 2),
        stride=3,
        dilation=2,
        groups=2,
        output_padding=(2, 1),
        transposed=True,
        name="t2d-g2-s3d2",
    ),  # fmt: skip
    Case(
        2,
        2,
        4,
        4,
        (5, 5),
        (3, 3),
        stride=2,
        padding=1,
        groups=4,
        transposed=True,
        name="t2d-depthwise",
    ),  # fmt: skip
    Case(2, 2, 4, 8, (5, 5), (3, 3), groups=4, transposed=True, name="t2d-cout-per-group-2"),
    Case(2, 2, 5, 3, (6, 7), (1, 1), transposed=True, bias=False, name="t2d-1x1"),
    Case(
        3,
        2,
        3,
        4,
        (3, 4, 3),
        (2, 3, 3),
        stride=2,
        padding=(0, 1, 1),
        output_padding=1,
        transposed=True,
        name="t3d",
    ),  # fmt: skip
    Case(2, 1, 2, 3, (3, 3), (3, 3), padding=2, transposed=True, name="t2d-padding"),
    # stride 1 with >= 16 input channels: the input gradient is a convolution of gy (no col2im)
    Case(2, 2, 16, 8, (8, 9), (3, 3), padding=1, name="dx-as-conv"),
    Case(2, 2, 16, 8, (12, 12), (3, 3), padding=1, name="dx-as-conv-per-image"),
    Case(2, 3, 16, 6, (9, 8), (3, 2), padding=(1, 3), dilation=2, groups=2, name="dx-as-conv-dil"),
    Case(2, 2, 16, 8, (7, 6), (3, 3), padding=1, groups=8, name="dx-as-conv-depthwise"),
    Case(1, 2, 16, 4, (13,), (5,), padding=1, name="dx-as-conv-1d"),
    Case(3, 2, 16, 4, (4, 5, 3), (3, 2, 3), padding=(1, 0, 2), name="dx-as-conv-3d"),
    Case(2, 2, 4, 16, (6, 7), (3, 3), padding=1, transposed=True, name="t2d-s1-as-conv"),
]


def inputs(case, dtype, seed=0):
    x = make_cpu((case.N, case.C, *case.size), torch.float64, low=-1, high=1, seed=seed)
    w = make_cpu(case.weight_shape(), torch.float64, low=-1, high=1, seed=seed + 1)
    b = make_cpu((case.CO,), torch.float64, low=-1, high=1, seed=seed + 2) if case.bias else None
    # the values the device sees, exactly, in float64
    rnd = lambda t: None if t is None else t.to(dtype).to(torch.float64)  # noqa: E731
    return rnd(x), rnd(w), rnd(b)


def reference(case, x, w, b, gy):
    """Forward and (gx, gw, gb) in float64 on the CPU."""
    leaves = [t.clone().requires_grad_() if t is not None else None for t in (x, w, b)]
    y = case.fn(*leaves)
    y.backward(gy)
    return y.detach(), [t.grad if t is not None else None for t in leaves]


def assert_close64(actual, expected, dtype, what):
    assert actual.device.type == "ocl", what
    assert actual.dtype == dtype, f"{what}: dtype {actual.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    got = actual.cpu().to(torch.float64)
    scale = max(expected.abs().max().item(), 1e-30) if expected.numel() else 1.0
    err = (got - expected).abs().max().item() / scale if expected.numel() else 0.0
    assert err <= REL[dtype], f"{what}: max error {err:.3g} of the largest value"


def layout(t, how):
    """t (on ocl) in the layout `how`, as a new leaf."""
    if how == "channels_last":
        fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
        t = t.to(memory_format=fmt)
    elif how == "noncontig":
        # every other element of a tensor twice as wide, and the batch dim moved inward
        big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype, device=t.device)
        big[..., ::2] = t
        t = big[..., ::2]
        assert not t.is_contiguous()
    return t.detach()


def run_case(case, dtype=torch.float32, x_layout="contiguous", w_layout="contiguous", seed=0):
    skip_unsupported(dtype)
    x, w, b = inputs(case, dtype, seed)
    out_shape = tuple(case.fn(x, w, b).shape)
    gy = make_cpu(out_shape, torch.float64, low=-1, high=1, seed=seed + 3)
    gy = gy.to(dtype).to(torch.float64)
    y_ref, grads_ref = reference(case, x, w, b, gy)

    xo = layout(x.to(dtype).to(DEVICE), x_layout).requires_grad_()
    wo = layout(w.to(dtype).to(DEVICE), w_layout).requires_grad_()
    bo = b.to(dtype).to(DEVICE).requires_grad_() if b is not None else None
    y = case.fn(xo, wo, bo)
    assert_close64(y, y_ref, dtype, "forward")
    # CPU torch's result memory format for the same layouts, in its default configuration
    # (float32 through oneDNN: channels-last 3d results for channels-last 3d inputs, which its
    # float64 and non-oneDNN paths do not give; 2d is channels-last on every CPU path)
    xc = layout(x.to(torch.float32), x_layout) if x_layout != "noncontig" else x.float()
    wc = layout(w.to(torch.float32), w_layout) if w_layout != "noncontig" else w.float()
    with torch.backends.mkldnn.flags(enabled=True):
        y_cpu = case.fn(xc, wc, None if b is None else b.float())
    fmts = {3: [], 4: [torch.channels_last], 5: [torch.channels_last_3d]}[y.dim()]
    for fmt in [torch.contiguous_format, *fmts]:
        assert y.is_contiguous(memory_format=fmt) == y_cpu.is_contiguous(memory_format=fmt), fmt
    y.backward(gy.to(dtype).to(DEVICE))
    assert_close64(xo.grad, grads_ref[0], dtype, "grad_input")
    assert_close64(wo.grad, grads_ref[1], dtype, "grad_weight")
    if b is not None:
        assert_close64(bo.grad, grads_ref[2], dtype, "grad_bias")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_forward_and_grads(case):
    run_case(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.dims >= 2], ids=lambda c: c.name)
def test_channels_last_input(case):
    run_case(case, x_layout="channels_last")


@pytest.mark.parametrize(
    "name",
    [
        "2d-3x3",
        "1x1-per-image",
        "depthwise",
        "t2d-g2-s3d2",
        "3d-stride-g2",
        "2d-per-image-g2",
        "dx-as-conv-dil",
    ],
)
def test_channels_last_weight(name):
    run_case(next(c for c in CASES if c.name == name), w_layout="channels_last")


@pytest.mark.parametrize(
    "name", ["1d", "2d-groups2", "1x1-per-image", "depthwise", "t2d", "3d", "2d-per-image-g2"]
)
def test_noncontiguous_input(name):
    run_case(next(c for c in CASES if c.name == name), x_layout="noncontig")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=dtype_id)
@pytest.mark.parametrize(
    "name",
    ["1d", "2d-groups2", "1x1-per-image", "depthwise-mult2", "t2d-g2-s3d2", "3d", "t2d-per-image"],
)
def test_dtypes(dtype, name):
    run_case(next(c for c in CASES if c.name == name), dtype=dtype)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("x_cl", [False, True])
@pytest.mark.parametrize("w_cl", [False, True])
@pytest.mark.parametrize("gy_cl", [False, True])
def test_backward_memory_formats(transposed, x_cl, w_cl, gy_cl):
    """aten::convolution_backward's results have CPU torch's formats (channels-last when the
    input or the weight is), whatever the layout of grad_output."""
    x = make_cpu((2, 4, 6, 6), torch.float32, seed=1)
    w = make_cpu((4, 8, 3, 3) if transposed else (8, 4, 3, 3), torch.float32, seed=2)
    gy = make_cpu((2, 8, 8, 8) if transposed else (2, 8, 4, 4), torch.float32, seed=3)
    cl = torch.channels_last
    x, w, gy = (t.to(memory_format=cl) if f else t for t, f in ((x, x_cl), (w, w_cl), (gy, gy_cl)))
    args = ([8], [1], [0], [1], transposed, [0], 1, [True, True, True])
    want = torch.ops.aten.convolution_backward(gy, x, w, *args)
    got = torch.ops.aten.convolution_backward(gy.to(DEVICE), x.to(DEVICE), w.to(DEVICE), *args)
    for g, e in zip(got, want, strict=True):
        assert g.shape == e.shape
        assert g.is_contiguous() == e.is_contiguous()
        assert g.is_contiguous(memory_format=cl) == e.is_contiguous(memory_format=cl)
        torch.testing.assert_close(g.cpu(), e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "mask", [(True, False, False), (False, True, False), (False, False, True), (False, True, True)]
)
def test_output_mask(mask):
    x = make_cpu((2, 3, 5, 5), torch.float32, seed=1)
    w = make_cpu((4, 3, 3, 3), torch.float32, seed=2)
    gy = make_cpu((2, 4, 3, 3), torch.float32, seed=3)
    args = ([4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, list(mask))
    want = torch.ops.aten.convolution_backward(gy, x, w, *args)
    got = torch.ops.aten.convolution_backward(gy.to(DEVICE), x.to(DEVICE), w.to(DEVICE), *args)
    for asked, g, e in zip(mask, got, want, strict=True):
        if not asked:
            assert g is None and e is None
        else:
            torch.testing.assert_close(g.cpu(), e, rtol=1e-4, atol=1e-4)


def test_only_weight_requires_grad():
    x = make_cpu((2, 3, 6, 6), torch.float32, seed=1)
    w = make_cpu((4, 3, 3, 3), torch.float32, seed=2).requires_grad_()
    wo = w.detach().to(DEVICE).requires_grad_()
    F.conv2d(x.to(DEVICE), wo, stride=2).sum().backward()
    F.conv2d(x.double(), w.double(), stride=2).sum().backward()
    assert_close64(wo.grad, w.grad, torch.float32, "grad_weight")


@pytest.mark.parametrize("transposed", [False, True])
def test_empty_batch(transposed):
    case = Case(2, 0, 3, 4, (5, 5), (3, 3), padding=1, transposed=transposed)
    x, w, b = inputs(case, torch.float32)
    xo, wo, bo = (t.float().to(DEVICE).requires_grad_() for t in (x, w, b))
    y = case.fn(xo, wo, bo)
    assert y.shape == case.fn(x, w, b).shape
    y.sum().backward()
    assert xo.grad.shape == xo.shape
    assert wo.grad.abs().sum().item() == 0 and bo.grad.abs().sum().item() == 0


def test_unbatched_input():
    x = make_cpu((3, 6, 7), torch.float64, seed=1)
    w = make_cpu((5, 3, 3, 3), torch.float64, seed=2)
    xo = x.float().to(DEVICE).requires_grad_()
    y = F.conv2d(xo, w.float().to(DEVICE), padding=1)
    assert_close64(y, F.conv2d(x, w, padding=1), torch.float32, "forward")
    y.sum().backward()
    xr = x.clone().requires_grad_()
    F.conv2d(xr, w, padding=1).sum().backward()
    assert_close64(xo.grad, xr.grad, torch.float32, "grad_input")


def test_nonfinite_inputs():
    x = make_cpu((2, 3, 6, 6), torch.float64, seed=1)
    x[0, 1, 2, 3] = float("nan")
    x[1, 2, 0, 0] = float("inf")
    w = make_cpu((4, 3, 3, 3), torch.float64, seed=2)
    want = F.conv2d(x, w, padding=1)
    got = F.conv2d(x.float().to(DEVICE), w.float().to(DEVICE), padding=1).cpu().double()
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())
    fin = want.isfinite()
    torch.testing.assert_close(got[fin], want[fin], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("module", ["Conv2d", "ConvTranspose2d"])
def test_module_sgd_step(module):
    torch.manual_seed(0)
    if module == "Conv2d":
        m = torch.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2).double()
    else:
        m = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        m = m.double()
    x = make_cpu((2, 4, 7, 7), torch.float64, seed=4)
    mo = copy.deepcopy(m).float().to(DEVICE)
    for model, inp in ((m, x), (mo, x.float().to(DEVICE))):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        out = model(inp)
        (out * out).mean().backward()
        opt.step()
    for p_ref, p in zip(m.parameters(), mo.parameters(), strict=True):
        assert_close64(p.detach(), p_ref.detach(), torch.float32, "parameter after one step")
    assert_close64(mo(x.float().to(DEVICE)).detach(), m(x).detach(), torch.float32, "forward")


def _torchvision():
    if "torchvision" not in sys.modules:
        # PyPI's torchvision registers fake kernels for CUDA torch's torchvision ops at import;
        # on a CPU torch that fails, and the pure-Python models do not need them.
        sys.modules.setdefault(
            "torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations")
        )
    return pytest.importorskip("torchvision")


@pytest.mark.slow
def test_resnet18_forward_backward():
    tv = _torchvision()
    torch.manual_seed(0)
    # Eval mode: batch norm in training mode at batch 2 normalises the 1x1 maps of layer4 by the
    # spread of two values, which amplifies rounding so much that CPU float32 itself is 4e-4
    # (output) and 3e-2 (gradients) away from float64; with running statistics both CPU float32
    # and ocl are within 1e-6. Backward works the same in either mode.
    ref = tv.models.resnet18(num_classes=10).double().eval()
    model = copy.deepcopy(ref).float().to(DEVICE)
    x = make_cpu((2, 3, 32, 32), torch.float64, low=-1, high=1, seed=5)
    y_ref = ref(x)
    y_ref.sum().backward()
    # Batch norm, max pooling and adaptive average pooling (and their backward) are not native
    # on ocl yet: they run on the CPU through the fallback ("silent") here. Every convolution,
    # its backward and the linear layer run natively.
    with torch.ocl.fallback_mode("silent"):
        y = model(x.float().to(DEVICE))
        y.sum().backward()
    assert_close64(y.detach(), y_ref.detach(), torch.float32, "resnet18 output")
    for (name, p_ref), p in zip(ref.named_parameters(), model.parameters(), strict=True):
        assert_close64(p.grad, p_ref.grad, torch.float32, f"grad of {name}")


# --------------------------------------------------------------------------------------------
# Winograd F(2x2, 3x3) (forced: torch-ocl uses it only where the autotuner measured it faster)

WINO_CASES = [
    Case(2, 2, 3, 5, (7, 6), (3, 3), padding=1, name="odd-sizes"),
    Case(2, 2, 4, 6, (6, 6), (3, 3), padding=0, bias=False, name="valid"),
    Case(2, 1, 3, 4, (5, 8), (3, 3), padding=(2, 1), name="pad21"),
    Case(2, 2, 4, 6, (3, 3), (3, 3), padding=1, groups=2, name="groups2"),
    Case(2, 3, 16, 8, (9, 10), (3, 3), padding=1, name="dx-flipped"),
    Case(2, 2, 16, 8, (12, 12), (3, 3), padding=1, groups=2, name="dx-flipped-g2"),
    Case(2, 2, 4, 16, (5, 6), (3, 3), padding=1, transposed=True, name="transposed"),
    Case(2, 2, 3, 4, (1, 1), (3, 3), padding=1, name="1x1-map"),
]


@pytest.fixture
def winograd():
    torch.ops.ocl.set_conv_algorithm("winograd")
    yield
    torch.ops.ocl.set_conv_algorithm("")


@pytest.mark.parametrize("case", WINO_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("x_layout", ["contiguous", "channels_last"])
def test_winograd(winograd, case, x_layout):
    run_case(case, x_layout=x_layout)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64], ids=dtype_id)
def test_winograd_dtypes(winograd, dtype):
    run_case(WINO_CASES[0], dtype=dtype)


def test_winograd_nonfinite(winograd):
    """The transforms are written so that each output reads only its own 3x3 window (no
    multiplication by a zero coefficient): NaN and Inf inputs make exactly the CPU's outputs
    non-finite, and the others match."""
    x = make_cpu((2, 3, 8, 8), torch.float64, seed=1)
    x[0, 1, 3, 4] = float("nan")
    x[1, 2, 0, 0] = float("inf")
    x[1, 0, 5, 2] = float("-inf")
    x[0, 2, 7, 7] = float("inf")
    w = make_cpu((4, 3, 3, 3), torch.float64, seed=2)
    want = F.conv2d(x, w, padding=1)
    got = F.conv2d(x.float().to(DEVICE), w.float().to(DEVICE), padding=1).cpu().double()
    assert torch.equal(got.isfinite(), want.isfinite())
    fin = want.isfinite()
    torch.testing.assert_close(got[fin], want[fin], rtol=1e-4, atol=1e-4)


def test_conv_benchmark_records_and_reuses_its_choice(tmp_path, monkeypatch):
    """torch.ocl.conv_benchmark times a 3x3 stride-1 shape once, records the faster algorithm
    in the device's tuning file under the cache directory, and later calls (also after the
    in-memory choices are forgotten, as in a new process) take it from there without a wait."""
    monkeypatch.setenv("TORCH_OCL_CACHE_DIR", str(tmp_path))
    torch.ops.ocl.clear_tuned_choices()
    x = make_cpu((2, 8, 10, 10), torch.float64, seed=1)
    w = make_cpu((6, 8, 3, 3), torch.float64, seed=2)
    want = F.conv2d(x, w, padding=1)
    xo, wo = x.float().to(DEVICE), w.float().to(DEVICE)
    assert torch.ocl.conv_benchmark is False
    torch.ocl.conv_benchmark = True
    try:
        assert torch.ocl.conv_benchmark is True
        got = F.conv2d(xo, wo, padding=1)
        assert_close64(got, want, torch.float32, "tuned forward")
        file = torch.ops.ocl.tuning_file(0)
        assert file.startswith(str(tmp_path))
        # Under the GPU profile the tiled GEMM inside may record its tiles too: keep conv's lines.
        lines = [e for e in parse_tuning_lines(open(file).read()) if e[1].startswith("conv3x3s1")]
        assert len(lines) == 1 and lines[0][0] in "01" and "conv3x3s1 2 8 6 1 10 10" in lines[0][1]
        waits = torch.ocl.host_wait_count()
        F.conv2d(xo, wo, padding=1)
        assert torch.ocl.host_wait_count() == waits, "a recorded shape was timed again"
    finally:
        torch.ocl.conv_benchmark = False
    # a new process reads the file: Winograd recorded for the key is then used (its rounding
    # differs from im2col + GEMM's, which tells them apart)
    torch.ops.ocl.set_conv_algorithm("gemm")
    y_gemm = F.conv2d(xo, wo, padding=1).cpu()
    torch.ops.ocl.set_conv_algorithm("winograd")
    y_wino = F.conv2d(xo, wo, padding=1).cpu()
    torch.ops.ocl.set_conv_algorithm("")
    assert not torch.equal(y_gemm, y_wino), "the two algorithms cannot be told apart here"
    key = lines[0][1]
    for choice, expected in (("1", y_wino), ("0", y_gemm)):
        open(file, "w").write("garbage line\n" + tuning_line(choice, key))
        torch.ops.ocl.clear_tuned_choices()
        assert torch.equal(F.conv2d(xo, wo, padding=1).cpu(), expected), choice
    torch.ops.ocl.clear_tuned_choices()
