"""PyTorch's OpInfo database (`op_db`, and the _foreach_* OpInfos it keeps in separate lists) as
torch-ocl's op test suite.

Every OpInfo op is instantiated for the ocl device through PyTorch's own machinery
(`instantiate_device_type_tests` with `PrivateUse1TestBase` and the `@ops` decorator), which copes
with the renamed PrivateUse1 backend: test names read `test_forward_add_ocl_float32`.

For each op, dtype and sample input the op runs on the CPU (the reference) and on ocl, with the
CPU fallback set to "error" (tests/conftest.py does that under tests/ops), so an op without a
native kernel raises NotImplementedError and counts as "not native". Samples are generated on the
CPU and copied to the device, so both sides see equal values. Float and complex results are
compared with the CPU result in the same dtype and, where that differs, with a float64 (complex128)
CPU reference rounded to the dtype (the CPU's own float32 is not exact either), with the per-dtype
tolerances of
tests/ocl_testing.py (TOLERANCES), loosened per op only in opinfo_expected.py. test_backward
compares `torch.autograd.grad` of the float32 ops that support autograd the same way.

Every sample of a test runs, even after one failed; the test then fails with the worst outcome
(wrong result > error > error differs > not native), raised as the matching exception type below.
Known failures are listed in opinfo_expected.py and become `xfail(strict=True, raises=<type>)`:
a newly native op fails as XPASS(strict), and a known failure that changes kind (a "not native"
op that now gives wrong values) fails too. ci/opinfo_expectations.py rewrites that file from a
run's report.

Modes (TORCH_OCL_OPINFO):
  default  ops with at least one native kernel (those not in opinfo_expected.FALLBACK_ONLY_OPS),
           the first 2 samples, float32, int64 and complex64 forward, float32 backward.
  full     every op, every sample, float32, float16, bfloat16, int64, int32, uint8, bool,
           complex64 (and float64 where the device has it) forward, float32 backward; marked
           slow. `nox -s coverage` runs it.
TORCH_OCL_OPINFO_SAMPLES=N overrides the number of samples per test (0: all);
TORCH_OCL_OPINFO_DTYPES=a,b restricts the forward dtypes (backward runs when float32 is among them);
TORCH_OCL_OPINFO_OPS=a,b,c restricts the run to these ops (OpInfo full names);
TORCH_OCL_OPINFO_REPORT=path appends one JSON line per test with its outcome (read by
ci/opinfo_coverage.py and ci/opinfo_expectations.py).
"""

from __future__ import annotations

import copy
import json
import os
import re

import pytest
import torch
import torch.testing._internal.common_device_type as common_device_type
import torch.testing._internal.common_utils as common_utils
from ocl_testing import TOLERANCES, ocl_available, supports_dtype
from torch.testing._internal.common_device_type import (
    OpDTypes,
    instantiate_device_type_tests,
    ops,
)
from torch.testing._internal.common_methods_invocations import (
    foreach_binary_op_db,
    foreach_other_op_db,
    foreach_pointwise_op_db,
    foreach_reduce_op_db,
    foreach_unary_op_db,
    op_db,
)
from torch.testing._internal.common_utils import TestCase
from torch.testing._internal.opinfo.core import DecorateInfo, SampleInput
from torch.utils._pytree import tree_flatten

from . import opinfo_equivalence as equivalence
from . import opinfo_expected as expected

# --------------------------------------------------------------------------------------------
# Configuration

# PyTorch's test helpers re-raise a failing test's exception as a plain Exception carrying the
# sample input (PYTORCH_PRINT_REPRO_ON_FAILURE): the exception's type must survive for
# xfail(raises=...), and our own message already lists the failing samples.
common_device_type.PRINT_REPRO_ON_FAILURE = False
common_utils.PRINT_REPRO_ON_FAILURE = False

MODE = os.environ.get("TORCH_OCL_OPINFO", "default").strip().lower() or "default"
if MODE not in ("default", "full"):
    raise ValueError(f"TORCH_OCL_OPINFO={MODE!r}: use 'default' or 'full'")
FULL = MODE == "full"

_samples_env = os.environ.get("TORCH_OCL_OPINFO_SAMPLES", "").strip()
if _samples_env:
    MAX_SAMPLES = int(_samples_env) or None
