"""PyTorch's OpInfo database through torch.compile (Inductor) on ocl: the generated OpenCL C kernels
against eager PyTorch on the CPU.

As PyTorch's own test/inductor/test_torchinductor_opinfo.py does for its devices, each selected op
is wrapped in a function, compiled with ``torch.compile(fn, backend="inductor", fullgraph=True,
dynamic=False)`` after ``torch._dynamo.reset()`` (a fresh compilation for every sample), and run on
the OpInfo sample inputs; the result is compared with the same op run eagerly on the CPU on equal
values (and, where that differs, with a float64 CPU result rounded to the dtype, as
tests/ops/test_opinfo.py does), with the per-dtype tolerances of tests/ocl_testing.py. The CPU
fallback is set to "error" while the compiled function runs: an extern call to an op without a
native kernel raises instead of running on the host.

Selected ops (``SELECTED``): the pointwise and reduction ops of ``op_db`` - every UnaryUfuncInfo,
BinaryUfuncInfo and ReductionOpInfo, the other OpInfos whose aten op carries
``torch.Tag.pointwise``, and the composite reductions listed in ``COMPOSITE_REDUCTIONS``
(softmax, normalisations, losses, ...), which Inductor lowers to reduction kernels.

Outcomes of a sample, worst first: "wrong" (values, dtype, shape or device differ), "error" (the
compiled function raised where the CPU returned), "refused" (the OpenCL code generator refused
something, naming it: OclCodegenError), "not native" (an extern call fell back to the CPU),
"dynamo" (Dynamo could not capture the op in one graph: not ocl's), "error differs" (both raised,
differently). A test fails with its worst outcome; inductor_opinfo_expected.py lists the expected
ones with reasons, as ``xfail(strict=True, raises=<kind>)``: a test that starts to pass, or fails
in another way, fails.

Modes (TORCH_OCL_COMPILE_OPINFO):
  default  the ops of ``DEFAULT_SLICE`` (one or more of each kind of generated code), float32 and
           float16, the first sample. A few minutes on 2 cores.
  full     every selected op, float32 and float16, the first sample (as PyTorch's own test);
           marked slow; ``nox -s compile-opinfo`` runs it.
TORCH_OCL_COMPILE_OPINFO_SAMPLES=N samples per test (0: all; each compiles anew);
TORCH_OCL_COMPILE_OPINFO_OPS=a,b restricts the run to these ops (OpInfo full names);
TORCH_OCL_COMPILE_OPINFO_REPORT=path appends one JSON line per test with its outcome.
"""

from __future__ import annotations

import json
import os
import re
import warnings

import pytest
import torch
import torch.testing._internal.common_device_type as common_device_type
import torch.testing._internal.common_utils as common_utils
from ocl_testing import TOLERANCES, ocl_available
from torch.testing._internal.common_device_type import (
    OpDTypes,
    instantiate_device_type_tests,
    ops,
)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase
from torch.testing._internal.opinfo.core import (
    BinaryUfuncInfo,
    DecorateInfo,
    ReductionOpInfo,
    UnaryUfuncInfo,
)
from torch.utils._pytree import tree_flatten, tree_map

from torch_ocl._inductor.runtime import launch_count

from . import inductor_opinfo_expected as expected

# The failing test's own exception type must survive for xfail(raises=...) (PyTorch's helpers
# would re-raise it as a plain Exception carrying the sample).
common_device_type.PRINT_REPRO_ON_FAILURE = False
common_utils.PRINT_REPRO_ON_FAILURE = False

MODE = os.environ.get("TORCH_OCL_COMPILE_OPINFO", "default").strip().lower() or "default"
if MODE not in ("default", "full"):
    raise ValueError(f"TORCH_OCL_COMPILE_OPINFO={MODE!r}: use 'default' or 'full'")
FULL = MODE == "full"

_samples_env = os.environ.get("TORCH_OCL_COMPILE_OPINFO_SAMPLES", "").strip()
MAX_SAMPLES = (int(_samples_env) or None) if _samples_env else 1

_ops_env = os.environ.get("TORCH_OCL_COMPILE_OPINFO_OPS", "").strip()
ONLY_OPS = {name.strip() for name in _ops_env.split(",") if name.strip()} or None

