"""Results that are right in more than one way, for tests/ops/test_opinfo.py.

Some ops have no unique answer, and the CPU's choice is an accident of its algorithm:
- singular vectors and eigenvectors are unique only up to a phase per vector (a sign, for real
  matrices); the CPU's LAPACK and ocl's kernels choose differently. With full_matrices (some=False)
  the columns past the rank are any orthonormal basis of the orthogonal complement;
- `mode` returns an index of an occurrence of the mode; which occurrence the CPU returns depends
  on its unstable sort.

`align(op_name, sample, actual, ref)` checks the property that makes ocl's answer right (the
vectors are unitary, the index selects the mode) and, when it holds, moves ocl's answer onto the
CPU's choice, so that the ordinary comparison then checks everything else (the values, and that
U and V were rotated together). When the property fails the result is left as it was, and the
comparison fails as before.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

# op -> (index of the left vectors, index of the right vectors or None, the right vectors are
# rows (Vh) rather than columns (V))
_VECTOR_OUTPUTS = {
    "svd": (0, 2, False),
    "svd_lowrank": (0, 2, False),
    "pca_lowrank": (0, 2, False),
    "linalg.svd": (0, 2, True),
    "linalg.eigh": (1, None, False),
}


def align(op_name, sample, actual, ref):
    """`actual` (ocl's result), possibly with its free choices moved onto `ref`'s (the CPU's)."""
    if op_name in _VECTOR_OUTPUTS:
        return _align_vectors(op_name, actual, ref)
    if op_name == "mode":
        return _align_mode_index(sample, actual, ref)
    return actual


def _unitary_tolerance(dtype: torch.dtype) -> float:
    return 1e-10 if dtype in (torch.float64, torch.complex128) else 1e-4


def _is_orthonormal_columns(q: torch.Tensor) -> bool:
    if q.shape[-1] == 0 or q.numel() == 0:
        return True
    tolerance = _unitary_tolerance(q.dtype) * q.shape[-2]
    q = q.to(torch.complex128 if q.is_complex() else torch.float64)
    gram = q.mH @ q
    eye = torch.eye(q.shape[-1], dtype=gram.dtype).expand_as(gram)
    return bool(((gram - eye).abs() <= tolerance).all())


def _align_vectors(op_name, actual, ref):
    left, right, right_rows = _VECTOR_OUTPUTS[op_name]
    leaves, spec = tree_flatten(actual)
    ref_leaves, ref_spec = tree_flatten(ref)
    if spec != ref_spec or not all(isinstance(x, torch.Tensor) for x in leaves):
        return actual
    if any(a.shape != e.shape for a, e in zip(leaves, ref_leaves, strict=True)):
        return actual
    device = leaves[left].device
    u = leaves[left].detach().cpu()
    u_ref = ref_leaves[left].detach()
    v = v_ref = None
    if right is not None:
        v = leaves[right].detach().cpu()
        v_ref = ref_leaves[right].detach()
        if right_rows:  # Vh: its rows are the conjugated right vectors
            v, v_ref = v.mH, v_ref.mH
    if u.numel() == 0:
        return actual
    # The vectors with a value: as many as singular values / eigenvalues.
    k = min(u.shape[-1], (v.shape[-1] if v is not None else u.shape[-1]))
    if op_name == "linalg.eigh":
        k = u.shape[-1]
    else:
        k = min(k, leaves[1].shape[-1])
    # Each of ocl's vectors against the CPU's: the phase that maps one onto the other.
    inner = (u_ref[..., :, :k].conj() * u[..., :, :k]).sum(-2)
    size = inner.abs()
    phase = torch.where(size > 0, inner / size.clamp_min(1e-300), torch.ones_like(inner))
    if not u.is_complex():
        phase = torch.where(phase < 0, -1.0, 1.0).to(u.dtype)
    u_new = u.clone()
    u_new[..., :, :k] = u[..., :, :k] / phase.unsqueeze(-2)
    # Past the rank: any orthonormal basis of the complement is right.
    if u.shape[-1] > k and _is_orthonormal_columns(u):
        u_new[..., :, k:] = u_ref[..., :, k:]
    new = list(leaves)
    new[left] = u_new.to(device)
    if v is not None:
        v_new = v.clone()
        # u_j -> u_j / c_j with v_j -> v_j / c_j keeps u_j s_j v_j^H.
        v_new[..., :, :k] = v[..., :, :k] / phase.unsqueeze(-2)
        if v.shape[-1] > k and _is_orthonormal_columns(v):
            v_new[..., :, k:] = v_ref[..., :, k:]
        new[right] = (v_new.mH if right_rows else v_new).contiguous().to(device)
    return tree_unflatten(new, spec)


def _align_mode_index(sample, actual, ref):
    leaves, spec = tree_flatten(actual)
    ref_leaves, ref_spec = tree_flatten(ref)
    if spec != ref_spec or len(leaves) != 2 or not all(isinstance(x, torch.Tensor) for x in leaves):
        return actual
    values, indices = (x.detach().cpu() for x in leaves)
    if indices.shape != ref_leaves[1].shape or indices.dtype != torch.int64:
        return actual
    x = sample.input.detach().cpu()
    args = list(sample.args)
    dim = args[0] if args else sample.kwargs.get("dim", -1)
    keepdim = args[1] if len(args) > 1 else sample.kwargs.get("keepdim", False)
    if x.dim() == 0:
        ok = bool((indices == 0).all())
    else:
        idx = indices if keepdim else indices.unsqueeze(dim)
        if idx.numel() and (idx.min() < 0 or idx.max() >= x.shape[dim]):
            return actual
        picked = x.gather(dim, idx)
        picked = picked if keepdim else picked.squeeze(dim)
        ok = torch.equal(picked, values) or bool(
            ((picked == values) | (picked.isnan() & values.isnan())).all()
            if values.is_floating_point()
            else False
        )
    if not ok:
        return actual
    return tree_unflatten([leaves[0], ref_leaves[1].to(leaves[1].device)], spec)
