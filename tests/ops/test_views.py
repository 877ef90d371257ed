"""View ops (csrc/ops/View.cpp and ATen's composite views) on the ocl device.

A view shares its base's memory: writes through either reach the other. Through the boxed CPU
fallback a view op would return a copy on the host instead, so (1) every ATen op whose schema
returns an alias of an input (or that changes an input's view metadata in place) must be native
for PrivateUse1 or composite, (2) the important views alias and match CPU torch on odd sizes,
non-contiguous bases, empty and 0-dim tensors, and (3) the fallback refuses a view op that has
no native kernel, in every fallback mode, instead of returning a copy.
"""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE, make_cpu

# --------------------------------------------------------------------------------------------
# 1. Every aliasing ATen op is native or composite.

# Keys whose kernel serves a PrivateUse1 tensor without the boxed fallback.
NATIVE_KEYS = (
    "PrivateUse1",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)

# Aliasing ATen ops that cannot apply to a dense ocl tensor, with the reason. On a dense ocl
# tensor they reach the fallback, which refuses them (test_aten_view_without_kernel_is_refused).
NOT_APPLICABLE = {
    "aten::_indices": "sparse COO only (no dense kernel on any device)",
    "aten::_values": "sparse COO only (no dense kernel on any device)",
    "aten::_sparse_broadcast_to": "sparse COO only (no dense kernel on any device)",
    "aten::_nested_get_values": "nested (jagged) tensors only",
    "aten::_nested_view_from_jagged": "nested (jagged) tensors only",
    "aten::_nested_view_from_buffer": "builds a nested tensor; ocl has no nested tensors",
}


def _aten_op(full_name):
    base, _, overload = full_name[len("aten::") :].partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")


def _is_view(op) -> bool:
    """A result aliasing an input without writing it (`Tensor(a)`, `Tensor(a)[]`), or the
    inplace_view tag (`unsqueeze_`, `as_strided_`, ...): what Fallback.cpp refuses."""
    if any(r.alias_info is not None and not r.alias_info.is_write for r in op._schema.returns):
        return True
    return torch.Tag.inplace_view in op.tags


def aten_view_ops():
    names = []
    for full in sorted(torch._C._dispatch_get_all_op_names()):
        if not full.startswith("aten::"):
            continue
        try:
            op = _aten_op(full)
        except (AttributeError, RuntimeError):  # not reachable from Python
            continue
        if _is_view(op):
            names.append(full)
    return names


def _native_keys(full):
    return [k for k in NATIVE_KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(full, k)]


def test_every_aten_view_op_is_native_or_composite():
    views = aten_view_ops()
    # Sanity: the enumeration finds the views it must (catches a schema API change).
    for name in ("aten::view", "aten::unfold", "aten::as_strided", "aten::unbind.int"):
        assert name in views
    assert "aten::unsqueeze_" in views and "aten::add_.Tensor" not in views
    missing = [n for n in views if n not in NOT_APPLICABLE and not _native_keys(n)]
    assert not missing, (
        f"view ops that would reach the CPU fallback on ocl (register them in "
        f"csrc/ops/View.cpp, or list them in NOT_APPLICABLE with a reason): {missing}"
    )


def test_not_applicable_table_is_current():
    views = set(aten_view_ops())
    stale = [n for n in NOT_APPLICABLE if n not in views]
    assert not stale, f"NOT_APPLICABLE names ops that are no longer aliasing ATen ops: {stale}"


@pytest.mark.parametrize("name", ["aten::view", "aten::unfold", "aten::as_strided"])
def test_backend_only_views_are_registered(name):
    # These have no composite kernel in ATen: only the ocl registration keeps them native.
    assert torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1")


# --------------------------------------------------------------------------------------------
# 2. Behaviour: aliasing and values against CPU torch.


