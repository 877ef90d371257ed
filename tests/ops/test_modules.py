"""PyTorch's ModuleInfo database (`torch.testing._internal.common_modules.module_db`) as a
torch-ocl test suite: every nn.Module that PyTorch describes there, run on ocl and on the CPU.

The tests are instantiated for the ocl device through PyTorch's own machinery
(`instantiate_device_type_tests` with `PrivateUse1TestBase` and the `@modules` decorator): test
names read `test_forward_nn_Linear_ocl_float32`; a module whose train and eval modes differ
(`train_and_eval_differ`) gets `..._nn_BatchNorm1d_train_mode_ocl_float32` and `..._eval_mode_...`
(the others run in train mode only, as in PyTorch's test_modules.py).

For each ModuleInput sample (float32):
  * the module is constructed on the CPU with a fixed seed and converted to float32 (a lazy
    module is materialised by a forward on the CPU first); the float32 CPU module is copied with
    copy.deepcopy and the copy moved to ocl with .to("ocl"), and a float64 copy is made with
    .double(), so all three have the same parameters and buffers;
  * the forward inputs are made on the CPU and copied to ocl (and to float64 for the reference);
  * test_forward compares the outputs and the module's buffers after the forward (BatchNorm's
    running statistics) with the CPU's float32 result and with the float64 reference rounded to
    float32: a value passes when it is within tolerance of either (the CPU's own float32 is not
    exact), with TOLERANCES[float32] of tests/ocl_testing.py, loosened per module only in
    modules_expected.TOLERANCES. In eval mode the forward runs without autograd, as inference
    does (the Transformer layers' and MultiheadAttention's fast paths need that);
  * test_backward (float inputs made with requires_grad, and the parameters) backpropagates the
    same random output gradient, made on the CPU, on every device and compares the gradients of
    every input and every parameter the same way.
A module that is random (its output differs between two CPU runs with different seeds, or it is
listed in modules_expected.METADATA_ONLY) is compared by structure, dtype, shape and device only.

The CPU fallback is set to "error" under tests/ops (tests/conftest.py): an op with no native ocl
kernel raises NotImplementedError, which counts as "not native". Every sample of a test runs,
even after one failed; the test fails with the worst outcome (wrong result > error > error differs
> not native), raised as the matching exception type. Known failures are listed in
modules_expected.py and become xfail(strict=True, raises=<type>), as in test_opinfo.py: a module
that becomes native fails as XPASS(strict), and a known failure that changes kind fails too.

Modes (TORCH_OCL_MODULES):
  default  every module, the first 2 samples (about 1.5 minutes on 2 cores).
  full     every module, every sample; marked slow (run with `-m slow`; about 4.5 minutes).
TORCH_OCL_MODULES_SAMPLES=N overrides the number of samples per test (0: all);
TORCH_OCL_MODULES_ONLY=nn.Linear,nn.Conv2d restricts the run to these modules;
TORCH_OCL_MODULES_REPORT=path appends one JSON line per test with its outcome.
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
from ocl_testing import TOLERANCES, ocl_available
from torch.nn.utils.rnn import PackedSequence
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_modules import module_db, modules
from torch.testing._internal.common_utils import TestCase
from torch.testing._internal.opinfo.core import DecorateInfo

from . import modules_expected as expected

# --------------------------------------------------------------------------------------------
# Configuration

# PyTorch's test helpers may re-raise a failing test's exception as a plain Exception with a
# repro: the exception's type must survive for xfail(raises=...).
common_device_type.PRINT_REPRO_ON_FAILURE = False
common_utils.PRINT_REPRO_ON_FAILURE = False

MODE = os.environ.get("TORCH_OCL_MODULES", "default").strip().lower() or "default"
if MODE not in ("default", "full"):
    raise ValueError(f"TORCH_OCL_MODULES={MODE!r}: use 'default' or 'full'")
FULL = MODE == "full"

_samples_env = os.environ.get("TORCH_OCL_MODULES_SAMPLES", "").strip()
if _samples_env:
    MAX_SAMPLES = int(_samples_env) or None
else:
    MAX_SAMPLES = None if FULL else 2

_only_env = os.environ.get("TORCH_OCL_MODULES_ONLY", "").strip()
ONLY = {name.strip() for name in _only_env.split(",") if name.strip()} or None

REPORT = os.environ.get("TORCH_OCL_MODULES_REPORT", "").strip() or None

# PyTorch's own warnings about module_db's samples (their settings, not ocl's).
pytestmark = [
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning"),
    pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss:UserWarning"),
    pytest.mark.filterwarnings("ignore:linear_cross_entropy. ``options`` ignored:UserWarning"),
]
if FULL:
    pytestmark.append(pytest.mark.slow)

DTYPE = torch.float32
DEVICE = torch.device("ocl")


# --------------------------------------------------------------------------------------------
# Outcomes: one exception type per kind of failure, so that xfail(raises=...) checks the kind.


class ModuleFailure(AssertionError):
    kind = "failure"


class NotNative(ModuleFailure):
    kind = "not native"


class ErrorDiffers(ModuleFailure):
    kind = "error differs"


class OclError(ModuleFailure):
    kind = "error"


class WrongResult(ModuleFailure):
    kind = "wrong"


# Worst first: a test raises the worst outcome among its samples.
SEVERITY = {"wrong": 4, "error": 3, "error differs": 2, "not native": 1, "pass": 0}
FAILURE_TYPES = {
    "wrong": WrongResult,
    "error": OclError,
    "error differs": ErrorDiffers,
    "not native": NotNative,
}

_FALLBACK_RE = re.compile(
    r"the operator '([^']+)' (?:has no native ocl kernel|\(.*\) is a view op)"
)


def _first_line(msg: str, limit: int = 160) -> str:
    line = msg.strip().splitlines()[0] if msg.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_first_line(str(exc))}"


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
        return f"aten::{m.group(1)}"
    return None


class _Outcome:
    def __init__(self, status, detail=""):
        self.status = status
        self.detail = detail


# --------------------------------------------------------------------------------------------
# Modules, copies and inputs


def _mode(training: bool) -> str:
    return "train" if training else "eval"


def _samples(module_info, training, requires_grad):
    """The ModuleInputs with a forward input (the first MAX_SAMPLES), made on the CPU."""
    torch.manual_seed(0)
    inputs = module_info.module_inputs_func(
        module_info, device="cpu", dtype=DTYPE, requires_grad=requires_grad, training=training
    )
    inputs = [mi for mi in inputs if mi.forward_input is not None]
    return inputs if MAX_SAMPLES is None else inputs[:MAX_SAMPLES]


def _copy_tree(x, convert, memo=None):
    """x with every tensor replaced by convert(tensor) (a new leaf keeping requires_grad); a
    tensor met twice is converted once (the same object on every side: MultiheadAttention's
    fast path looks at `query is key`). PackedSequence's batch_sizes stays on the CPU."""
    if memo is None:
        memo = {}
    if isinstance(x, torch.Tensor):
        if id(x) not in memo:
            with torch.no_grad():
                memo[id(x)] = convert(x.detach()).requires_grad_(x.requires_grad)
        return memo[id(x)]
    if isinstance(x, PackedSequence):
        return PackedSequence(
            _copy_tree(x.data, convert, memo),
            x.batch_sizes,
            _copy_tree(x.sorted_indices, convert, memo),
            _copy_tree(x.unsorted_indices, convert, memo),
        )
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_copy_tree(v, convert, memo) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_copy_tree(v, convert, memo) for v in x)
    if isinstance(x, dict):
        return {k: _copy_tree(v, convert, memo) for k, v in x.items()}
    return x


