"""torch.cat on ocl (csrc/ops/Cat.cpp): shapes, dims, dtype promotion, out=, the CPU's errors,
and printing a large tensor (which concatenates slices) without any CPU fallback."""

from __future__ import annotations

import re

import pytest
import torch
from ocl_testing import DEVICE, assert_ocl_close, dtype_id, make_cpu, skip_unsupported

CASES = {
    "1d": ([(5,), (1,), (7,)], 0),
    "rows": ([(2, 3), (4, 3), (1, 3)], 0),
    "cols": ([(3, 2), (3, 5)], 1),
    "negative-dim": ([(2, 3, 4), (2, 3, 1)], -1),
    "middle": ([(2, 1, 4), (2, 6, 4), (2, 0, 4)], 1),
    "one-input": ([(3, 3)], 0),
    "empty-all": ([(0, 3), (0, 3)], 0),
    "legacy-empty-1d": ([(2, 3), (0,), (1, 3)], 0),
    "many": ([(1, 9)] * 40, 0),
    "large": ([(300, 700), (5, 700)], 0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_cat_matches_cpu(case):
    shapes, dim = CASES[case]
    xs = [make_cpu(s, torch.float32, seed=i) for i, s in enumerate(shapes)]
    got = torch.cat([x.to(DEVICE) for x in xs], dim)
    assert_ocl_close(got, torch.cat(xs, dim), exact=True)


@pytest.mark.parametrize(
    "dtypes",
    [
        (torch.float32, torch.float16),
        (torch.int64, torch.int8),
        (torch.bool, torch.uint8),
        (torch.bfloat16, torch.float64),
        (torch.int32, torch.float32),
    ],
    ids=lambda ds: "-".join(dtype_id(d) for d in ds),
)
def test_cat_promotes_dtypes_like_cpu(dtypes):
    for d in dtypes:
        skip_unsupported(d)
    xs = [make_cpu((3, 2 + i), d, seed=i) for i, d in enumerate(dtypes)]
    assert_ocl_close(torch.cat([x.to(DEVICE) for x in xs], 1), torch.cat(xs, 1), exact=True)


def test_cat_of_non_contiguous_inputs_and_channels_last():
    a = make_cpu((4, 6), torch.float32, seed=1)
    b = make_cpu((6, 4), torch.float32, seed=2).t()
    c = make_cpu((8, 6), torch.float32, seed=3)[::2]
    got = torch.cat([a.to(DEVICE), b.to(DEVICE), c.to(DEVICE)], 0)
    assert_ocl_close(got, torch.cat([a, b, c], 0), exact=True)
    x = make_cpu((2, 3, 4, 5), torch.float32, seed=4).to(memory_format=torch.channels_last)
    y = make_cpu((2, 2, 4, 5), torch.float32, seed=5).to(memory_format=torch.channels_last)
    want = torch.cat([x, y], 1)
    got = torch.cat([x.to(DEVICE), y.to(DEVICE)], 1)
    assert got.stride() == want.stride()
    assert_ocl_close(got, want, exact=True)


def test_cat_nan_inf():
    a = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0])
    got = torch.cat([a.to(DEVICE), a.to(DEVICE)]).cpu()
    torch.testing.assert_close(got, torch.cat([a, a]), equal_nan=True)
    assert torch.equal(got.signbit(), torch.cat([a, a]).signbit())


def test_cat_out_resizes_and_checks_like_cpu():
    a, b = make_cpu((2, 3), torch.float32, seed=1), make_cpu((1, 3), torch.float32, seed=2)
    out = torch.empty(0, device=DEVICE)
    torch.cat([a.to(DEVICE), b.to(DEVICE)], out=out)
    assert_ocl_close(out, torch.cat([a, b]), exact=True)
    out64 = torch.empty(3, 3, dtype=torch.float64, device=DEVICE)
    torch.cat([a.to(DEVICE), b.to(DEVICE)], out=out64)  # the CPU allows a wider out
    assert_ocl_close(out64, torch.cat([a, b]).double(), exact=True)
    with pytest.raises(Exception) as cpu_err:
        torch.cat([a, b], out=torch.empty(3, 3, dtype=torch.int64))
    with pytest.raises(cpu_err.type) as ocl_err:
        torch.cat(
            [a.to(DEVICE), b.to(DEVICE)], out=torch.empty(3, 3, dtype=torch.int64, device=DEVICE)
        )
    assert str(ocl_err.value) == str(cpu_err.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, d: torch.cat([t(2, 3), t(2, 4)], 0),
        lambda t, d: torch.cat([t(2, 3), t(2, 3)], 2),
        lambda t, d: torch.cat([], 0),
        lambda t, d: torch.cat([t(2, 3), t(3)], 0),
    ],
    ids=["size-mismatch", "bad-dim", "empty-list", "rank-mismatch"],
)
def test_cat_errors_match_cpu(call):
    """The same exception type as the CPU; the text is ATen's shared (meta, CUDA) wording, which
    differs from the CPU kernel's own for shape mismatches, so only its subject is compared."""

    def on(device):
        return lambda *s: make_cpu(s, torch.float32).to(device)

    with pytest.raises(Exception) as cpu_err:
        call(on("cpu"), "cpu")
    with pytest.raises(cpu_err.type) as ocl_err:
        call(on(DEVICE), DEVICE)
    cpu_msg, ocl_msg = str(cpu_err.value), str(ocl_err.value)
    for subject in ("Sizes of tensors must match", "Dimension out of range", "non-empty list"):
        assert (subject in cpu_msg) == (subject in ocl_msg), (cpu_msg, ocl_msg)
    assert ("dimensions" in cpu_msg) == ("dimensions" in ocl_msg), (cpu_msg, ocl_msg)