else:
    MAX_SAMPLES = None if FULL else 2

_ops_env = os.environ.get("TORCH_OCL_OPINFO_OPS", "").strip()
ONLY_OPS = {name.strip() for name in _ops_env.split(",") if name.strip()} or None

REPORT = os.environ.get("TORCH_OCL_OPINFO_REPORT", "").strip() or None

if FULL:
    FORWARD_DTYPES = [
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.uint8,
        torch.bool,
        torch.complex64,
    ]
    if ocl_available() and supports_dtype(torch.float64):
        FORWARD_DTYPES.append(torch.float64)
else:
    FORWARD_DTYPES = [torch.float32, torch.int64, torch.complex64]
BACKWARD_DTYPES = [torch.float32]

# TORCH_OCL_OPINFO_DTYPES=float32,complex64 runs only these dtypes (forward; the backward pass
# runs when float32 is among them).
_dtypes_env = os.environ.get("TORCH_OCL_OPINFO_DTYPES", "").strip()
if _dtypes_env:
    _wanted = {name.strip() for name in _dtypes_env.split(",") if name.strip()}
    _unknown = _wanted - {str(d).removeprefix("torch.") for d in FORWARD_DTYPES}
    if _unknown:
        raise ValueError(
            f"TORCH_OCL_OPINFO_DTYPES: {sorted(_unknown)} not among this mode's dtypes"
        )
    FORWARD_DTYPES = [d for d in FORWARD_DTYPES if str(d).removeprefix("torch.") in _wanted]
    BACKWARD_DTYPES = [d for d in BACKWARD_DTYPES if d in FORWARD_DTYPES]

if FULL:
    pytestmark = pytest.mark.slow


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# --------------------------------------------------------------------------------------------
# Outcomes: one exception type per kind of failure, so that xfail(raises=...) checks the kind.


class OpInfoFailure(AssertionError):
    kind = "failure"


class NotNative(OpInfoFailure):
    kind = "not native"


class ErrorDiffers(OpInfoFailure):
    kind = "error differs"


class OclError(OpInfoFailure):
    kind = "error"


class WrongResult(OpInfoFailure):
    kind = "wrong"


# Worst first: the test raises the worst outcome among its samples.
SEVERITY = {"wrong": 4, "error": 3, "error differs": 2, "not native": 1, "pass": 0}
FAILURE_TYPES = {"wrong": WrongResult, "error": OclError, "error differs": ErrorDiffers}
FAILURE_TYPES["not native"] = NotNative

_FALLBACK_RE = re.compile(
    r"the operator '([^']+)' (?:has no native ocl kernel|\(.*\) is a view op)"
)


def _not_native_reason(exc: BaseException) -> str | None:
    """'aten::foo' for the fallback's NotImplementedError, the message for another torch-ocl
    NotImplementedError (a dtype or case a native kernel does not cover), else None."""
    if not isinstance(exc, NotImplementedError):
        return None
    msg = str(exc)
    m = _FALLBACK_RE.search(msg)
    if m:
        return m.group(1)
    if "torch-ocl" in msg:
        return _first_line(msg)
    m = re.match(r"(\w+_overrideable) not implemented", msg)
    if m:
        # ATen's default kernel for an *_overrideable op (convolution) raises this.
        return f"aten::{m.group(1)}"
    return None


def _first_line(msg: str, limit: int = 160) -> str:
    line = msg.strip().splitlines()[0] if msg.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_first_line(str(exc))}"


# --------------------------------------------------------------------------------------------
# Sample handling


def _samples(op, dtype, device, *, requires_grad=False):
    """(cpu sample, ocl sample) pairs with equal values. OpInfo makes the samples on the device,
    as PyTorch's own tests do (some samples hold tensors that must stay on the CPU, such as
    tensor_split's indices), with the fallback allowed: making samples is not under test."""
    torch.manual_seed(0)
    with torch.ocl.fallback_mode("silent"):
        gen = op.sample_inputs(device, dtype, requires_grad=requires_grad)
    count = 0
    while MAX_SAMPLES is None or count < MAX_SAMPLES:
        with torch.ocl.fallback_mode("silent"):
            try:
                dev_sample = next(gen)
            except StopIteration:
                return
            except Exception as exc:  # noqa: BLE001  (reported as this sample's outcome)
                yield exc, None
                return
            count += 1
            if _has_sparse(dev_sample):
                yield SPARSE, None
                continue
            try:
                cpu_sample = _to_cpu(dev_sample)
            except Exception as exc:  # noqa: BLE001
                yield exc, None
                continue
        yield cpu_sample, dev_sample