def _tensors(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _storage(t):
    return t.untyped_storage().data_ptr()


def _check_view(fn, base_cpu):
    """fn(base) on the CPU and on ocl: the same error, or the same sizes, strides, offsets and
    values, sharing the base's storage; then writes through the base reach the views and writes
    through each view reach the base, as on the CPU."""
    base_cpu = base_cpu.clone() if base_cpu.is_contiguous() else base_cpu
    base = base_cpu.to(DEVICE) if base_cpu.is_contiguous() else _same_layout(base_cpu)
    assert base.stride() == base_cpu.stride()
    try:
        expected = _tensors(fn(base_cpu))
    except (RuntimeError, IndexError, ValueError) as e:
        with pytest.raises(type(e)):
            fn(base)
        return
    got = _tensors(fn(base))
    assert len(got) == len(expected)
    # reshape, flatten, ravel, contiguous copy when no view can express the result; where
    # CPU torch gives a view, ocl must too.
    aliases = [_storage(e) == _storage(base_cpu) for e in expected]
    for g, e, alias in zip(got, expected, aliases, strict=True):
        assert g.device.type == "ocl"
        if alias:
            assert (g.shape, g.stride(), g.storage_offset()) == (
                e.shape,
                e.stride(),
                e.storage_offset(),
            )
            assert _storage(g) == _storage(base), "the result does not share the base's storage"
        else:
            assert g.shape == e.shape and _storage(g) != _storage(base)
        torch.testing.assert_close(g.cpu(), e, rtol=0, atol=0, equal_nan=True)
    if base_cpu.numel() == 0:
        return
    # Base -> views.
    new = make_cpu(tuple(base_cpu.shape), base_cpu.dtype, seed=99)
    base_cpu.copy_(new)
    base.copy_(new.to(DEVICE))
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g.cpu(), e, rtol=0, atol=0, equal_nan=True)
    # Views -> base (fill_ for a view whose elements overlap; copy_ needs distinct elements).
    for i, (g, e, alias) in enumerate(zip(got, expected, aliases, strict=True)):
        if e.numel() == 0 or not alias:
            continue
        if torch._debug_has_internal_overlap(e) == 0:
            new = make_cpu(tuple(e.shape), e.dtype, seed=10 + i)
            e.copy_(new)
            g.copy_(new.to(DEVICE))
        else:
            value = True if e.dtype == torch.bool else -7 - i
            e.fill_(value)
            g.fill_(value)
    torch.testing.assert_close(base.cpu(), base_cpu, rtol=0, atol=0, equal_nan=True)


def _same_layout(base_cpu):
    """An ocl tensor with base_cpu's sizes, strides and storage offset, and its values."""
    storage = base_cpu.untyped_storage()
    flat_cpu = torch.empty(0, dtype=base_cpu.dtype).set_(storage).clone()
    flat = flat_cpu.to(DEVICE)
    return flat.as_strided(base_cpu.shape, base_cpu.stride(), base_cpu.storage_offset())


def _base(kind, shape=(5, 7, 3), dtype=torch.float32, seed=0):
    """contiguous; strided (a non-contiguous view of a larger tensor, with an offset); empty."""
    if kind == "contiguous":
        return make_cpu(shape, dtype, seed=seed)
    if kind == "strided":
        big = make_cpu((shape[2] + 1, shape[1], 2 * shape[0]), dtype, seed=seed)
        return big[1:, :, ::2].permute(2, 1, 0)  # shape, no dim contiguous, offset 1 row
    if kind == "empty":
        return make_cpu((shape[0], 0, shape[2]), dtype, seed=seed)
    raise AssertionError(kind)


BASES = ("contiguous", "strided", "empty")

