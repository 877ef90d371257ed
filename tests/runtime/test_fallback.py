"""The CPU fallback for ops without a native kernel: modes, warnings, counts, results."""

from __future__ import annotations

import warnings

import pytest
import torch
from ocl_testing import DEVICE, make_cpu

# The fallback's test subjects. An op of our own with CPU kernels only (functional, out= and
# in-place forms) never gets a native kernel, unlike the aten ops this file used before (cumsum,
# then igamma: each became native and the test lost its subject). linalg_ldl_factor_ex (several
# outputs) is an aten op with no native kernel yet; if it gets one, pick another.
_LIB = torch.library.Library("ocl_fallback_test", "DEF")
_LIB.define("shift(Tensor x, float d) -> Tensor")
_LIB.define("shift.out(Tensor x, float d, *, Tensor(a!) out) -> Tensor(a!)")
_LIB.define("shift_(Tensor(a!) self, float d) -> Tensor(a!)")


def _shift_cpu(x, d):
    return torch.igamma(x.abs() + 1, x.abs() + d + 1)


def _shift_out_cpu(x, d, *, out):
    return out.resize_(x.shape).copy_(_shift_cpu(x, d))


def _shift_inplace_cpu(x, d):
    return x.copy_(_shift_cpu(x, d))


_LIB.impl("shift", _shift_cpu, "CPU")
_LIB.impl("shift.out", _shift_out_cpu, "CPU")
_LIB.impl("shift_", _shift_inplace_cpu, "CPU")

CUMSUM = "ocl_fallback_test::shift"
SORT = "aten::linalg_ldl_factor_ex"


def _sym(x):
    """A symmetric matrix from x (5 x 4), for ldl_factor."""
    return x.t() @ x + torch.eye(4, device=x.device)


def _op(t, d, **kw):
    """ocl_fallback_test::shift (CPU kernels only), its out= form with out=."""
    if "out" in kw:
        return torch.ops.ocl_fallback_test.shift.out(t, float(d), **kw)
    return torch.ops.ocl_fallback_test.shift(t, float(d))


def _fallback_warnings(record, name):
    return [w for w in record if f"'{name}" in str(w.message)]


def _count(name):
    """Fallbacks of an op, over all its overloads ('aten::igamma', 'aten::igamma.out', ...)."""
    counts = torch.ocl.fallback_counts()
    return sum(v for k, v in counts.items() if k == name or k.startswith(name + "."))


def test_error_mode_raises_naming_the_op():
    x = make_cpu((5, 4), torch.float32).to(DEVICE)
    with torch.ocl.fallback_mode("error"):
        assert torch.ocl.get_fallback_mode() == "error"
        with pytest.raises(NotImplementedError, match="ocl_fallback_test::shift"):
            _op(x, 0)
        with pytest.raises(NotImplementedError, match="linalg_ldl_factor"):
            torch.linalg.ldl_factor(_sym(x))


def test_warn_mode_warns_once_per_op_and_computes(capfd):
    x_cpu = make_cpu((5, 4), torch.float32)
    x = x_cpu.to(DEVICE)
    torch.ocl.reset_fallback_counts()
    with torch.ocl.fallback_mode("warn"), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r1 = _op(x, 0)
        r2 = _op(x, 1)
        values, indices = torch.linalg.ldl_factor(_sym(x))
        torch.linalg.ldl_factor(_sym(x) * 2)
    # An op whose CPU kernel is Python (ours) gets the warning on stderr from c10's handler up
    # to torch 2.14, and as a Python warning from 2.15 on; an aten op gets a Python warning.
    stderr = capfd.readouterr().err
    on_stderr = stderr.count(f"'{CUMSUM}' has no native ocl kernel and runs on the CPU")
    assert on_stderr + len(_fallback_warnings(record, CUMSUM)) == 1, stderr
    assert len(_fallback_warnings(record, SORT)) == 1
    msg = str(_fallback_warnings(record, SORT)[0].message)
    assert "CPU" in msg
    # The results are right and live on the device.
    assert r1.device.type == "ocl" and values.device.type == "ocl"
    torch.testing.assert_close(r1.cpu(), _op(x_cpu, 0))
    torch.testing.assert_close(r2.cpu(), _op(x_cpu, 1))
    ref_values, ref_indices = torch.linalg.ldl_factor(_sym(x_cpu))
    torch.testing.assert_close(values.cpu(), ref_values)
    torch.testing.assert_close(indices.cpu(), ref_indices)
    assert _count(CUMSUM) == 2
    assert _count(SORT) == 2