def _same(t):
    return t.clone()


def _to_ocl(t):
    return t.to(DEVICE)


def _to_float64(t):
    return t.to(torch.float64) if t.is_floating_point() else t.clone()


def _inputs(forward_input, convert):
    """(args, kwargs) of a forward input, copied with convert (a fresh copy per run: a module
    may change its input in place)."""
    memo = {}
    args = _copy_tree(tuple(forward_input.args), convert, memo)
    kwargs = _copy_tree(dict(forward_input.kwargs), convert, memo)
    return args, kwargs


def _input_tensors(args, kwargs):
    out = []
    for _, t, _ in _leaves((args, kwargs), "input"):
        if isinstance(t, torch.Tensor) and t.requires_grad and all(t is not u for u in out):
            out.append(t)
    return out


def _construct(module_info, module_input, training):
    """The float32 CPU module with a fixed seed, in train or eval mode; a lazy module is
    materialised by a forward on the CPU."""
    ci = module_input.constructor_input
    torch.manual_seed(0)
    m = module_info.module_cls(*ci.args, **ci.kwargs)
    # As PyTorch's test_modules.py does (m.to(device).to(dtype)): float buffers made in another
    # dtype by the ModuleInputs (FractionalMaxPool's float64 _random_samples) follow the module.
    m.to(DTYPE)
    m.train(training)
    if isinstance(m, torch.nn.modules.lazy.LazyModuleMixin) and m.has_uninitialized_params():
        args, kwargs = _inputs(module_input.forward_input, _same)
        with torch.no_grad():
            m(*args, **kwargs)
    return m


