"""Mixed precision on ocl: torch.autocast("ocl", dtype=float16/bfloat16) casts as on CUDA (GEMMs
and convolutions in the low dtype, precision-sensitive ops in float32, multi-input ops promoted),
and torch.amp.GradScaler("ocl") runs its inf check, unscale and scale update natively, matching
the CPU's ops exactly. A small CNN trains with autocast + GradScaler like the float32 CPU run,
and infinite gradients skip the step and halve the scale as on the CPU."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu

LOW = (torch.float16, torch.bfloat16)
# A float32 reference computed from the inputs rounded to the low dtype; the result is rounded
# once more (the kernels accumulate in float32).
LOW_TOL = {torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=1.6e-2, atol=2e-2)}


def pair(shape, seed, dtype=torch.float32, **kwargs):
    t = make_cpu(shape, dtype, seed=seed, **kwargs)
    return t, t.to(DEVICE)


# --------------------------------------------------------------------------------------------
# torch.autocast("ocl")


def test_device_module_and_defaults():
    assert torch.ocl.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.amp.is_autocast_available("ocl")
    assert torch.get_autocast_dtype("ocl") == torch.float16
    assert not torch.ocl.amp.is_autocast_enabled()
    with torch.autocast("ocl", dtype=torch.bfloat16):
        assert torch.ocl.amp.is_autocast_enabled()
        assert torch.ocl.amp.get_autocast_dtype() == torch.bfloat16


def test_unsupported_dtype_warns_and_disables():
    _, a = pair((4, 5), 1)
    with pytest.warns(UserWarning, match="not supported"):
        with torch.autocast("ocl", dtype=torch.float64):
            assert (a @ a.t()).dtype == torch.float32


LOWER_PRECISION_CASES = {
    "mm": lambda a, b, c, w, x: torch.mm(a, b),
    "matmul": lambda a, b, c, w, x: torch.matmul(a, b),
    "addmm": lambda a, b, c, w, x: torch.addmm(c, a, b),
    "linear": lambda a, b, c, w, x: F.linear(a, w, c[:, 0]),
    "bmm": lambda a, b, c, w, x: torch.bmm(a.expand(2, 6, 5), b.expand(2, 5, 7)),
    "baddbmm": lambda a, b, c, w, x: torch.baddbmm(c, a.expand(2, 6, 5), b.expand(2, 5, 7)),
    "conv2d": lambda a, b, c, w, x: F.conv2d(x, w[:, :3].reshape(6, 3, 1, 1), c[:, 0], padding=1),
}


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("case", list(LOWER_PRECISION_CASES))
def test_lower_precision_ops(case, dtype):
    """GEMMs and convolutions run in the autocast dtype, with float32 accumulation."""
    fn = LOWER_PRECISION_CASES[case]
    shapes = [(6, 5), (5, 7), (6, 7), (6, 5), (2, 3, 4, 4)]
    cpu = [make_cpu(s, torch.float32, seed=i) for i, s in enumerate(shapes)]
    dev = [t.to(DEVICE) for t in cpu]
    with torch.autocast("ocl", dtype=dtype):
        out = fn(*dev)
    assert out.dtype == dtype
    expected = fn(*[t.to(dtype).float() for t in cpu]).to(dtype)
    assert_ocl_close(out, expected, **LOW_TOL[dtype])


FP32_CASES = {
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax": lambda x: F.log_softmax(x, -1),
    "layer_norm": lambda x: F.layer_norm(x, (x.shape[-1],)),
    "group_norm": lambda x: F.group_norm(x.reshape(2, 4, 5), 2),
    "exp": torch.exp,
    "log": torch.log,
    "sum": torch.sum,
    "nll_loss": lambda x: F.nll_loss(x, torch.tensor([1, 0, 3, 2], device=x.device)),
    "vector_norm": lambda x: torch.linalg.vector_norm(x),
}
# (cross_entropy is not among them: it calls log_softmax with the input's dtype, so its
# log-probabilities are float16 under CUDA's autocast lists, and ours.)


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("case", list(FP32_CASES))
def test_fp32_ops(case, dtype):
    """Precision-sensitive ops of low-precision inputs compute and return float32."""
    fn = FP32_CASES[case]
    x, dx = pair((4, 10), 2, dtype, low=0.1, high=4)
    with torch.autocast("ocl", dtype=dtype):
        out = fn(dx)
    assert out.dtype == torch.float32
    assert_ocl_close(out, fn(x.float()), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_promote_ops(dtype):
    """Ops of several inputs run in the widest input dtype."""
    a, da = pair((4, 6), 3, dtype)
    b, db = pair((4, 6), 4)
    with torch.autocast("ocl", dtype=dtype):
        out = torch.addcmul(da, db, db, value=0.5)
    assert out.dtype == torch.float32
    assert_ocl_close(out, torch.addcmul(a.float(), b, b, value=0.5))


def test_binary_cross_entropy_is_refused_as_on_cuda():
    p, dp = pair((4,), 5, low=0.1, high=0.9)
    with torch.autocast("ocl"):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(dp, dp)


def test_nesting_cpu_tensors_and_other_ops():
    a, da = pair((5, 5), 6)
    with torch.autocast("ocl"):
        assert (da @ da).dtype == torch.float16
        assert (a @ a).dtype == torch.float32  # the CPU's autocast is not on
        assert torch.relu(da).dtype == torch.float32  # not listed: falls through
        with torch.autocast("ocl", enabled=False):
            assert (da @ da).dtype == torch.float32
    assert (da @ da).dtype == torch.float32


# --------------------------------------------------------------------------------------------
# GradScaler's ops


def grads_with(dtype, special, seed):
    shapes = [(7, 3), (4097,), (0,), (1,), ()]
    cpu = [make_cpu(s, dtype, seed=seed + i) for i, s in enumerate(shapes)]
    if special is not None:
        cpu[1][123] = special
    return cpu, [t.to(DEVICE) for t in cpu]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("special", [None, float("inf"), float("-inf"), float("nan")], ids=str)
@pytest.mark.parametrize("inv", [0.25, 1.0, 3.0e-5])
def test_unscale_matches_the_cpu(dtype, special, inv):
    g, dg = grads_with(dtype, special, 10)
    found, dfound = torch.zeros(()), torch.zeros((), device=DEVICE)
    inv_scale = torch.tensor(inv)
    waits = torch.ocl.host_wait_count()
    torch._amp_foreach_non_finite_check_and_unscale_(dg, dfound, inv_scale.to(DEVICE))
    assert torch.ocl.host_wait_count() == waits
    torch._amp_foreach_non_finite_check_and_unscale_(g, found, inv_scale)
    for a, e in zip(dg, g, strict=True):
        assert_ocl_close(a, e, exact=True)
    assert_ocl_close(dfound, found, exact=True)


def test_unscale_mixed_dtypes_and_layouts():
    """Lists the multi-tensor route does not take in one launch: several dtypes, strided views;
    found_inf already set stays set."""
    g = [
        make_cpu((6, 8), torch.float32, seed=1)[:, ::2],
        make_cpu((5,), torch.float16, seed=2),
        make_cpu((4, 3), torch.float32, seed=3).t(),
    ]
    dg = [t.to(DEVICE) for t in g]
    dg[0] = make_cpu((6, 8), torch.float32, seed=1).to(DEVICE)[:, ::2]
    dg[2] = make_cpu((4, 3), torch.float32, seed=3).to(DEVICE).t()
    found, dfound = torch.ones(()), torch.ones((), device=DEVICE)
    inv = torch.tensor(0.5)
    torch._amp_foreach_non_finite_check_and_unscale_(g, found, inv)
    torch._amp_foreach_non_finite_check_and_unscale_(dg, dfound, inv.to(DEVICE))
    for a, e in zip(dg, g, strict=True):
        assert_ocl_close(a, e, exact=True)
    assert dfound.item() == 1.0


def test_unscale_errors():
    _, dg = grads_with(torch.float32, None, 20)
    ok = torch.zeros((), device=DEVICE)
    with pytest.raises(RuntimeError, match="found_inf"):
        torch._amp_foreach_non_finite_check_and_unscale_(dg, torch.zeros(2, device=DEVICE), ok)
    with pytest.raises(RuntimeError, match="inv_scale"):
        torch._amp_foreach_non_finite_check_and_unscale_(dg, ok, ok.double())
    with pytest.raises(RuntimeError, match="found_inf"):
        torch._amp_foreach_non_finite_check_and_unscale_(dg, torch.zeros(()), ok)


def test_update_scale_matches_the_cpu():
    """The scale's growth after growth_interval clean steps, the back-off on an inf, growth that
    would overflow skipped (the scale stays finite), as torch._amp_update_scale_ on the CPU."""
    pattern = [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, float("nan")]
    for init in (65536.0, 3.0e38):
        scale, tracker = torch.tensor(init), torch.zeros((), dtype=torch.int32)
        dscale, dtracker = scale.to(DEVICE), tracker.to(DEVICE)
        for f in pattern:
            found = torch.tensor(float(f))
            torch._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 2)
            torch._amp_update_scale_(dscale, dtracker, found.to(DEVICE), 2.0, 0.5, 2)
            assert_ocl_close(dscale, scale, exact=True)
            assert_ocl_close(dtracker, tracker, exact=True)
    # factors that are not powers of two round like the CPU's (computed in double)
    scale, dscale = torch.tensor(1000.0), torch.tensor(1000.0, device=DEVICE)
    tracker = torch.zeros((), dtype=torch.int32)
    dtracker = tracker.to(DEVICE)
    for f in [1, 0, 1, 0, 0]:
        torch._amp_update_scale_(scale, tracker, torch.tensor(float(f)), 1.7, 0.3, 1)
        torch._amp_update_scale_(
            dscale, dtracker, torch.tensor(float(f), device=DEVICE), 1.7, 0.3, 1
        )
    assert_ocl_close(dscale, scale, exact=True)


def test_update_scale_errors():
    s, t, f = (
        torch.ones((), device=DEVICE),
        torch.zeros((), dtype=torch.int32, device=DEVICE),
        (torch.zeros((), device=DEVICE)),
    )
    with pytest.raises(RuntimeError, match="growth_tracker must be an int tensor"):
        torch._amp_update_scale_(s, t.float(), f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="current_scale must be a float tensor"):
        torch._amp_update_scale_(s.double(), t, f, 2.0, 0.5, 2)


# --------------------------------------------------------------------------------------------
# Training: autocast + GradScaler


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, stride=2)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


def data(step):
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 5, (8,), generator=g)


def make_models():
    torch.manual_seed(0)
    cpu = SmallCNN()
    dev = copy.deepcopy(cpu).to(DEVICE)
    return cpu, dev


def assert_same_updates(cpu, dev, start, rtol):
    """The parameters moved like the reference's: every update within rtol of the largest one
    (float16 gradients are not float32's; the convolutions' biases, which batch norm cancels, get
    gradients of rounding noise only)."""
    updates = [p.detach() - s for p, s in zip(cpu.parameters(), start, strict=True)]
    scale = max(u.abs().max().item() for u in updates)
    for u, q, s in zip(updates, dev.parameters(), start, strict=True):
        assert q.dtype == torch.float32
        torch.testing.assert_close(q.detach().cpu() - s, u, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("fused", [False, True], ids=["foreach", "fused"])
def test_small_cnn_trains_like_float32(fused):
    """float16 autocast + GradScaler on ocl against float32 on the CPU, a few steps; host waits:
    one per step (scaler.step reads found_inf, as on CUDA) with a foreach optimizer, none with a
    fused one (it gets the scale and found_inf as tensors)."""
    cpu, dev = make_models()
    start = [p.detach().clone() for p in cpu.parameters()]
    ref_opt = torch.optim.SGD(cpu.parameters(), lr=0.05, momentum=0.9)
    opt = torch.optim.SGD(dev.parameters(), lr=0.05, momentum=0.9, fused=fused)
    scaler = torch.amp.GradScaler("ocl")
    for step in range(4):
        x, y = data(step)
        ref_loss = F.cross_entropy(cpu(x), y)
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()

        waits = torch.ocl.host_wait_count()
        with torch.autocast("ocl", dtype=torch.float16):
            out = dev(x.to(DEVICE))
            assert out.dtype == torch.float16
            loss = F.cross_entropy(out, y.to(DEVICE))
        assert loss.dtype == torch.float32
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        assert torch.ocl.host_wait_count() - waits == (0 if fused else 1)
        torch.testing.assert_close(loss.item(), ref_loss.item(), rtol=1e-2, atol=1e-2)
    assert scaler.get_scale() == 65536.0  # no step was skipped
    assert_same_updates(cpu, dev, start, 3e-2)


def test_bfloat16_autocast_trains_like_float32():
    cpu, dev = make_models()
    start = [p.detach().clone() for p in cpu.parameters()]
    ref_opt = torch.optim.SGD(cpu.parameters(), lr=0.05, momentum=0.9)
    opt = torch.optim.SGD(dev.parameters(), lr=0.05, momentum=0.9)
    for step in range(3):
        x, y = data(step)
        ref_opt.zero_grad()
        F.cross_entropy(cpu(x), y).backward()
        ref_opt.step()
        opt.zero_grad()
        with torch.autocast("ocl", dtype=torch.bfloat16):
            loss = F.cross_entropy(dev(x.to(DEVICE)), y.to(DEVICE))
        loss.backward()
        opt.step()
    assert_same_updates(cpu, dev, start, 1e-1)


@pytest.mark.parametrize("fused", [False, True], ids=["foreach", "fused"])
def test_inf_gradients_skip_the_step_and_halve_the_scale(fused):
    """An inf in a gradient: the step is skipped and the scale halved; after growth_interval
    clean steps it doubles; all as GradScaler on the CPU does with the same gradients."""
    cpu, dev = make_models()
    ref_opt = torch.optim.SGD(cpu.parameters(), lr=0.05, momentum=0.9)
    opt = torch.optim.SGD(dev.parameters(), lr=0.05, momentum=0.9, fused=fused)
    ref_scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
    scaler = torch.amp.GradScaler("ocl", init_scale=1024.0, growth_interval=2)
    # (Not the first step: torch's fused SGD creates its momentum buffers uninitialised before a
    # first step that found_inf then skips, on every device.)
    for step, poison in enumerate([False, True, False, False, True, False, False]):
        x, y = data(step)
        for model, o, s, device in ((cpu, ref_opt, ref_scaler, "cpu"), (dev, opt, scaler, DEVICE)):
            o.zero_grad()
            s.scale(F.cross_entropy(model(x.to(device)), y.to(device))).backward()
            if poison:
                model.fc.weight.grad[0, 0] = float("inf")
            before = [p.detach().cpu().clone() for p in model.parameters()]
            s.step(o)
            s.update()
            after = [p.detach().cpu() for p in model.parameters()]
            changed = any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))
            assert changed != poison
        assert scaler.get_scale() == ref_scaler.get_scale()
        assert scaler._growth_tracker.item() == ref_scaler._growth_tracker.item()
    assert scaler.get_scale() == 1024.0  # 1024 -> 512 -> 1024 -> 512 -> 1024
    for p, q in zip(cpu.parameters(), dev.parameters(), strict=True):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5)