SPARSE = "sparse"


def _has_sparse(sample) -> bool:
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return any(isinstance(x, torch.Tensor) and x.layout != torch.strided for x in leaves)


_OCL_DEVICE_RE = re.compile(r"^ocl(:\d+)?$")


def _cpu_result_ok(sample) -> bool:
    """Whether a CPU result is right for this device sample: it asks for the CPU
    (`x.to("cpu")`), or nothing in it is on or names the device (`arange(5)` without device=)."""
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    names_cpu = any(
        (isinstance(x, torch.device) and x.type == "cpu") or (isinstance(x, str) and x == "cpu")
        for x in leaves
    )
    involves_ocl = any(
        (isinstance(x, torch.Tensor) and x.device.type == "ocl")
        or (isinstance(x, torch.device) and x.type == "ocl")
        or (isinstance(x, str) and _OCL_DEVICE_RE.match(x))
        for x in leaves
    )
    return names_cpu or not involves_ocl


def _storage_copy(t):
    """A CPU copy of device tensor `t` with its whole storage, sizes, strides and offset, so that
    ops that look past a view's elements (as_strided on a view) see the same values."""
    t = t.detach()
    if t.layout != torch.strided or t.is_contiguous() and t.storage_offset() == 0:
        return t.to("cpu")
    storage = t.untyped_storage()
    numel = storage.nbytes() // t.element_size()
    flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(storage, 0, (numel,), (1,))
    copy = flat.to("cpu").as_strided(t.shape, t.stride(), t.storage_offset())
    # The storage holds the physical values: a conjugate or negative view stays one.
    if t.is_conj():
        copy = copy.conj()
    if t.is_neg():
        copy = torch._neg_view(copy)
    return copy


def _to_cpu(sample):
    """The sample with its device tensors copied to the CPU (gradient flags kept), and the
    device named as an argument (factory functions' device=, `to`'s argument) replaced by the
    CPU."""
    cpu = torch.device("cpu")

    def move(x, key=None):
        if isinstance(x, torch.Tensor):
            if x.device.type == "cpu":
                return x
            with torch.no_grad():
                return _storage_copy(x).requires_grad_(x.requires_grad)
        if isinstance(x, torch.device) and x.type == "ocl":
            return cpu
        if isinstance(x, str) and _OCL_DEVICE_RE.match(x):
            return "cpu"
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(move(v) for v in x)
        if isinstance(x, dict):
            return {k: move(v, k) for k, v in x.items()}
        return x

    return SampleInput(
        move(sample.input),
        args=move(sample.args),
        kwargs=move(sample.kwargs),
        output_process_fn_grad=sample.output_process_fn_grad,
        broadcasts_input=sample.broadcasts_input,
        name=sample.name,
    )