# name -> fn of a 3-D base of shape (5, 7, 3) (the empty base is (5, 0, 3)).
VIEWS_3D = {
    "view": lambda x: x.view(-1),
    "view_split_dim": lambda x: x.view(5, -1, 3, 1),
    "view_dtype": lambda x: x.view(torch.int32),
    "view_as": lambda x: x.view_as(torch.empty(x.shape[0], x.shape[1] * x.shape[2])),
    "reshape": lambda x: x.reshape(x.shape[0], -1),
    "reshape_as": lambda x: x.reshape_as(torch.empty(x.shape[0] * x.shape[1], x.shape[2])),
    "_reshape_alias": lambda x: torch.ops.aten._reshape_alias(x, x.shape[::-1], x.stride()[::-1]),
    "flatten": lambda x: x.flatten(1),
    "ravel": lambda x: x.ravel(),
    "unflatten": lambda x: x.unflatten(0, (5, 1)),
    "as_strided": lambda x: x.as_strided((2, 3), (4, 2), x.storage_offset() + 1),
    "as_strided_overlap": lambda x: x.as_strided((4, 4), (1, 1)),
    "unfold": lambda x: x.unfold(0, 2, 1),
    "unfold_step_gt_size": lambda x: x.unfold(0, 2, 3),
    "unfold_full": lambda x: x.unfold(2, 3, 1),
    "unfold_neg_dim": lambda x: x.unfold(-2, 3, 2),
    "unfold_size_0": lambda x: x.unfold(1, 0, 1),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1, 0, 2),
    "diagonal_neg": lambda x: x.diagonal(-2, -1, 0),
    "linalg_diagonal": lambda x: torch.linalg.diagonal(x, offset=1),
    "select": lambda x: x.select(1, 3) if x.shape[1] else x.select(2, 1),
    "select_neg": lambda x: x[-1],
    "slice": lambda x: x[1:4],
    "slice_step": lambda x: x[:, 1::3],
    "slice_empty": lambda x: x[3:3],
    "narrow": lambda x: x.narrow(2, 1, 2),
    "narrow_tensor": lambda x: x.narrow(0, torch.tensor(2), 3),
    "expand": lambda x: x[:, :1].expand(-1, 4, -1),
    "expand_new_dims": lambda x: x.expand(2, *x.shape),
    "expand_as": lambda x: x[:1].expand_as(x),
    "broadcast_to": lambda x: torch.broadcast_to(x[:, :, :1], x.shape),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 2),
    "transpose_neg": lambda x: x.transpose(-1, -2),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "swapdims": lambda x: x.swapdims(1, 2),
    "movedim": lambda x: x.movedim(0, -1),
    "movedim_list": lambda x: torch.movedim(x, (0, 1), (2, 0)),
    "moveaxis": lambda x: torch.moveaxis(x, 2, 0),
    "t": lambda x: x[0].t(),
    "adjoint": lambda x: x.adjoint(),
    "mT": lambda x: x.mT,
    "mH": lambda x: x.mH,
    "T_2d": lambda x: x[:, 0].T,
    "squeeze": lambda x: x[:, :1].squeeze(),
    "squeeze_dim": lambda x: x[:, :1].squeeze(1),
    "squeeze_dims": lambda x: x[:1, :, :1].squeeze((0, 2)),
    "squeeze_noop": lambda x: x.squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "unsqueeze_neg": lambda x: x.unsqueeze(-1),
    "unbind": lambda x: x.unbind(2),
    "split": lambda x: x.split(2),
    "split_sizes": lambda x: x.split([1, 4]),
    "split_with_sizes": lambda x: x.split_with_sizes([1, 2], dim=2),
    "chunk": lambda x: x.chunk(3, dim=1),
    "tensor_split_sections": lambda x: x.tensor_split(3, dim=1),
    "tensor_split_indices": lambda x: x.tensor_split([1, 4], dim=0),
    "tensor_split_tensor": lambda x: x.tensor_split(torch.tensor([1, 2]), dim=2),
    "hsplit": lambda x: torch.hsplit(x, [2]),
    "vsplit": lambda x: torch.vsplit(x, [1, 3]),
    "dsplit": lambda x: torch.dsplit(x, 3),
    "alias": lambda x: torch.ops.aten.alias(x),
    "detach": lambda x: x.detach(),
    "real": lambda x: x.real,
    "conj": lambda x: x.conj(),
    "resolve_conj": lambda x: x.resolve_conj(),
    "resolve_neg": lambda x: x.resolve_neg(),
    "positive": lambda x: x.positive(),
    "lift_fresh": lambda x: torch.ops.aten.lift_fresh(x),
    "contiguous_noop": lambda x: x.contiguous() if x.is_contiguous() else x,
    "getitem_mixed": lambda x: x[1:, None, ..., 2],
}


