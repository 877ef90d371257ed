"""Op-by-op check of a real network's training step: every aten op the step runs on ocl is run
again on the CPU, in float64 and in float32, on copies of the very inputs the ocl op received.

An end-to-end comparison of a network with a float64 reference is at the mercy of conditioning:
a ReLU input that rounds to +1e-6 on one device and -1e-6 on the other passes a gradient on one
and not the other, and batch norm over a handful of values amplifies that. Checked op by op, each
op starts from the same inputs, so there is nothing to amplify and the tolerance can stay tight:
an output may differ from float64 by REL_TOL of its norm, or by 3x what CPU torch's float32 op
differs by, whichever is larger.

What this cannot see: an op whose output is right when it is made and overwritten later (the
check reads every output at once, which also orders everything). The end-to-end test in
test_models.py covers that.
"""

from __future__ import annotations

import dataclasses

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

REL_TOL = 1e-5

# Ops whose result is random or undefined (compared by the tests of those ops, not here).
SKIP = ("empty", "bernoulli", "rand", "native_dropout", "uniform", "normal")

# Ops that exist only for PrivateUse1 backends: the CPU has no kernel to rerun them with.
# tests/ops/test_attention.py compares them with the CPU's math path of the same attention.
DEVICE_ONLY = (
    "aten._scaled_dot_product_fused_attention_overrideable.default",
    "aten._scaled_dot_product_fused_attention_overrideable_backward.default",
)


@dataclasses.dataclass
class Mismatch:
    index: int  # the op's position in the step
    op: str
    output: int
    error: float  # relative to the float64 result's norm
    cpu_error: float  # CPU torch float32's own error, the same way
    shapes: list

    def __str__(self) -> str:
        return (
            f"op #{self.index} {self.op} output {self.output}: relative error {self.error:.2e} "
            f"(CPU float32: {self.cpu_error:.2e}), input shapes {self.shapes}"
        )


def _to_cpu(dtype):
    def convert(x):
        if isinstance(x, torch.Tensor):
            y = x.detach().cpu().clone()
            return y.to(dtype) if dtype is not None and y.is_floating_point() else y
        if isinstance(x, torch.device) and x.type != "cpu":
            return torch.device("cpu")
        return x

    return convert


def _floor(func, args) -> float:
    """An absolute error that counts as zero for this op's outputs. Batch norm's saved mean is
    the only one needed: of a batch-normalised input (the output of a bias-free conv after batch
    norm) it is ~1e-9 in exact arithmetic, and CPU torch accumulates it in double, so its float32
    result has no error to scale by. A float32 sum of N values of size s is off by ~1e-7 s."""
    if "batch_norm" in str(func):
        x = args[0]
        return 1e-6 * x.double().pow(2).mean().sqrt().item() * x.shape[1] ** 0.5
    return 0.0


class OpByOpCheck(TorchDispatchMode):
    """with OpByOpCheck() as check: <step on ocl>; then check.mismatches lists the bad outputs."""

    def __init__(self):
        super().__init__()
        self.count = 0
        self.mismatches: list[Mismatch] = []
        self.unchecked: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func)
        if any(s in name for s in SKIP) or name in DEVICE_ONLY:
            return func(*args, **kwargs)
        args64, kwargs64 = tree_map(_to_cpu(torch.float64), (args, kwargs))
        args32, kwargs32 = tree_map(_to_cpu(None), (args, kwargs))
        out = func(*args, **kwargs)
        self.count += 1
        try:
            ref64 = func(*args64, **kwargs64)
            ref32 = func(*args32, **kwargs32)
        except (RuntimeError, NotImplementedError) as e:  # an op the CPU does not have
            self.unchecked.append(f"{name}: {str(e).splitlines()[0]}")
            return out
        floor = _floor(func, args64)
        outs, _ = tree_flatten(out)
        for i, (o, r, c) in enumerate(
            zip(outs, tree_flatten(ref64)[0], tree_flatten(ref32)[0], strict=True)
        ):
            if not isinstance(o, torch.Tensor) or not isinstance(r, torch.Tensor):
                continue
            self._compare(name, i, o.detach().cpu(), r, c, floor, args)
        return out

    def _compare(self, name, i, o, r, c, floor, args):
        if not o.is_floating_point():
            if not torch.equal(o, r):
                self._record(name, i, float("inf"), 0.0, args)
            return
        o, r, c = o.double(), r.double(), c.double()
        if not torch.equal(torch.isnan(o), torch.isnan(r)) or not torch.equal(o.isinf(), r.isinf()):
            self._record(name, i, float("inf"), 0.0, args)
            return
        finite = torch.isfinite(r)
        if not torch.equal(o[~finite], r[~finite]):  # infinities of the same sign
            self._record(name, i, float("inf"), 0.0, args)
            return
        o, r, c = o[finite], r[finite], c[finite]
        scale = r.norm().item()
        err, cpu_err = (o - r).norm().item(), (c - r).norm().item()
        if err > max(REL_TOL * scale, 3 * cpu_err, floor):
            self._record(name, i, err / max(scale, 1e-30), cpu_err / max(scale, 1e-30), args)

    def _record(self, name, i, err, cpu_err, args):
        shapes = [
            tuple(t.shape) + (() if t.is_contiguous() else ("strided",))
            for t in tree_flatten(args)[0]
            if isinstance(t, torch.Tensor)
        ]
        self.mismatches.append(Mismatch(self.count, name, i, err, cpu_err, shapes))
