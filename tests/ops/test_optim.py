"""torch.optim on ocl against the same optimizer on the CPU in float64, over several steps.

PyTorch picks the foreach implementation for our device (it lists PrivateUse1 in
torch.utils._foreach_utils._get_foreach_kernels_supported_devices); fused=True runs our
_fused_adam_/_fused_adamw_/_fused_sgd_/_fused_adagrad_ (PrivateUse1 is among
torch.optim.optimizer._get_fused_kernels_supported_devices). Every step runs without a CPU
fallback (tests/ops sets the fallback to raise) and without a host wait, in a few multi-tensor
launches. clip_grad_norm_ (foreach and not) is checked the same way."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, make_cpu, skip_unsupported
from torch import optim

SHAPES = ((8, 3, 3, 3), (8,), (16, 8), (16,), (1,), (3, 0), (4097,), (5, 7))
STEPS = 3

FOREACH = {
    "sgd": (optim.SGD, dict(lr=0.1)),
    "sgd_momentum_nesterov_wd": (
        optim.SGD,
        dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    ),
    "sgd_dampening_maximize": (
        optim.SGD,
        dict(lr=0.05, momentum=0.5, dampening=0.3, maximize=True),
    ),
    "adam": (optim.Adam, dict(lr=0.01)),
    "adam_wd_amsgrad": (optim.Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    "adam_capturable": (optim.Adam, dict(lr=0.01, capturable=True)),
    "adamw": (optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    "adamw_amsgrad_maximize": (optim.AdamW, dict(lr=0.01, amsgrad=True, maximize=True)),
    "rmsprop": (optim.RMSprop, dict(lr=0.01)),
    "rmsprop_centered_momentum_wd": (
        optim.RMSprop,
        dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1),
    ),
    "adagrad": (optim.Adagrad, dict(lr=0.1)),
    "adagrad_decay_wd": (
        optim.Adagrad,
        dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1),
    ),
}

FUSED = {
    "adam": (optim.Adam, dict(lr=0.01)),
    "adam_wd_amsgrad_maximize": (
        optim.Adam,
        dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True),
    ),
    "adamw": (optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    "adamw_amsgrad": (optim.AdamW, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    "sgd": (optim.SGD, dict(lr=0.1)),
    "sgd_momentum_nesterov_wd": (
        optim.SGD,
        dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    ),
    "sgd_dampening_maximize": (
        optim.SGD,
        dict(lr=0.05, momentum=0.5, dampening=0.3, maximize=True),
    ),
    "adagrad": (optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
}

# Parameters after STEPS steps against the same optimizer on the CPU in float64, except the
# foreach steps in float16/bfloat16: those round after every foreach op, so the reference is the
# CPU's foreach=True in that dtype, which rounds at the same points (a few results differ by an
# ulp: the CPU's add with alpha is one fused multiply-add). The CPU's own fused SGD is no
# reference in float16/bfloat16: in torch 2.13 its vectorised loop leaves the params unchanged
# (an SGD step with lr=0.1 is off by up to 0.29).
TOL = {
    torch.float32: dict(rtol=2e-5, atol=2e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=2e-3, atol=8e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=7e-2),
}
DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
REDUCED = (torch.float16, torch.bfloat16)


def make_params(dtype, seed=0, shapes=SHAPES, ref=torch.float64):
    """(CPU reference params in `ref`, ocl params in dtype) with equal values (rounded to
    dtype)."""
    cpu, dev = [], []
    for i, s in enumerate(shapes):
        v = make_cpu(s, dtype, seed=seed + i)
        cpu.append(v.to(ref).clone().requires_grad_())
        dev.append(v.to(DEVICE).requires_grad_())
    return cpu, dev


def set_grads(cpu, dev, step):
    """Gradients of magnitude 0.5 to 4.5: a float16 Adam's exp_avg_sq of a smaller one underflows
    (and eps=1e-8 is 0 in float16), which makes the step infinite on the CPU too."""
    for i, (p, q) in enumerate(zip(cpu, dev, strict=True)):
        g = make_cpu(p.shape, q.dtype, seed=1000 * step + i, nonzero=True)
        p.grad = g.to(p.dtype)
        q.grad = g.to(DEVICE)


def check_params(cpu, dev, tol=None):
    for p, q in zip(cpu, dev, strict=True):
        torch.testing.assert_close(
            q.detach().cpu(), p.detach().to(q.dtype), **(tol or TOL[q.dtype])
        )


def run(make, kwargs, dtype, fused=False):
    skip_unsupported(dtype)
    same_dtype = dtype in REDUCED and not fused
    cpu, dev = make_params(dtype, ref=dtype if same_dtype else torch.float64)
    # capturable=True is for devices (it keeps the steps there): the CPU runs without it
    ref_kwargs = {k: v for k, v in kwargs.items() if k != "capturable"}
    ref_kwargs.update(foreach=same_dtype)
    ref = make(cpu, **ref_kwargs)
    opt = make(dev, **kwargs, **(dict(fused=True) if fused else {}))
    for step in range(STEPS):
        set_grads(cpu, dev, step)
        ref.step()
        waits = torch.ocl.host_wait_count()
        opt.step()
        assert torch.ocl.host_wait_count() == waits, "the step waited for the device"
    tol = TOL[dtype]
    if kwargs.get("capturable") and dtype == torch.float64:
        tol = TOL[torch.float32]  # the step counts and bias corrections are float32 tensors
    check_params(cpu, dev, tol)
    return opt


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(FOREACH))
def test_foreach_optimizer(name, dtype):
    make, kwargs = FOREACH[name]
    run(make, kwargs, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(FUSED))
def test_fused_optimizer(name, dtype):
    make, kwargs = FUSED[name]
    run(make, kwargs, dtype, fused=True)


def test_foreach_is_the_default_and_uses_few_launches():
    cpu, dev = make_params(torch.float32, shapes=SHAPES * 4)
    opt = optim.Adam(dev, lr=0.01)
    set_grads(cpu, dev, 0)
    opt.step()
    launches, rows = torch.ops.ocl.multi_tensor_counts()
    opt.step()
    launches2, rows2 = torch.ops.ocl.multi_tensor_counts()
    tensors = sum(p.numel() > 0 for p in dev)
    # 7 foreach ops over the parameters, each in one or two launches
    assert rows2 - rows >= 7 * tensors
    assert launches2 - launches <= 14, f"{launches2 - launches} launches for {tensors} params"


def test_fused_with_a_tensor_lr_on_the_device():
    cpu, dev = make_params(torch.float32)
    ref = optim.Adam(cpu, lr=0.01, foreach=False)
    opt = optim.Adam(dev, lr=torch.tensor(0.01, device=DEVICE), fused=True)
    for step in range(STEPS):
        set_grads(cpu, dev, step)
        ref.step()
        waits = torch.ocl.host_wait_count()
        opt.step()
        assert torch.ocl.host_wait_count() == waits
    check_params(cpu, dev)


def test_params_of_several_dtypes_in_one_optimizer():
    c32, d32 = make_params(torch.float32, seed=1, ref=torch.float32)
    c16, d16 = make_params(torch.float16, seed=2, ref=torch.float16)
    ref = optim.AdamW(c32 + c16, lr=0.01, foreach=True)
    opt = optim.AdamW(d32 + d16, lr=0.01)
    for step in range(STEPS):
        set_grads(c32 + c16, d32 + d16, step)
        ref.step()
        opt.step()
    check_params(c32 + c16, d32 + d16, dict(rtol=2e-3, atol=8e-3))


ADAM_ARGS = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False)
SGD_ARGS = dict(weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False)


def test_fused_checks_like_cuda():
    _, dev = make_params(torch.float32, shapes=((3,), (4,)))
    grads = [torch.zeros_like(p) for p in dev]
    steps = [torch.zeros((), device=DEVICE) for _ in dev]
    m, v = [torch.zeros_like(p) for p in dev], [torch.zeros_like(p) for p in dev]
    half = [g.half() for g in grads]
    with pytest.raises(RuntimeError, match="same dtype, device, and layout"):
        torch._fused_adam_(dev, half, m, v, [], steps, **ADAM_ARGS, maximize=False)
    cpu_steps = [s.cpu() for s in steps]
    with pytest.raises(RuntimeError, match="state_steps"):
        torch._fused_adam_(dev, grads, m, v, [], cpu_steps, **ADAM_ARGS, maximize=False)
    bad = torch.zeros(2, device=DEVICE)
    with pytest.raises(RuntimeError, match="found_inf"):
        torch._fused_sgd_(
            dev, grads, [], **SGD_ARGS, maximize=False, is_first_step=False, found_inf=bad
        )


@pytest.mark.parametrize("fused", [False, True], ids=["foreach", "fused"])
def test_fused_skips_the_step_on_found_inf(fused):
    """grad_scale / found_inf as GradScaler hands them to a fused optimizer: grads are unscaled
    (written back), and nothing changes when found_inf is 1."""
    cpu, dev = make_params(torch.float32)
    opt = optim.Adam(dev, lr=0.01, fused=True)
    set_grads(cpu, dev, 0)
    before = [p.detach().clone() for p in dev]
    scale = torch.tensor(4.0, device=DEVICE)
    grads = [p.grad.clone() for p in dev]
    found = torch.tensor(1.0 if fused else 0.0, device=DEVICE)
    opt.grad_scale, opt.found_inf = scale, found
    opt.step()
    del opt.grad_scale, opt.found_inf
    for p, b, g in zip(dev, before, grads, strict=True):
        if fused:  # skipped entirely
            assert torch.equal(p.detach().cpu(), b.cpu())
            assert torch.equal(p.grad.cpu(), g.cpu())
        else:
            torch.testing.assert_close(p.grad.cpu(), g.cpu() / 4)
            assert p.numel() == 0 or not torch.equal(p.detach().cpu(), b.cpu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")], ids=str)
@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "per_tensor"])
def test_clip_grad_norm(dtype, norm_type, foreach):
    # (the infinity norm of an empty gradient raises, on the CPU as here)
    shapes = [s for s in SHAPES if 0 not in s] if norm_type == float("inf") else SHAPES
    cpu, dev = make_params(dtype, shapes=shapes)
    cpu = [p.detach().double().requires_grad_() for p in cpu]
    set_grads(cpu, dev, 0)
    total_ref = torch.nn.utils.clip_grad_norm_(cpu, 5.0, norm_type=norm_type, foreach=False)
    waits = torch.ocl.host_wait_count()
    total = torch.nn.utils.clip_grad_norm_(dev, 5.0, norm_type=norm_type, foreach=foreach)
    assert torch.ocl.host_wait_count() == waits
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else TOL[dtype]
    torch.testing.assert_close(total.cpu(), total_ref.to(total.dtype), **tol)
    for p, q in zip(cpu, dev, strict=True):
        torch.testing.assert_close(q.grad.cpu(), p.grad.to(dtype), **tol)