@pytest.mark.parametrize("kind", BASES)
@pytest.mark.parametrize("name", sorted(VIEWS_3D))
def test_view_aliases_and_matches_cpu(name, kind):
    _check_view(VIEWS_3D[name], _base(kind))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.view(1, 1),
        lambda x: x.view(-1),
        lambda x: x.unsqueeze(0),
        lambda x: x.expand(3, 2),
        lambda x: x.squeeze(),
        lambda x: x.as_strided((), ()),
        lambda x: x.unfold(0, 1, 1),  # a 0-dim tensor unfolds like a 1-element one
        lambda x: x.view(torch.int32),
        lambda x: torch.ops.aten.alias(x),
        lambda x: x.t(),
        lambda x: x.permute(()),
    ],
)
def test_views_of_0dim(fn):
    _check_view(fn, make_cpu((), torch.float32, seed=3))


@pytest.mark.parametrize("dtype", [torch.float16, torch.int64, torch.uint8, torch.bool], ids=str)
def test_views_of_other_dtypes(dtype):
    for name in ("unfold", "diagonal", "transpose", "expand", "unbind", "as_strided"):
        _check_view(VIEWS_3D[name], make_cpu((5, 7, 3), dtype, seed=4))


@pytest.mark.parametrize(
    "size,step", [(1, 1), (4, 2), (4, 4), (4, 6), (9, 1), (9, 9), (3, 100), (0, 2)]
)
@pytest.mark.parametrize("dim", [0, -1])
def test_unfold_sizes_and_steps(size, step, dim):
    x = make_cpu((9, 5), torch.float32, seed=5)
    x = x if dim == 0 else x.t().contiguous()
    _check_view(lambda t: t.unfold(dim, size, step), x)


def test_unfold_errors_match_cpu():
    x = make_cpu((4, 3), torch.float32)
    for args in [(0, 5, 1), (0, 2, 0), (0, -1, 1), (2, 1, 1), (-3, 1, 1)]:
        _check_view(lambda t, args=args: t.unfold(*args), x)


def test_issue_unfold_writes_reach_base_and_back():
    """The reported case: u = x.unfold(0, 4, 2); x.add_(100) must change u; writes to u reach x."""
    x_cpu = make_cpu((10,), torch.float32, seed=6)
    x = x_cpu.to(DEVICE)
    u = x.unfold(0, 4, 2)
    x.add_(100)
    torch.testing.assert_close(u[0].cpu(), x_cpu[:4] + 100)
    u[1].fill_(-1)  # u[1] is x[2:6]
    expected = x_cpu + 100
    expected[2:6] = -1
    torch.testing.assert_close(x.cpu(), expected)
    assert torch.ocl.fallback_counts().get("aten::unfold", 0) == 0


def test_view_as_real_and_complex_alias():
    # view_as_complex / view_as_real alias the real tensor (test_complex.py: the complex side).
    x_cpu = make_cpu((4, 3, 2), torch.float32, seed=7)
    x = x_cpu.to(DEVICE)
    c = torch.view_as_complex(x)
    assert c.dtype == torch.complex64 and c.shape == (4, 3)
    assert _storage(c) == _storage(x)
    r = torch.view_as_real(c)
    assert r.shape == x.shape and r.stride() == x.stride() and _storage(r) == _storage(x)
    x.mul_(2)
    torch.testing.assert_close(r.cpu(), x_cpu * 2)
    # The CPU's argument errors, of the CPU's type (view_as_real's is a TypeError from torch 2.15).
    for fn, arg in ((torch.view_as_complex, x[..., :1]), (torch.view_as_real, x)):
        with pytest.raises(Exception) as cpu_err:
            fn(arg.cpu())
        with pytest.raises(cpu_err.type) as ocl_err:
            fn(arg)
        assert str(ocl_err.value) == str(cpu_err.value)


def test_inplace_view_ops_match_cpu():
    """unsqueeze_, squeeze_, transpose_, t_, as_strided_, swapaxes_, swapdims_, detach_ change the
    tensor's metadata only: same sizes and strides as on the CPU, same storage."""
    ops = [
        lambda t: t.unsqueeze_(1),
        lambda t: t.squeeze_(),
        lambda t: t.squeeze_(0),
        lambda t: t.squeeze_((0, 1)),
        lambda t: t.transpose_(0, 1),
        lambda t: t[0].t_(),
        lambda t: t.as_strided_((3, 2), (1, 3)),
        lambda t: t.swapaxes_(0, 1),
        lambda t: t.swapdims_(1, 0),
        lambda t: t.detach_(),  # raises for a view, like the CPU
        lambda t: t.clone().detach_(),
    ]
    for op in ops:
        cpu = make_cpu((1, 6, 3), torch.float32, seed=8)[:, :, :2]
        dev = _same_layout(cpu)
        storage = _storage(dev)
        try:
            r_cpu = op(cpu)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)[:30]):
                op(dev)
            continue
        r_dev = op(dev)
        assert (r_dev.shape, r_dev.stride(), r_dev.storage_offset()) == (
            r_cpu.shape,
            r_cpu.stride(),
            r_cpu.storage_offset(),
        )
        if r_cpu._base is not None or r_cpu.data_ptr() == cpu.data_ptr():
            assert _storage(r_dev) == storage
        torch.testing.assert_close(r_dev.cpu(), r_cpu, rtol=0, atol=0)