def _ocl_copy(m):
    return copy.deepcopy(m).to(DEVICE)


def _float64_copy(m):
    return copy.deepcopy(m).double()


# --------------------------------------------------------------------------------------------
# Comparison


def _leaves(x, path):
    """(path, value, must_be_on_ocl) for every leaf of a module's output or input."""
    if isinstance(x, PackedSequence):
        yield from _leaves(x.data, f"{path}.data")
        yield f"{path}.batch_sizes", x.batch_sizes, False
        yield from _leaves(x.sorted_indices, f"{path}.sorted_indices")
        yield from _leaves(x.unsorted_indices, f"{path}.unsorted_indices")
    elif isinstance(x, torch.Tensor):
        yield path, x, True
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from _leaves(v, f"{path}[{i}]")
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{path}[{k!r}]")
    else:
        yield path, x, False


def _tolerance(module_name, which):
    override = expected.TOLERANCES.get((module_name, which)) or expected.TOLERANCES.get(module_name)
    if override is not None:
        return override[0], override[1]
    return TOLERANCES[DTYPE]


def _summarise(got, ref, exc) -> str:
    msg = str(exc)
    if got.is_floating_point() and ref.is_floating_point() and got.numel() > 0:
        g, r = got.to(torch.float64), ref.to(torch.float64)
        nan_diff = (g.isnan() != r.isnan()).sum().item()
        finite = g.isfinite() & r.isfinite()
        diff = (g - r).abs()[finite]
        worst = diff.max().item() if diff.numel() else 0.0
        m = re.search(r"Mismatched elements: (\d+) / (\d+)", msg)
        parts = [f"{m.group(1)}/{m.group(2)} elements differ" if m else "values differ"]
        parts.append(f"max abs diff {worst:.3g}")
        if nan_diff:
            parts.append(f"{nan_diff} NaN mismatches")
        return ", ".join(parts)
    for line in msg.splitlines():
        if "Mismatched elements" in line:
            return "values differ: " + line.strip()
    return _first_line(msg)