REPORT = os.environ.get("TORCH_OCL_COMPILE_OPINFO_REPORT", "").strip() or None

DTYPES = [torch.float32, torch.float16]

if FULL:
    pytestmark = pytest.mark.slow


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# --------------------------------------------------------------------------------------------
# Which ops: pointwise and reductions

# OpInfos that are not Unary/Binary/ReductionOpInfo and whose aten op has no pointwise tag, but
# which Inductor lowers to reduction kernels (with pointwise work fused around them).
COMPOSITE_REDUCTIONS = {
    "softmax",
    "softmax.with_dtype",
    "log_softmax",
    "log_softmax.with_dtype",
    "nn.functional.softmin",
    "nn.functional.softmin.with_dtype",
    "masked.softmax",
    "masked.log_softmax",
    "masked.softmin",
    "masked.normalize",
    "logsumexp",
    "var_mean",
    "var_mean.unbiased",
    "std_mean",
    "std_mean.unbiased",
    "aminmax",
    "norm",
    "norm.fro",
    "norm.inf",
    "dist",
    "trace",
    "nn.functional.normalize",
    "nn.functional.cosine_similarity",
    "nn.functional.pairwise_distance",
    "nn.functional.layer_norm",
    "native_layer_norm",
    "nn.functional.rms_norm",
    "nn.functional.group_norm",
    "native_group_norm",
    "nn.functional.batch_norm",
    "native_batch_norm",
    "nn.functional.instance_norm",
    "nn.functional.mse_loss",
    "nn.functional.l1_loss",
    "nn.functional.smooth_l1_loss",
    "nn.functional.huber_loss",
    "nn.functional.soft_margin_loss",
    "nn.functional.binary_cross_entropy",
    "nn.functional.binary_cross_entropy_with_logits",
    "nn.functional.kl_div",
    "nn.functional.poisson_nll_loss",
    "nn.functional.gaussian_nll_loss",
    "nn.functional.hinge_embedding_loss",
    "nn.functional.margin_ranking_loss",
    "nn.functional.cross_entropy",
    "nn.functional.nll_loss",
    # pointwise in Inductor (decomposed) without the tag on their aten op
    "nn.functional.glu",
    "nn.functional.hardswish",
}


def _has_pointwise_tag(op) -> bool:
    packet = getattr(torch.ops.aten, op.aten_name or op.name, None)
    if packet is None or not hasattr(packet, "overloads"):
        return False
    return any(torch.Tag.pointwise in getattr(packet, o).tags for o in packet.overloads())


def _is_pointwise_or_reduction(op) -> bool:
    if isinstance(op, (UnaryUfuncInfo, BinaryUfuncInfo, ReductionOpInfo)):
        return True
    return op.full_name in COMPOSITE_REDUCTIONS or _has_pointwise_tag(op)


SELECTED = [op for op in op_db if _is_pointwise_or_reduction(op)]

# The default run: a slice that reaches each kind of code the generator writes (math built-ins,
# special functions, integer-style division and remainders of floats, comparisons, where/masked
# bodies, casts, multi-input pointwise ops; sum/prod/max/argmax/any reductions, Welford, softmax
# and normalisation patterns, losses).
DEFAULT_SLICE = {
    "add",
    "mul",
    "div.floor_rounding",
    "remainder",
    "pow",
    "sin",
    "exp",
    "sigmoid",
    "erfinv",
    "special.i0e",
    "nn.functional.gelu",
    "where",
    "clamp",
    "lerp",
    "addcmul",
    "eq",
    "maximum",
    "sum",
    "prod",
    "amax",
    "argmax",
    "any",
    "var",
    "softmax",
    "log_softmax",
    "logsumexp",
    "nn.functional.layer_norm",
    "nn.functional.cross_entropy",
}


def _selected(op) -> bool:
    if ONLY_OPS is not None:
        return op.full_name in ONLY_OPS
    return FULL or op.full_name in DEFAULT_SLICE


# --------------------------------------------------------------------------------------------
# Outcomes: one exception type per kind of failure, so that xfail(raises=...) checks the kind.


class CompiledOpInfoFailure(AssertionError):
    kind = "failure"


class WrongResult(CompiledOpInfoFailure):
    kind = "wrong"