def _to_float64(sample):
    """The sample in double precision: floating tensors as float64, complex as complex128."""

    def up(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64:
            return t.detach().to(torch.float64).requires_grad_(t.requires_grad)
        if isinstance(t, torch.Tensor) and t.is_complex() and t.dtype != torch.complex128:
            return t.detach().to(torch.complex128).requires_grad_(t.requires_grad)
        if isinstance(t, torch.Tensor):
            return t.detach().requires_grad_(t.requires_grad)
        return t

    return sample.transform(up)


def _call(op, sample):
    return op(sample.input, *sample.args, **sample.kwargs)


def _sample_tensors(sample):
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return [x for x in leaves if isinstance(x, torch.Tensor)]


def _odd_size1_strides(sample):
    """A copy of a device sample whose tensors are laid out contiguously except that every
    size-1 dim has a stride no layout computation gives it (such strides are arbitrary, and
    views in real models carry them: a [2, 96, 4, 1] tensor with strides (384, 4, 1, 2)), or
    None when no tensor has a size-1 dim. A kernel that steps by a size-1 dim's stride fails."""
    changed = False

    def move(x):
        nonlocal changed
        if isinstance(x, torch.Tensor):
            if x.device.type != "ocl" or x.layout != torch.strided or x.numel() == 0:
                return x
            if 1 not in x.shape:
                return x
            strides, acc = [0] * x.dim(), 1
            for d in range(x.dim() - 1, -1, -1):
                strides[d] = 5 + 2 * d if x.shape[d] == 1 else acc
                acc *= max(x.shape[d], 1)
            with torch.no_grad():
                y = torch.empty_strided(x.shape, strides, dtype=x.dtype, device=x.device)
                y.copy_(x)
            changed = True
            return y.requires_grad_(x.requires_grad)
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(move(v) for v in x)
        if isinstance(x, dict):
            return {k: move(v) for k, v in x.items()}
        return x

    with torch.ocl.fallback_mode("silent"):
        odd = copy.copy(sample)
        odd.input = move(sample.input)
        odd.args = move(tuple(sample.args))
        odd.kwargs = move(dict(sample.kwargs))
    return odd if changed else None


# --------------------------------------------------------------------------------------------
# Comparison


def _tolerance(op_name, dtype):
    override = expected.TOLERANCES.get((op_name, dtype_name(dtype)))
    if override is not None:
        return override[0], override[1]
    return _dtype_tolerance(dtype)


def _dtype_tolerance(dtype):
    """tests/ocl_testing.py's tolerance of a floating or complex dtype (complex32: its parts'
    float16 one)."""
    if dtype == torch.complex32:
        dtype = torch.float16
    return TOLERANCES[dtype]


def _round_to(ref, like):
    """ref (a float64 result) rounded to the dtypes of `like` (the same-dtype CPU result)."""
    leaves, spec = tree_flatten(ref)
    like_leaves, like_spec = tree_flatten(like)
    if spec != like_spec or len(leaves) != len(like_leaves):
        return None
    out = []
    for r, t in zip(leaves, like_leaves, strict=True):
        if isinstance(r, torch.Tensor) and isinstance(t, torch.Tensor):
            if r.shape != t.shape:
                return None
            r = r.detach().to(t.dtype)
        out.append(r)
    return out


def _mismatch(
    actual, ref_leaves, ref_spec, op_name, *, metadata_only=False, cpu_ok=False
) -> str | None:
    """None when the ocl result `actual` matches the CPU leaves, else what differs."""
    leaves, spec = tree_flatten(actual)
    if spec != ref_spec:
        return f"structure {spec} != expected {ref_spec}"
    for i, (a, e) in enumerate(zip(leaves, ref_leaves, strict=True)):
        where = f"output {i}: " if len(leaves) > 1 else ""
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return f"{where}got {type(a).__name__}, expected a tensor"
            if a.device.type != "ocl" and not (cpu_ok and a.device.type == "cpu"):
                return f"{where}result on {a.device}, expected ocl"
            if a.dtype != e.dtype:
                return f"{where}dtype {dtype_name(a.dtype)}, expected {dtype_name(e.dtype)}"
            if a.shape != e.shape:
                return f"{where}shape {tuple(a.shape)}, expected {tuple(e.shape)}"
            if metadata_only or a.layout != torch.strided or e.layout != torch.strided:
                continue
            got = a.detach().cpu()
            ref = e.detach()
            if ref.is_floating_point() or ref.is_complex():
                rtol, atol = _tolerance(op_name, ref.dtype)
            else:
                rtol, atol = 0.0, 0.0
            try:
                torch.testing.assert_close(got, ref, rtol=rtol, atol=atol, equal_nan=True)
            except AssertionError as exc:
                return where + _summarise_mismatch(got, ref, exc)
        elif isinstance(e, float) and isinstance(a, float):
            if not (a == e or (a != a and e != e) or abs(a - e) <= 1e-5 + 1e-5 * abs(e)):
                return f"{where}{a!r} != expected {e!r}"
        elif a != e and not metadata_only:
            return f"{where}{a!r} != expected {e!r}"
    return None


def _inexact(t) -> bool:
    return t.is_floating_point() or t.is_complex()


def _summarise_mismatch(got, ref, exc) -> str:
    msg = str(exc)
    if _inexact(got) and _inexact(ref) and got.numel() > 0:
        wide = torch.complex128 if got.is_complex() or ref.is_complex() else torch.float64
        g = got.to(wide)
        r = ref.to(wide)
        nan_diff = (g.isnan() != r.isnan()).sum().item()
        finite = g.isfinite() & r.isfinite()
        diff = (g - r).abs()[finite]
        worst = diff.max().item() if diff.numel() else 0.0
        bad = 0
        for line in msg.splitlines():
            m = re.search(r"Mismatched elements: (\d+) / (\d+)", line)
            if m:
                bad = f"{m.group(1)}/{m.group(2)}"
        parts = [f"{bad} elements differ" if bad else "values differ"]
        parts.append(f"max abs diff {worst:.3g}")
        if nan_diff:
            parts.append(f"{nan_diff} NaN mismatches")
        return ", ".join(parts)
    for line in msg.splitlines():
        if "Mismatched elements" in line:
            return "values differ: " + line.strip()
    return _first_line(msg)


# --------------------------------------------------------------------------------------------
# Running one sample


class _Outcome:
    def __init__(self, status, detail=""):
        self.status = status
        self.detail = detail


def _is_random(op, sample) -> bool:
    """Whether the op's outputs depend on the random state (or are uninitialised): two CPU runs
    from different generator states differ. OpInfo wraps dropout-like ops (scaled dot product
    attention with dropout_p, multi_head_attention_forward in training) in wrapper_set_seed,
    which seeds 42 before every call - so CPU and ocl, whose generators differ, each look
    deterministic; torch.manual_seed is switched off for the two runs to see through that."""
    from unittest import mock

    outs = []
    try:
        with mock.patch.object(torch, "manual_seed", lambda seed: None):
            for seed in (0, 1):
                torch.default_generator.manual_seed(seed)
                outs.append(_call(op, sample))
    except Exception:  # noqa: BLE001
        return False
    return _mismatch(outs[1], *tree_flatten(outs[0]), op.full_name, cpu_ok=True) is not None


def _run_forward(op, sample, dev_sample, dtype) -> _Outcome:
    metadata_only = op.full_name in expected.METADATA_ONLY
    try:
        torch.manual_seed(0)
        ref = _call(op, sample)
        cpu_exc = None
    except Exception as exc:  # noqa: BLE001  (the CPU's error is what ocl must give)
        ref, cpu_exc = None, exc
    if cpu_exc is None and not metadata_only and _is_random(op, sample):
        metadata_only = True
    try:
        torch.manual_seed(0)
        actual = _call(op, dev_sample)
        # Errors recorded on the device (integer division by zero) surface at the next wait.
        for t in tree_flatten(actual)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == "ocl":
                t.cpu()
        ocl_exc = None
    except Exception as exc:  # noqa: BLE001
        actual, ocl_exc = None, exc
    if ocl_exc is not None:
        native = _not_native_reason(ocl_exc)
        if cpu_exc is not None and type(cpu_exc) is type(ocl_exc) and native is None:
            return _Outcome("pass")
        if native is not None and not (
            cpu_exc is not None and isinstance(cpu_exc, NotImplementedError)
        ):
            return _Outcome("not native", native)
        if cpu_exc is not None:
            if type(cpu_exc) is type(ocl_exc):
                return _Outcome("pass")
            return _Outcome(
                "error differs", f"cpu {_error_text(cpu_exc)}; ocl {_error_text(ocl_exc)}"
            )
        return _Outcome("error", _error_text(ocl_exc))
    if cpu_exc is not None:
        return _Outcome("error differs", f"ocl returned, cpu raised {_error_text(cpu_exc)}")
    ref_leaves, ref_spec = tree_flatten(ref)
    cpu_ok = _cpu_result_ok(dev_sample)
    if not metadata_only:
        actual = equivalence.align(op.full_name, sample, actual, ref)
    bad = _mismatch(
        actual, ref_leaves, ref_spec, op.full_name, metadata_only=metadata_only, cpu_ok=cpu_ok
    )
    if bad is None:
        return _Outcome("pass")
    if not (dtype.is_floating_point or dtype.is_complex) and not any(
        isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex())
        for x in ref_leaves
    ):
        return _Outcome("wrong", bad)
    # The CPU's own rounding may be the difference: compare with float64, rounded to the dtype.
    try:
        torch.manual_seed(0)
        exact = _call(op, _to_float64(sample))
        ref64 = _round_to(exact, ref)
    except Exception:  # noqa: BLE001
        exact = ref64 = None
    if (
        ref64 is not None
        and _mismatch(actual, ref64, ref_spec, op.full_name, cpu_ok=cpu_ok) is None
    ):
        return _Outcome("pass")
    if exact is not None and _as_close_as_cpu(actual, ref_leaves, tree_flatten(exact)[0]):
        return _Outcome("pass")
    return _Outcome("wrong", bad)


