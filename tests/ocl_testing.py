"""Helpers shared by the op and runtime tests: the default device, dtype lists, the `shapes`
layout cases, input makers and comparison with PyTorch on the CPU (float64 references where
rounding matters). tests/conftest.py re-exports them and adds the fixtures.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import sys
from collections.abc import Callable

import pytest
import torch

import torch_ocl  # noqa: F401  (registers the ocl device; autoload only covers installed packages)

DEVICE = torch.device("ocl")

FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + (torch.bool,)

# Tolerances for a float result compared with a float64 CPU reference rounded to its dtype.
# float32: OpenCL's full-profile built-ins (exp, tanh, ...) are within a few ulp.
TOLERANCES = {
    torch.float64: (1e-12, 1e-12),
    torch.float32: (1e-5, 1e-6),
    torch.float16: (2e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.complex128: (1e-12, 1e-12),  # complex: the tolerances of the parts' dtype
    torch.complex64: (1e-5, 1e-6),
}


def ocl_available() -> bool:
    return torch.ocl.is_available()


def device_properties():
    return torch.ocl.get_device_properties()


def supports_dtype(dtype: torch.dtype) -> bool:
    """Whether the default device can hold and compute `dtype` (fp16/bf16 storage works anywhere:
    the kernels compute in float)."""
    if dtype == torch.float64:
        return device_properties().supports_fp64
    return True


def on_simulator() -> bool:
    """True on Oclgrind, where every kernel runs in an interpreter (False without a device)."""
    if not ocl_available():
        return False
    props = device_properties()
    return "oclgrind" in (props.platform + " " + props.name).lower()


PYTHON = sys.executable


# --------------------------------------------------------------------------------------------
# Inputs


def make_cpu(shape, dtype, *, low=None, high=None, seed=0, nonzero=False, integral=False):
    """A deterministic CPU tensor of `shape` and `dtype`.

    Values lie in [low, high) (default [-4, 4) for floats, [-10, 10] for integers, so that int8
    products do not overflow); `nonzero` moves values away from zero (divisors), `integral`
    rounds floats to whole numbers (ties for comparisons, exact sums)."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
        return torch.ones(shape, dtype=torch.bool) if nonzero else t
    if dtype.is_floating_point:
        lo = -4.0 if low is None else float(low)
        hi = 4.0 if high is None else float(high)
        t = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
        if integral:
            t = t.round()
        if nonzero:
            t = torch.where(t < 0, t - 0.5, t + 0.5)
        return t.to(dtype)
    lo = -10 if low is None else int(low)
    hi = 11 if high is None else int(high)
    if dtype == torch.uint8:
        lo = max(lo, 0)
    t = torch.randint(lo, hi, shape, generator=g, dtype=torch.int64)
    if nonzero:
        t = torch.where(t == 0, torch.ones_like(t), t)
    return t.to(dtype)


def _identity(t):
    return t


def _transpose(t):
    return t.transpose(0, 1)


def _step(t):
    return t[:, ::2]


@dataclasses.dataclass(frozen=True)
class Shape:
    """A layout case: operands are made with `bases` shapes, on the CPU and (with the same
    values) on the device, and then passed through `view` on both sides, so non-contiguous
    cases are non-contiguous on the device too."""

    id: str
    bases: tuple
    view: Callable = _identity
    slow: bool = False

    def make(self, dtype, n=1, **kwargs):
        """n pairs (cpu, ocl) with equal values and equal layouts; kwargs go to make_cpu (a
        different seed per operand)."""
        seed = kwargs.pop("seed", 0)
        pairs = []
        for k in range(n):
            base = make_cpu(self.bases[k % len(self.bases)], dtype, seed=seed + k, **kwargs)
            pairs.append((self.view(base), self.view(base.to(DEVICE))))
        return pairs


LARGE = 2**20 + 7