def test_views_keep_autograd():
    x_cpu = make_cpu((6, 4), torch.float32, seed=9).requires_grad_()
    x = x_cpu.detach().to(DEVICE).requires_grad_()
    for t in (x_cpu, x):
        y = t[1:].transpose(0, 1).diagonal(1).unsqueeze(0).expand(3, -1)
        (y * y).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), x_cpu.grad)


def test_unfold_backward():
    # unfold's backward (aten::unfold_backward, a scatter-add of the windows, not a view) has no
    # ocl kernel yet and may use the CPU fallback.
    x_cpu = make_cpu((9, 4), torch.float32, seed=9).requires_grad_()
    x = x_cpu.detach().to(DEVICE).requires_grad_()
    with torch.ocl.fallback_mode("silent"):
        for t in (x_cpu, x):
            y = t.unfold(0, 3, 2)
            (y * y).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), x_cpu.grad)


# --------------------------------------------------------------------------------------------
# 3. The fallback refuses a view op without a native kernel, whatever the mode.

_LIB = None


def _cpu_only_view_op():
    """ocl_views_test::first_row(Tensor(a) x) -> Tensor(a): a view op with only a CPU kernel, so
    on an ocl tensor it reaches the PrivateUse1 fallback."""
    global _LIB
    if _LIB is None:
        lib = torch.library.Library("ocl_views_test", "DEF")
        lib.define("first_row(Tensor(a) x) -> Tensor(a)")
        lib.define("first_row_copy(Tensor x) -> Tensor")
        lib.impl("first_row", lambda x: x[0], "CPU")
        lib.impl("first_row_copy", lambda x: x[0].clone(), "CPU")
        _LIB = lib
    return torch.ops.ocl_views_test.first_row, torch.ops.ocl_views_test.first_row_copy


@pytest.mark.parametrize("mode", ["warn", "silent", "error"])
def test_fallback_refuses_view_op_in_every_mode(mode):
    first_row, first_row_copy = _cpu_only_view_op()
    x_cpu = make_cpu((3, 4), torch.float32, seed=11)
    x = x_cpu.to(DEVICE)
    torch.ocl.reset_fallback_counts()
    with torch.ocl.fallback_mode(mode):
        with pytest.raises(NotImplementedError) as info:
            first_row(x)
        msg = str(info.value)
        assert "ocl_views_test::first_row" in msg
        assert "view op must be native" in msg and "torch-ocl bug" in msg
        assert "first_row" not in str(torch.ocl.fallback_counts())
        # The process stays usable: native ops, and (outside "error") the fallback for a
        # non-view op, still work.
        torch.testing.assert_close((x + 1).cpu(), x_cpu + 1)
        if mode != "error":
            r = first_row_copy(x)
            assert r.device.type == "ocl"
            torch.testing.assert_close(r.cpu(), x_cpu[0])
    assert torch.ops.ocl_views_test.first_row(x_cpu).data_ptr() == x_cpu.data_ptr()


@pytest.mark.parametrize("name", ["aten::_indices", "aten::_values"])
def test_aten_view_without_kernel_is_refused(name):
    """Two NOT_APPLICABLE ops on a dense ocl tensor: refused, not copied (the CPU would raise
    that they are sparse-only; before, the fallback's copy went that way)."""
    x = torch.ones(2, 2, device=DEVICE)
    with torch.ocl.fallback_mode("silent"):
        with pytest.raises(NotImplementedError, match="view op must be native"):
            _aten_op(name)(x)