def test_cat_out_overlapping_an_input_raises_like_cpu():
    x = make_cpu((6,), torch.float32, seed=3)
    with pytest.raises(RuntimeError) as cpu_err:
        torch.cat([x[:3]], out=x[1:4])
    xo = x.to(DEVICE)
    with pytest.raises(RuntimeError) as ocl_err:
        torch.cat([xo[:3]], out=xo[1:4])
    assert str(ocl_err.value) == str(cpu_err.value)


def test_printing_a_large_tensor_runs_on_the_device():
    """Printing more than 1000 elements summarises with cat: with the fallback set to error
    (as under tests/ops) this raised before cat was native."""
    for x in (make_cpu((40, 50), torch.float32, seed=6), make_cpu((3000,), torch.float32, seed=7)):
        text = repr(x.to(DEVICE))
        assert "..." in text and "device='ocl:0'" in text
        assert re.findall(r"-?\d+\.\d+", text) == re.findall(r"-?\d+\.\d+", repr(x))


@pytest.mark.parametrize(
    "case",
    [
        "rows-40",
        "cols",
        "middle-dim",
        "channels-last",
        "channels-last-3d",
        "int8",
        "bool",
        "float64",
        "stack",
        "with-empty",
    ],
)
def test_cat_of_many_inputs_is_one_launch(case):
    # Dense inputs in the result's memory order and dtype are copied by multi-tensor launches
    # (kernels/foreach.cl cat_copy): one for a few inputs, one per table-full of them (at least
    # 16 rows a table) for many.
    dtype, dim, fmt, op = torch.float32, 0, None, torch.cat
    shapes = [(1 + i % 3, 5) for i in range(40)]
    if case == "cols":
        shapes, dim = [(7, 1 + i) for i in range(6)], 1
    elif case == "middle-dim":
        shapes, dim = [(3, 2 + i, 5) for i in range(4)], 1
    elif case == "channels-last":
        shapes, dim, fmt = [(2, 1 + i, 3, 5) for i in range(3)], 1, torch.channels_last
    elif case == "channels-last-3d":
        shapes, dim, fmt = [(2, 2, 3, 1 + i, 2) for i in range(3)], 3, torch.channels_last_3d
    elif case in ("int8", "bool", "float64"):
        dtype = {"int8": torch.int8, "bool": torch.bool, "float64": torch.float64}[case]
        shapes, dim = [(4, 3 + i) for i in range(5)], 1
    elif case == "stack":
        shapes, dim, op = [(3, 4)] * 7, 1, torch.stack
    elif case == "with-empty":
        shapes = [(2, 5), (0, 5), (3, 5), (0,), (1, 5)]
    skip_unsupported(dtype)
    xs = [make_cpu(s, dtype, seed=i) for i, s in enumerate(shapes)]
    if fmt is not None:
        xs = [x.to(memory_format=fmt) for x in xs]
    ds = [x.to(DEVICE) for x in xs]
    launches = torch.ops.ocl.multi_tensor_counts()[0]
    got = op(ds, dim)
    used = torch.ops.ocl.multi_tensor_counts()[0] - launches
    assert 1 <= used <= max(1, len(shapes) // 16), used
    want = op(xs, dim)
    assert got.stride() == want.stride()
    assert_ocl_close(got, want, exact=True)


def test_cat_of_mixed_layouts_copies_each_input():
    # A transposed input is not dense in the result's order: every input is copied on its own
    # (no multi-tensor launch), with the same result.
    a = make_cpu((5, 4), torch.float32, seed=1)
    b = make_cpu((4, 5), torch.float32, seed=2).t()
    launches = torch.ops.ocl.multi_tensor_counts()[0]
    got = torch.cat([a.to(DEVICE), b.to(DEVICE)], 0)
    assert torch.ops.ocl.multi_tensor_counts()[0] == launches
    assert_ocl_close(got, torch.cat([a, b], 0), exact=True)