# ocl may be off the double-precision result by at most this many times the CPU's own error in
# the same dtype (plus the dtype's absolute tolerance).
CPU_ERROR_FACTOR = 2.0


def _as_close_as_cpu(actual, ref_leaves, exact_leaves) -> bool:
    """Whether ocl's result is as close to the double-precision result `exact_leaves` as the CPU's
    own result `ref_leaves` in the tested dtype is (within CPU_ERROR_FACTOR), output by output.
    This is the judgment PyTorch's own reference tests make (test_ops' precise-dtype distance):
    where both miss the exact value by rounding (a gradient whose exact value cancels to zero, a
    long sum), ocl is not wrong when it misses by no more than the CPU. Non-finite values and
    non-float outputs must equal the CPU's."""
    leaves, _ = tree_flatten(actual)
    if len(leaves) != len(ref_leaves) or len(exact_leaves) != len(ref_leaves):
        return False
    for a, c, x in zip(leaves, ref_leaves, exact_leaves, strict=True):
        if not isinstance(c, torch.Tensor):
            if a != c and not (isinstance(a, float) and isinstance(c, float)):
                return False
            continue
        if not isinstance(a, torch.Tensor) or not isinstance(x, torch.Tensor):
            return False
        a = a.detach().cpu()
        c = c.detach()
        x = x.detach()
        if a.shape != c.shape or a.dtype != c.dtype or x.shape != c.shape:
            return False
        if not _inexact(c):
            if not torch.equal(a, c):
                return False
            continue
        _, atol = _dtype_tolerance(c.dtype)
        wide = torch.complex128 if c.is_complex() else torch.float64
        a, c, x = a.to(wide), c.to(wide), x.to(wide)
        # Where the exact result is not finite, or the CPU's is not, ocl must give the CPU's value.
        special = ~x.isfinite() | ~c.isfinite()
        if not torch.equal(a[special], c[special]) and not (
            torch.equal(a[special].isnan(), c[special].isnan())
            and torch.equal(a[special & ~c.isnan()], c[special & ~c.isnan()])
        ):
            return False
        rest = ~special
        if not a[rest].isfinite().all():
            return False
        if rest.any():
            err_ocl = (a[rest] - x[rest]).abs().max().item()
            err_cpu = (c[rest] - x[rest]).abs().max().item()
            if err_ocl > CPU_ERROR_FACTOR * err_cpu + atol:
                return False
    return True