shapes = [
    Shape("empty", ((0,),)),
    Shape("empty_3x0", ((3, 0),)),
    Shape("one", ((1,),)),
    Shape("zero_dim", ((),)),
    Shape("odd_7x13", ((7, 13),)),
    Shape("transposed", ((13, 7),), _transpose),
    Shape("step_slice", ((7, 26),), _step),
    Shape("broadcast_5x1_1x7", ((5, 1), (1, 7))),
    Shape("large", ((LARGE,),), slow=True),
]


def shape_params(cases=None):
    """pytest params for `shapes` (the large one marked slow)."""
    out = []
    for s in cases if cases is not None else shapes:
        marks = (pytest.mark.slow,) if s.slow else ()
        out.append(pytest.param(s, id=s.id, marks=marks))
    return out


def dtype_id(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def skip_unsupported(dtype):
    if not supports_dtype(dtype):
        pytest.skip(f"{dtype_id(dtype)} is not supported by {device_properties().name}")


# --------------------------------------------------------------------------------------------
# Comparison with the CPU


def assert_ocl_close(actual, expected, *, exact=False, rtol=None, atol=None, equal_nan=True):
    """`actual` (an ocl tensor) equals `expected` (a CPU tensor): same dtype, shape and values.
    Floats use per-dtype tolerances unless `exact`; NaNs compare equal by default."""
    assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual)}"
    assert actual.device.type == "ocl", f"result is on {actual.device}, expected ocl"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != expected {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != expected {expected.shape}"
    got = actual.cpu()
    if exact or not (expected.dtype.is_floating_point or expected.dtype.is_complex):
        torch.testing.assert_close(got, expected, rtol=0, atol=0, equal_nan=equal_nan)
        return
    d_rtol, d_atol = TOLERANCES[expected.dtype]
    torch.testing.assert_close(
        got,
        expected,
        rtol=d_rtol if rtol is None else rtol,
        atol=d_atol if atol is None else atol,
        equal_nan=equal_nan,
    )


def _upcast(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != torch.float64:
        return x.to(torch.float64)
    if isinstance(x, torch.Tensor) and x.dtype == torch.complex64:
        return x.to(torch.complex128)
    return x


def cpu_reference(fn, cpu_args, *, ref64=True):
    """fn on the CPU; with ref64, floats are computed in float64 and rounded to the dtype that
    PyTorch gives for the original dtypes."""
    expected = fn(*cpu_args)
    if (
        ref64
        and isinstance(expected, torch.Tensor)
        and (expected.is_floating_point() or expected.is_complex())
    ):
        precise = fn(*[_upcast(a) for a in cpu_args])
        expected = precise.to(expected.dtype)
    return expected


def check_op(fn, cpu_args, ocl_args, *, ref64=True, exact=False, rtol=None, atol=None):
    """Runs fn on both argument lists and compares the ocl result with the CPU reference."""
    expected = cpu_reference(fn, cpu_args, ref64=ref64)
    actual = fn(*ocl_args)
    assert_ocl_close(actual, expected, exact=exact, rtol=rtol, atol=atol)
    return actual, expected


def _fnv1a64(data: bytes) -> int:
    h = 14695981039346656037
    for byte in data:
        h ^= byte
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def tuning_line(value: str, key: str) -> str:
    """A line of the device's tuning file (runtime/Tuning.h: "<value>\\t<key>\\t<checksum>")."""
    return f"{value}\t{key}\t{_fnv1a64((value + chr(9) + key).encode()):016x}\n"


def parse_tuning_lines(text: str) -> list[tuple[str, str]]:
    """(value, key) of each well-formed line of a tuning file, in order."""
    out = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and tuning_line(parts[0], parts[1]) == line + "\n":
            out.append((parts[0], parts[1]))
    return out


def child_python_env() -> dict[str, str]:
    """A copy of os.environ for a child Python that imports torch_ocl from this checkout (its
    PYTHONPATH passed through, the package's parent directory added)."""
    env = dict(os.environ)
    here = str(pathlib.Path(torch_ocl.__file__).resolve().parent.parent)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if here not in parts:
        parts.insert(0, here)
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env