class CompileError(CompiledOpInfoFailure):
    kind = "error"


class Refused(CompiledOpInfoFailure):
    kind = "refused"


class NotNative(CompiledOpInfoFailure):
    kind = "not native"


class DynamoUnsupported(CompiledOpInfoFailure):
    kind = "dynamo"


class ErrorDiffers(CompiledOpInfoFailure):
    kind = "error differs"


FAILURE_TYPES = {
    t.kind: t for t in (WrongResult, CompileError, Refused, NotNative, DynamoUnsupported)
}
FAILURE_TYPES["error differs"] = ErrorDiffers
SEVERITY = {
    "wrong": 6,
    "error": 5,
    "refused": 4,
    "not native": 3,
    "dynamo": 2,
    "error differs": 1,
    "pass": 0,
}


def _chain(exc: BaseException):
    """exc and the exceptions it wraps (Dynamo wraps the backend's error in
    BackendCompilerFailed / InductorError)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = getattr(exc, "inner_exception", None) or exc.__cause__ or exc.__context__


def _first_line(msg: str, limit: int = 200) -> str:
    lines = [line for line in msg.strip().splitlines() if line.strip()]
    line = lines[0].strip() if lines else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


_FALLBACK_RE = re.compile(
    r"the operator '([^']+)' (?:has no native ocl kernel|\(.*\) is a view op)"
)


def _classify(exc: BaseException) -> tuple[str, str]:
    """(kind, detail) of an exception raised by the compiled function."""
    from torch._dynamo.exc import Unsupported, UserError

    from torch_ocl._inductor.errors import OclCodegenError

    for e in _chain(exc):
        if isinstance(e, OclCodegenError):
            detail = str(e).split(". Use torch.compile")[0]
            return "refused", detail.removeprefix("torch-ocl: torch.compile's OpenCL code ")
        if isinstance(e, NotImplementedError):
            m = _FALLBACK_RE.search(str(e))
            if m:
                return "not native", m.group(1)
    for e in _chain(exc):
        if isinstance(e, (Unsupported, UserError)):
            return "dynamo", f"{type(e).__name__}: {_first_line(str(e))}"
    inner = list(_chain(exc))[-1]
    return "error", f"{type(inner).__name__}: {_first_line(str(inner))}"


# --------------------------------------------------------------------------------------------
# Samples and references


def _samples(op, dtype, device):
    """(cpu args, cpu kwargs, ocl args, ocl kwargs) of the first MAX_SAMPLES samples, made on the
    device as PyTorch's tests do (the fallback allowed: making samples is not under test)."""
    torch.manual_seed(0)
    with torch.ocl.fallback_mode("silent"):
        gen = iter(op.sample_inputs(device, dtype, requires_grad=False))
    count = 0
    while MAX_SAMPLES is None or count < MAX_SAMPLES:
        with torch.ocl.fallback_mode("silent"):
            try:
                sample = next(gen)
            except StopIteration:
                return
            count += 1
            args = (sample.input, *sample.args)
            kwargs = dict(sample.kwargs)
            cpu_args, cpu_kwargs = tree_map(_to_cpu, (args, kwargs))
        yield cpu_args, cpu_kwargs, args, kwargs


def _to_cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu")
    if isinstance(x, torch.device) and x.type == "ocl":
        return torch.device("cpu")
    if isinstance(x, str) and re.fullmatch(r"ocl(:\d+)?", x):
        return "cpu"
    return x


def _to_float64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.float64)
    return x


def _tolerance(op_name: str, dtype: torch.dtype) -> tuple[float, float]:
    override = expected.TOLERANCES.get((op_name, dtype_name(dtype)))
    return override[:2] if override is not None else TOLERANCES[dtype]


