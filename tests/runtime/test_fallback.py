"""The CPU fallback for ops without a native kernel: modes, warnings, counts, results."""

from __future__ import annotations

import warnings

import pytest
import torch
from ocl_testing import DEVICE, make_cpu

# Ops that have no native ocl kernel (the test picks them because they are unlikely to get one
# soon; if one does, pick another).
# Ops with no native kernel yet (the fallback's test subjects): igamma (one output, out=,
# in-place) and linalg_ldl_factor_ex (several outputs; linalg_qr was this until it got one).
CUMSUM = "aten::igamma"
SORT = "aten::linalg_ldl_factor_ex"


def _sym(x):
    """A symmetric matrix from x (5 x 4), for ldl_factor."""
    return x.t() @ x + torch.eye(4, device=x.device)


def _op(t, d, **kw):
    """igamma on positive arguments that depend on d (a stand-in for an op with a dim)."""
    return torch.igamma(t.abs() + 1, t.abs() + d + 1, **kw)


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
        with pytest.raises(NotImplementedError, match="igamma"):
            _op(x, 0)
        with pytest.raises(NotImplementedError, match="linalg_ldl_factor"):
            torch.linalg.ldl_factor(_sym(x))


def test_warn_mode_warns_once_per_op_and_computes():
    x_cpu = make_cpu((5, 4), torch.float32)
    x = x_cpu.to(DEVICE)
    torch.ocl.reset_fallback_counts()
    with torch.ocl.fallback_mode("warn"), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r1 = _op(x, 0)
        r2 = _op(x, 1)
        values, indices = torch.linalg.ldl_factor(_sym(x))
        torch.linalg.ldl_factor(_sym(x) * 2)
    assert len(_fallback_warnings(record, CUMSUM)) == 1
    assert len(_fallback_warnings(record, SORT)) == 1
    msg = str(_fallback_warnings(record, CUMSUM)[0].message)
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


def test_silent_mode_does_not_warn():
    x = make_cpu((7,), torch.float32).to(DEVICE)
    torch.ocl.reset_fallback_counts()  # a first use would warn in "warn" mode
    with torch.ocl.fallback_mode("silent"), warnings.catch_warnings():
        warnings.simplefilter("error")
        r = _op(x, 0)
    assert r.device.type == "ocl"
    assert _count(CUMSUM) == 1


def test_in_place_and_out_fallback_write_back():
    x_cpu = make_cpu((4, 5), torch.float32)
    x = x_cpu.to(DEVICE)
    out = torch.empty(4, 5, device=DEVICE)
    with torch.ocl.fallback_mode("silent"):
        _op(x, 1, out=out)
        y = x.abs() + 1
        y.igamma_(x.abs() + 1)
    torch.testing.assert_close(out.cpu(), _op(x_cpu, 1))
    torch.testing.assert_close(y.cpu(), torch.igamma(x_cpu.abs() + 1, x_cpu.abs() + 1))


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