def _value_mismatch(got, ref, rtol, atol) -> str | None:
    """None when CPU tensor `got` equals `ref` (in got's dtype) within tolerance."""
    ref = ref.detach().to(got.dtype)
    if not got.is_floating_point():
        rtol, atol = 0.0, 0.0
    try:
        torch.testing.assert_close(got, ref, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as exc:
        return _summarise(got, ref, exc)
    return None


def _mismatch(actual, cpu, ref64, tol, *, metadata_only=False) -> str | None:
    """None when every leaf of `actual` (the ocl result: [(path, value, on_ocl)]) matches the
    CPU float32 leaf `cpu` or the float64 reference leaf (ref64() computes it when needed)."""
    if [p for p, _, _ in actual] != [p for p, _, _ in cpu]:
        return f"structure {[p for p, _, _ in actual]} != expected {[p for p, _, _ in cpu]}"
    ref_leaves = None
    for i, ((path, a, on_ocl), (_, e, _)) in enumerate(zip(actual, cpu, strict=True)):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return f"{path}: got {type(a).__name__}, expected a tensor"
            want = "ocl" if on_ocl else "cpu"
            if a.device.type != want:
                return f"{path}: on {a.device}, expected {want}"
            if a.dtype != e.dtype:
                return f"{path}: dtype {a.dtype}, expected {e.dtype}"
            if a.shape != e.shape:
                return f"{path}: shape {tuple(a.shape)}, expected {tuple(e.shape)}"
            if metadata_only:
                continue
            got = a.detach().cpu()
            bad = _value_mismatch(got, e, *tol)
            if bad is None:
                continue
            if ref_leaves is None:
                ref_leaves = ref64()
            r = ref_leaves[i][1] if ref_leaves is not None else None
            if isinstance(r, torch.Tensor) and r.shape == e.shape:
                if _value_mismatch(got, r, *tol) is None:
                    continue
            return f"{path}: {bad}"
        if isinstance(e, float) and isinstance(a, float):
            if not (a == e or (a != a and e != e) or abs(a - e) <= 1e-5 + 1e-5 * abs(e)):
                return f"{path}: {a!r} != expected {e!r}"
        elif a != e and not metadata_only:
            return f"{path}: {a!r} != expected {e!r}"
    return None


def _sync(leaves):
    """Waits for the device results (errors recorded on the device surface here)."""
    for _, t, _ in leaves:
        if isinstance(t, torch.Tensor) and t.device.type == "ocl":
            t.cpu()


# --------------------------------------------------------------------------------------------
# Running one sample


def _forward_leaves(m, forward_input, convert, seed=0):
    """The output's leaves and the buffers after the forward. In eval mode the forward runs
    without autograd, as inference does (the Transformer layers' and MultiheadAttention's fast
    paths need that)."""
    args, kwargs = _inputs(forward_input, convert)
    torch.manual_seed(seed)
    with torch.set_grad_enabled(m.training):
        out = m(*args, **kwargs)
    leaves = list(_leaves(out, "output"))
    leaves += [(f"buffer {n}", b, True) for n, b in m.named_buffers()]
    return leaves


def _is_random(name, base, forward_input) -> bool:
    """Whether two CPU runs with different seeds give different results."""
    if name in expected.METADATA_ONLY:
        return True
    try:
        first = _forward_leaves(copy.deepcopy(base), forward_input, _same)
        second = _forward_leaves(copy.deepcopy(base), forward_input, _same, seed=1)
    except Exception:  # noqa: BLE001  (the CPU's own error is reported by the caller)
        return False
    for (_, a, _), (_, b, _) in zip(first, second, strict=False):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if a.shape != b.shape or not torch.equal(a.detach(), b.detach()):
                if not (a.is_floating_point() and a.detach().isnan().any()):
                    return True
    return False


def _outcome_of_errors(cpu_exc, ocl_exc) -> _Outcome | None:
    """The outcome when either side raised (None when neither did)."""
    if ocl_exc is not None:
        native = _not_native_reason(ocl_exc)
        if native is not None and not isinstance(cpu_exc, NotImplementedError):
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
    return None


def _run_forward(name, module_info, module_input, training) -> _Outcome:
    fi = module_input.forward_input
    try:
        base = _construct(module_info, module_input, training)
        cpu = _forward_leaves(copy.deepcopy(base), fi, _same)
        cpu_exc = None
    except Exception as exc:  # noqa: BLE001  (the CPU's error is what ocl must give)
        base, cpu, cpu_exc = None, None, exc
    if base is None:
        return _Outcome("cpu error", _error_text(cpu_exc))
    metadata_only = cpu_exc is None and _is_random(name, base, fi)
    try:
        actual = _forward_leaves(_ocl_copy(base), fi, _to_ocl)
        _sync(actual)
        ocl_exc = None
    except Exception as exc:  # noqa: BLE001
        actual, ocl_exc = None, exc
    errors = _outcome_of_errors(cpu_exc, ocl_exc)
    if errors is not None:
        return errors

    def ref64():
        try:
            return _forward_leaves(_float64_copy(base), fi, _to_float64)
        except Exception:  # noqa: BLE001
            return None

    tol = _tolerance(name, "forward")
    bad = _mismatch(actual, cpu, ref64, tol, metadata_only=metadata_only)
    return _Outcome("pass") if bad is None else _Outcome("wrong", bad)


def _grads(m, forward_input, convert, grad_outputs=None):
    """[(name, gradient)] of every input that requires grad and every parameter, for the
    output gradients grad_outputs (made on the CPU with a fixed seed when None, then returned
    too; converted with `convert` otherwise)."""
    args, kwargs = _inputs(forward_input, convert)
    torch.manual_seed(0)
    out = m(*args, **kwargs)
    outs = [t for _, t, _ in _leaves(out, "output") if isinstance(t, torch.Tensor)]
    outs = [t for t in outs if t.requires_grad]
    if grad_outputs is None:
        g = torch.Generator().manual_seed(1)
        grad_outputs = [torch.randn(t.shape, generator=g, dtype=t.dtype) for t in outs]
    grads = [convert(g.to(t.dtype)) for g, t in zip(grad_outputs, outs, strict=True)]
    inputs = _input_tensors(args, kwargs)
    names = [f"grad of input {i}" for i in range(len(inputs))]
    params = [(n, p) for n, p in m.named_parameters() if p.requires_grad]
    names += [f"grad of {n}" for n, _ in params]
    wrt = inputs + [p for _, p in params]
    if not outs or not wrt:
        return None, grad_outputs
    result = torch.autograd.grad(outs, wrt, grads, allow_unused=True)
    return [(n, g, True) for n, g in zip(names, result, strict=True)], grad_outputs


def _run_backward(name, module_info, module_input, training) -> _Outcome:
    fi = module_input.forward_input
    try:
        base = _construct(module_info, module_input, training)
        cpu, grad_outputs = _grads(copy.deepcopy(base), fi, _same)
    except Exception as exc:  # noqa: BLE001
        return _Outcome("cpu error", _error_text(exc))
    if cpu is None:
        return _Outcome("no grad", "no output, input or parameter requires grad")
    try:
        actual, _ = _grads(_ocl_copy(base), fi, _to_ocl, grad_outputs)
        _sync(actual)
        ocl_exc = None
    except Exception as exc:  # noqa: BLE001
        actual, ocl_exc = None, exc
    errors = _outcome_of_errors(None, ocl_exc)
    if errors is not None:
        return errors
    for (path, a, _), (_, e, _) in zip(actual, cpu, strict=True):
        if (a is None) != (e is None):
            return _Outcome("wrong", f"{path}: {a is None=} but {e is None=}")

    def ref64():
        try:
            return _grads(_float64_copy(base), fi, _to_float64, grad_outputs)[0]
        except Exception:  # noqa: BLE001
            return None

    tol = _tolerance(name, "backward")
    metadata_only = name in expected.METADATA_ONLY
    bad = _mismatch(actual, cpu, ref64, tol, metadata_only=metadata_only)
    return _Outcome("pass") if bad is None else _Outcome("wrong", bad)


# --------------------------------------------------------------------------------------------
# The test body shared by forward and backward


def _report(record):
    if REPORT is None:
        return
    with open(REPORT, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _check(module_info, training, which):
    name = module_info.name
    key = (name, _mode(training), which)
    skip = expected.SKIPS.get(name) or expected.SKIPS.get(key)
    if skip:
        _report({"module": name, "mode": key[1], "pass": which, "status": "skip", "detail": skip})
        pytest.skip(skip)
    run = _run_forward if which == "forward" else _run_backward
    outcomes = []
    for index, module_input in enumerate(_samples(module_info, training, which == "backward")):
        outcome = run(name, module_info, module_input, training)
        if module_input.desc:
            outcome.detail = f"[{module_input.desc}] {outcome.detail}"
        outcomes.append((index, outcome))
    counted = [(i, o) for i, o in outcomes if o.status in SEVERITY]
    record = {
        "module": name,
        "mode": key[1],
        "pass": which,
        "samples": len(outcomes),
        "outcomes": [[i, o.status, o.detail] for i, o in outcomes if o.status != "pass"],
    }
    if not counted:
        reason = "; ".join(sorted({f"{o.status}: {o.detail}" for _, o in outcomes}))
        record["status"] = "skip"
        record["detail"] = reason or "no samples"
        _report(record)
        pytest.skip(reason or "no samples")
    worst = max(counted, key=lambda io: SEVERITY[io[1].status])[1].status
    first = min(i for i, o in counted if o.status == worst)
    record["status"] = worst
    record["first"] = first
    record["detail"] = next(o.detail for i, o in counted if o.status == worst)
    _report(record)
    if worst == "pass":
        return
    lines = [f"{len(outcomes)} samples; worst: {worst}"]
    for i, o in outcomes:
        if o.status != "pass":
            lines.append(f"  sample {i}: {o.status}: {o.detail}")
    raise FAILURE_TYPES[worst]("\n".join(lines))


# --------------------------------------------------------------------------------------------
# Module selection and expectations


def _expectation_decorators(module_info):
    """xfail(strict, raises=<kind>) per (mode, pass) listed in modules_expected.py, for the
    worst failure kind whose first failing sample is among the samples run."""
    result = []
    for which in ("forward", "backward"):
        for training in (True, False):
            key = (module_info.name, _mode(training), which)
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
            result.append(
                DecorateInfo(
                    mark,
                    "TestModules",
                    f"test_{which}",
                    active_if=lambda p, training=training: p["training"] == training,
                )
            )
    return tuple(result)


def _prepared_modules():
    """Copies of module_db's ModuleInfos (module_db is left alone) whose decorators are only
    ours: PyTorch's own skips and xfails target its test classes (TestModule)."""
    result = []
    for info in module_db:
        if ONLY is not None and info.name not in ONLY:
            continue
        mine = copy.copy(info)
        mine.decorators = _expectation_decorators(info)
        result.append(mine)
    return result


MODULES = _prepared_modules()


class TestModules(TestCase):
    # (@modules refuses nothing, but an empty list would leave the class without tests.)
    if MODULES:

        @modules(MODULES, allowed_dtypes=(DTYPE,))
        def test_forward(self, device, dtype, module_info, training):
            _check(module_info, training, "forward")

        @modules(MODULES, allowed_dtypes=(DTYPE,))
        def test_backward(self, device, dtype, module_info, training):
            _check(module_info, training, "backward")


instantiate_device_type_tests(TestModules, globals(), only_for=("privateuse1",))

if not ocl_available():
    # Without a device PyTorch's machinery instantiates no ocl class: say why instead of nothing.
    def test_modules_needs_a_device():
        pytest.skip("no OpenCL device: " + torch.ocl.why_unavailable())