def _mismatch(actual, ref, op_name: str, *, values: bool = True) -> str | None:
    """None when the compiled result matches the CPU's, else what differs."""
    leaves, spec = tree_flatten(actual)
    ref_leaves, ref_spec = tree_flatten(ref)
    if spec != ref_spec:
        return f"structure {spec} != expected {ref_spec}"
    for i, (a, e) in enumerate(zip(leaves, ref_leaves, strict=True)):
        where = f"output {i}: " if len(leaves) > 1 else ""
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return f"{where}got {type(a).__name__}, expected a tensor"
            if a.device.type != "ocl":
                return f"{where}result on {a.device}, expected ocl"
            if a.dtype != e.dtype:
                return f"{where}dtype {dtype_name(a.dtype)}, expected {dtype_name(e.dtype)}"
            if a.shape != e.shape:
                return f"{where}shape {tuple(a.shape)}, expected {tuple(e.shape)}"
            if not values:
                continue
            got = a.detach().cpu()
            rtol, atol = _tolerance(op_name, e.dtype) if e.is_floating_point() else (0.0, 0.0)
            try:
                torch.testing.assert_close(got, e, rtol=rtol, atol=atol, equal_nan=True)
            except AssertionError as exc:
                return where + _summary(got, e, exc)
        elif isinstance(e, float) and isinstance(a, float):
            if not (a == e or (a != a and e != e) or abs(a - e) <= 1e-5 + 1e-5 * abs(e)):
                return f"{where}{a!r} != expected {e!r}"
        elif a != e:
            return f"{where}{a!r} != expected {e!r}"
    return None


def _summary(got: torch.Tensor, ref: torch.Tensor, exc: AssertionError) -> str:
    m = re.search(r"Mismatched elements: (\d+) / (\d+)", str(exc))
    count = f"{m.group(1)}/{m.group(2)} elements differ" if m else "values differ"
    if got.is_floating_point() and got.numel():
        g, r = got.double(), ref.double()
        finite = g.isfinite() & r.isfinite()
        diff = (g - r).abs()[finite]
        worst = diff.max().item() if diff.numel() else 0.0
        nans = (g.isnan() != r.isnan()).sum().item()
        return f"{count}, max abs diff {worst:.3g}" + (f", {nans} NaN mismatches" if nans else "")
    return count


def _round_like(ref64, like):
    """The float64 result rounded to the dtypes of the same-dtype CPU result (None when the
    structures differ)."""
    leaves, spec = tree_flatten(ref64)
    like_leaves, like_spec = tree_flatten(like)
    if spec != like_spec:
        return None
    out = [
        r.to(t.dtype) if isinstance(r, torch.Tensor) and isinstance(t, torch.Tensor) else r
        for r, t in zip(leaves, like_leaves, strict=True)
    ]
    from torch.utils._pytree import tree_unflatten

    return tree_unflatten(out, spec)


def _is_random(func, args, kwargs) -> bool:
    """Whether the op's result depends on the random state (two CPU runs from different seeds
    differ): only shapes, dtypes and devices are compared then (Inductor's random numbers are
    not eager's on any device)."""
    outs = []
    try:
        for seed in (0, 1):
            torch.manual_seed(seed)
            outs.append(func(*args, **kwargs))
    except Exception:  # noqa: BLE001
        return False
    a, b = (tree_flatten(o)[0] for o in outs)
    return any(
        isinstance(x, torch.Tensor) and not torch.equal(x, y) and not (x.isnan() & y.isnan()).all()
        for x, y in zip(a, b, strict=False)
        if isinstance(y, torch.Tensor) and x.shape == y.shape
    )


# --------------------------------------------------------------------------------------------
# One sample