def _grad_outputs(out):
    leaves, _ = tree_flatten(out)
    outs = [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]
    g = torch.Generator().manual_seed(1)
    # (complex outputs get complex gradients: randn draws both parts)
    grads = [torch.randn(t.shape, generator=g, dtype=t.dtype) for t in outs]
    return outs, grads


def _grads(op, sample, grads_like=None, device=None):
    """(inputs' gradients, the gradient outputs used) for `sample`; the gradient outputs are
    made on the CPU (or taken from grads_like, moved to `device`)."""
    torch.manual_seed(0)
    out = sample.output_process_fn_grad(_call(op, sample))
    outs, grads = _grad_outputs(out)
    if grads_like is not None:
        grads = [
            g.to(device=o.device, dtype=o.dtype) for g, o in zip(grads_like, outs, strict=False)
        ]
    inputs = [t for t in _sample_tensors(sample) if t.requires_grad]
    if not outs or not inputs:
        return None, grads
    result = torch.autograd.grad(outs, inputs, grads, allow_unused=True)
    return list(result), grads


def _run_backward(op, sample, dev_sample) -> _Outcome:
    try:
        ref, grads = _grads(op, sample)
    except Exception as exc:  # noqa: BLE001
        return _Outcome("cpu error", _error_text(exc))
    if ref is None:
        return _Outcome("no grad", "no output or input requires grad")
    try:
        actual, _ = _grads(op, dev_sample, grads, torch.device("ocl"))
        for t in actual or []:
            if t is not None:
                t.cpu()
    except Exception as exc:  # noqa: BLE001
        native = _not_native_reason(exc)
        if native is not None:
            return _Outcome("not native", native)
        return _Outcome("error", _error_text(exc))
    if actual is None or len(actual) != len(ref):
        return _Outcome("wrong", "gradients for other inputs than on the CPU")
    for i, (a, e) in enumerate(zip(actual, ref, strict=True)):
        if (a is None) != (e is None):
            return _Outcome("wrong", f"grad {i}: {a is None=} but {e is None=}")
    pairs = [(a, e) for a, e in zip(actual, ref, strict=True) if e is not None]
    ref_leaves, ref_spec = tree_flatten([e for _, e in pairs])
    act = [a for a, _ in pairs]
    metadata_only = op.full_name in expected.METADATA_ONLY or _is_random(op, sample)
    cpu_ok = any(t.device.type == "cpu" and t.requires_grad for t in _sample_tensors(dev_sample))
    bad = _mismatch(
        act, ref_leaves, ref_spec, op.full_name, metadata_only=metadata_only, cpu_ok=cpu_ok
    )
    if bad is None:
        return _Outcome("pass")
    try:
        exact, _ = _grads(op, _to_float64(sample), grads, "cpu")
        exact = [e for e, r in zip(exact, ref, strict=True) if r is not None]
        ref64 = [e.to(r.dtype) for e, r in zip(exact, ref_leaves, strict=True)]
    except Exception:  # noqa: BLE001
        exact = ref64 = None
    if ref64 is not None and _mismatch(act, ref64, ref_spec, op.full_name, cpu_ok=cpu_ok) is None:
        return _Outcome("pass")
    if exact is not None and _as_close_as_cpu(act, ref_leaves, exact):
        return _Outcome("pass")
    return _Outcome("wrong", "grad " + bad)