def test_counts_and_reset():
    x = torch.ones(6, device=DEVICE)
    torch.ocl.reset_fallback_counts()
    assert torch.ocl.fallback_counts() == {}
    with torch.ocl.fallback_mode("silent"):
        for _ in range(3):
            _op(x, 0)
    counts = torch.ocl.fallback_counts()
    assert _count(CUMSUM) == 3
    assert all(k.startswith(CUMSUM) for k in counts), counts
    assert all(isinstance(k, str) and isinstance(v, int) for k, v in counts.items())
    torch.ocl.reset_fallback_counts()
    assert _count(CUMSUM) == 0


def test_silent_mode_does_not_warn(capfd):
    x = make_cpu((7,), torch.float32).to(DEVICE)
    torch.ocl.reset_fallback_counts()  # a first use would warn in "warn" mode
    capfd.readouterr()
    with torch.ocl.fallback_mode("silent"), warnings.catch_warnings():
        warnings.simplefilter("error")
        r = _op(x, 0)
        torch.linalg.ldl_factor(_sym(make_cpu((5, 4), torch.float32).to(DEVICE)))
    assert r.device.type == "ocl"
    assert _count(CUMSUM) == 1
    assert "no native ocl kernel" not in capfd.readouterr().err


def test_in_place_and_out_fallback_write_back():
    x_cpu = make_cpu((4, 5), torch.float32)
    x = x_cpu.to(DEVICE)
    out = torch.empty(4, 5, device=DEVICE)
    with torch.ocl.fallback_mode("silent"):
        _op(x, 1, out=out)
        y = x.abs() + 1
        torch.ops.ocl_fallback_test.shift_(y, 2.0)
    torch.testing.assert_close(out.cpu(), _op(x_cpu, 1))
    torch.testing.assert_close(y.cpu(), _shift_cpu(x_cpu.abs() + 1, 2.0))


def test_mode_setting():
    before = torch.ocl.get_fallback_mode()
    try:
        for mode in ("warn", "silent", "error"):
            torch.ocl.set_fallback_mode(mode)
            assert torch.ocl.get_fallback_mode() == mode
        with pytest.raises(RuntimeError):
            torch.ocl.set_fallback_mode("loud")
    finally:
        torch.ocl.set_fallback_mode(before)
    with torch.ocl.fallback_mode("silent"):
        pass
    assert torch.ocl.get_fallback_mode() == before


@pytest.mark.parametrize("mode", ["warn", "silent", "error"])
def test_view_ops_are_refused_in_every_mode(mode):
    """A view op (its result aliases an input) must never fall back: the CPU would return a copy,
    and writes through the "view" would not reach its base. aten::_indices (sparse-only, no
    kernel for dense tensors anywhere) reaches the fallback on a dense ocl tensor. Refusals are
    not counted as fallbacks; in-place and out= ops still fall back (above)."""
    x = torch.ones(3, 2, device=DEVICE)
    torch.ocl.reset_fallback_counts()
    with torch.ocl.fallback_mode(mode), warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before any fallback warning
        with pytest.raises(NotImplementedError) as info:
            torch.ops.aten._indices(x)
    msg = str(info.value)
    assert "aten::_indices" in msg and "view op must be native" in msg
    assert "torch-ocl bug" in msg
    assert torch.ocl.fallback_counts() == {}
    # The process stays usable.
    torch.testing.assert_close((x * 3).cpu(), torch.full((3, 2), 3.0))