def _run_sample(op, cpu_args, cpu_kwargs, args, kwargs) -> tuple[str, str]:
    func = op.get_op()

    def fn(*a, **k):
        return func(*a, **k)

    try:
        torch.manual_seed(0)
        ref = func(*cpu_args, **cpu_kwargs)
        cpu_exc = None
    except Exception as exc:  # noqa: BLE001  (the CPU's error is what ocl must give)
        ref, cpu_exc = None, exc
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="inductor", fullgraph=True, dynamic=False)
    try:
        with torch.ocl.fallback_mode("error"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            actual = compiled(*args, **kwargs)
            for t in tree_flatten(actual)[0]:
                if isinstance(t, torch.Tensor) and t.device.type == "ocl":
                    t.cpu()  # errors recorded on the device surface at the next wait
        ocl_exc = None
    except Exception as exc:  # noqa: BLE001
        actual, ocl_exc = None, exc
    if ocl_exc is not None:
        kind, detail = _classify(ocl_exc)
        if cpu_exc is not None:
            if kind == "error" and type(list(_chain(ocl_exc))[-1]) is type(cpu_exc):
                return "pass", ""
            if kind == "error":
                return "error differs", f"cpu {type(cpu_exc).__name__}; compiled {detail}"
        return kind, detail
    if cpu_exc is not None:
        return "error differs", f"compiled returned, cpu raised {type(cpu_exc).__name__}"
    random = _is_random(func, cpu_args, cpu_kwargs)
    bad = _mismatch(actual, ref, op.full_name, values=not random)
    if bad is None:
        return "pass", ""
    try:
        torch.manual_seed(0)
        args64, kwargs64 = tree_map(_to_float64, (cpu_args, cpu_kwargs))
        ref64 = _round_like(func(*args64, **kwargs64), ref)
    except Exception:  # noqa: BLE001
        return "wrong", bad
    bad64 = _mismatch(actual, ref64, op.full_name) if ref64 is not None else "no float64 result"
    if bad64 is None:
        return "pass", ""
    return "wrong", f"{bad} (against float64 rounded to the dtype: {bad64})"


# --------------------------------------------------------------------------------------------
# The test


def _report(record) -> None:
    if REPORT is not None:
        with open(REPORT, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _check(op, dtype, device) -> None:
    key = (op.full_name, dtype_name(dtype))
    skip = expected.SKIPS.get(op.full_name) or expected.SKIPS.get(key)
    if skip:
        _report({"op": key[0], "dtype": key[1], "status": "skip", "detail": skip})
        pytest.skip(skip)
    before = launch_count()
    outcomes = [_run_sample(op, *sample) for sample in _samples(op, dtype, device)]
    # generated kernels launched (0 when every node became an extern call or a view)
    record = {"op": key[0], "dtype": key[1], "samples": len(outcomes)}
    record["launches"] = launch_count() - before
    if not outcomes:
        record.update(status="skip", detail="no samples")
        _report(record)
        pytest.skip("the OpInfo has no samples for this dtype")
    worst = max(outcomes, key=lambda o: SEVERITY[o[0]])[0]
    first = next(i for i, o in enumerate(outcomes) if o[0] == worst)
    record.update(status=worst, first=first, detail=outcomes[first][1])
    _report(record)
    if worst == "pass":
        return
    lines = [f"{len(outcomes)} samples; worst: {worst}"]
    lines += [f"  sample {i}: {k}: {d}" for i, (k, d) in enumerate(outcomes) if k != "pass"]
    raise FAILURE_TYPES[worst]("\n".join(lines))


def _expectations(op):
    """xfail(strict, raises=<kind>) for the (op, dtype) pairs of inductor_opinfo_expected.py
    whose first failing sample is among the samples run."""
    marks = []
    for dtype in DTYPES:
        entry = expected.EXPECTED.get((op.full_name, dtype_name(dtype)))
        if entry is None:
            continue
        first, kind, reason = entry
        if MAX_SAMPLES is not None and first >= MAX_SAMPLES:
            continue
        mark = pytest.mark.xfail(strict=True, raises=FAILURE_TYPES[kind], reason=reason)
        marks.append(DecorateInfo(mark, "TestCompiledOpInfo", "test_compiled", dtypes=(dtype,)))
    return tuple(marks)


def _prepared_ops():
    """Copies of the selected OpInfos (op_db itself is left alone) whose only decorators are
    our expectations (PyTorch's own target its own test classes)."""
    import copy

    result = []
    for op in SELECTED:
        if _selected(op):
            mine = copy.copy(op)
            mine.decorators = _expectations(op)
            result.append(mine)
    return result


OPS = _prepared_ops()


class TestCompiledOpInfo(TestCase):
    if OPS:  # (@ops refuses an empty list, as TORCH_OCL_COMPILE_OPINFO_OPS may leave)

        @ops(OPS, dtypes=OpDTypes.supported, allowed_dtypes=DTYPES)
        def test_compiled(self, device, dtype, op):
            _check(op, dtype, device)


instantiate_device_type_tests(TestCompiledOpInfo, globals(), only_for=("privateuse1",))

if not ocl_available():

    def test_compiled_opinfo_needs_a_device():
        pytest.skip("no OpenCL device: " + torch.ocl.why_unavailable())