# --------------------------------------------------------------------------------------------
# The test body shared by forward and backward


def _report(record):
    if REPORT is None:
        return
    with open(REPORT, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _check(op, dtype, device, which):
    key = (op.full_name, dtype_name(dtype), which)
    skip = expected.SKIPS.get(op.full_name) or expected.SKIPS.get(key)
    if skip:
        _report({"op": key[0], "dtype": key[1], "pass": which, "status": "skip", "detail": skip})
        pytest.skip(skip)
    outcomes = []
    samples = _samples(op, dtype, device, requires_grad=which == "backward")
    for index, (sample, dev_sample) in enumerate(samples):
        if isinstance(sample, str) and sample == SPARSE:
            outcome = _Outcome("sparse", "sparse input")
        elif isinstance(sample, Exception):
            native = _not_native_reason(sample)
            if native is not None:
                outcome = _Outcome("not native", "making the sample on ocl: " + native)
            else:
                outcome = _Outcome("error", "making the sample on ocl: " + _error_text(sample))
        elif which == "forward":
            # float32 runs each sample a second time with odd strides on size-1 dims
            odd = _odd_size1_strides(dev_sample) if dtype == torch.float32 else None
            odd_cpu = _to_cpu(odd) if odd is not None else None
            outcome = _run_forward(op, sample, dev_sample, dtype)
            if odd is not None and outcome.status == "pass":
                again = _run_forward(op, odd_cpu, odd, dtype)
                if again.status != "pass":
                    detail = "with odd strides on size-1 dims: " + again.detail
                    outcome = _Outcome(again.status, detail)
        else:
            outcome = _run_backward(op, sample, dev_sample)
        outcomes.append((index, outcome))
    counted = [(i, o) for i, o in outcomes if o.status in SEVERITY]
    record = {
        "op": key[0],
        "dtype": key[1],
        "pass": which,
        "samples": len(outcomes),
        "outcomes": [[i, o.status, o.detail] for i, o in outcomes if o.status != "pass"],
    }
    if not counted:
        skipped = {o.status for _, o in outcomes}
        reason = "no samples"
        if outcomes:
            reason = "; ".join(sorted({f"{o.status}: {o.detail}" for _, o in outcomes}))
        if "sparse" in skipped:
            reason = "sparse out of scope (sparse input)"
        record["status"] = "skip"
        record["detail"] = reason
        _report(record)
        pytest.skip(reason)
    worst = max(counted, key=lambda io: SEVERITY[io[1].status])[1].status
    record["status"] = worst
    first = min(i for i, o in counted if o.status == worst)
    detail = next(o.detail for i, o in counted if o.status == worst)
    record["first"] = first
    record["detail"] = detail
    _report(record)
    if worst == "pass":
        return
    lines = [f"{len(outcomes)} samples; worst: {worst}"]
    for i, o in outcomes:
        if o.status != "pass":
            lines.append(f"  sample {i}: {o.status}: {o.detail}")
    raise FAILURE_TYPES[worst]("\n".join(lines))


# --------------------------------------------------------------------------------------------
# Op selection and expectations


def _expectation_decorators(op):
    """xfail(strict, raises=<kind>) per (dtype, pass) listed in opinfo_expected.py, for the
    worst failure kind whose first failing sample is among the samples run."""
    result = []
    for which, dtypes in (("forward", FORWARD_DTYPES), ("backward", BACKWARD_DTYPES)):
        test_name = f"test_{which}"
        for dtype in dtypes:
            key = (op.full_name, dtype_name(dtype), which)
            applicable = []
            for kind, table in expected.TABLES.items():
                entry = table.get(key)
                if entry is None:
                    continue
                first, reason = entry
                if MAX_SAMPLES is None or first < MAX_SAMPLES:
                    applicable.append((SEVERITY[kind], kind, reason))
            if not applicable:
                continue
            _, kind, reason = max(applicable)
            mark = pytest.mark.xfail(strict=True, raises=FAILURE_TYPES[kind], reason=reason)
            result.append(DecorateInfo(mark, "TestOpInfo", test_name, dtypes=(dtype,)))
    return tuple(result)


def _selected(op) -> bool:
    if ONLY_OPS is not None:
        return op.full_name in ONLY_OPS
    if FULL:
        return True
    return op.full_name not in expected.FALLBACK_ONLY_OPS


# op_db and the _foreach_* OpInfos (which PyTorch keeps in their own lists).
ALL_OPS = (
    op_db
    + foreach_unary_op_db
    + foreach_binary_op_db
    + foreach_pointwise_op_db
    + foreach_reduce_op_db
    + foreach_other_op_db
)


def _prepared_ops():
    """Copies of op_db's OpInfos (op_db is left alone) whose decorators are only ours: the
    expectations of opinfo_expected.py. PyTorch's own skips and xfails target its test classes
    (TestCommon, ...) and tolerances we set ourselves."""
    result = []
    for op in ALL_OPS:
        if not _selected(op):
            continue
        mine = copy.copy(op)
        mine.decorators = _expectation_decorators(op)
        result.append(mine)
    return result


OPS = _prepared_ops()
AUTOGRAD_OPS = [op for op in OPS if op.supports_autograd]


class TestOpInfo(TestCase):
    # (@ops refuses an empty op list, as TORCH_OCL_OPINFO_OPS may leave.)
    if OPS:

        @ops(OPS, dtypes=OpDTypes.supported, allowed_dtypes=FORWARD_DTYPES)
        def test_forward(self, device, dtype, op):
            _check(op, dtype, device, "forward")

    if AUTOGRAD_OPS:

        @ops(AUTOGRAD_OPS, dtypes=OpDTypes.supported_backward, allowed_dtypes=BACKWARD_DTYPES)
        def test_backward(self, device, dtype, op):
            _check(op, dtype, device, "backward")


instantiate_device_type_tests(TestOpInfo, globals(), only_for=("privateuse1",))

if not ocl_available():
    # Without a device PyTorch's machinery instantiates no ocl class: say why instead of nothing.
    def test_opinfo_needs_a_device():
        pytest.skip("no OpenCL device: " + torch.ocl.why_unavailable())
