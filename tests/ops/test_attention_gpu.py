"""The GPU variant of fused attention: kernels/attention_flash.cl (ops/AttentionFlash.cpp), the
flash-attention-2 layout that profiles with `attention_flash` (GPUs) run instead of
kernels/attention.cl, against float64 on the CPU.

Under the CPU profile (the default suite on PoCL) the variant does not run: the in-process tests
skip, and `test_variant_in_a_child_process` (slow) runs this file under the GPU profile with an
asymmetric block. ci/run-gpu-profile.sh runs the file under the GPU profile (.ci/run's GPU step).
Shapes are odd and unequal (query and key rows not multiples of the blocks, Sq != Sk); head dims
1, 8, 63, 64, 80 and 128 (up to the fused kernel's limit); masks, causal, dropout, grouped-query
attention, half types, NaN/Inf and fully masked rows, and gradients (dQ, dK, dV, the mask's).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from ocl_testing import DEVICE, assert_ocl_close, make_cpu
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

from ops.test_attention import _inputs, _leaves, _qkv, _ran_fused, check_sdpa

PROFILE = torch.ocl.device_profile() if torch.ocl.is_available() else None
FLASH = PROFILE is not None and int(PROFILE.params["attention_flash"]) == 1

needs_flash = pytest.mark.skipif(
    not FLASH,
    reason="this device's profile runs kernels/attention.cl (attention_flash=0); "
    "TORCH_OCL_DEVICE_PROFILE=gpu runs the GPU variant (ci/run-gpu-profile.sh, and "
    "test_variant_in_a_child_process)",
)


def _kernels_of(fn) -> list[str]:
    """The names of the kernels `fn` ran (torch.profiler's device activity)."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        fn()
        torch.ocl.synchronize()
    dev = torch.autograd.DeviceType.PrivateUse1
    return [e.name.split("[")[0] for e in prof.events() if e.device_type == dev]


@needs_flash
def test_the_flash_kernels_run():
    if not torch.ocl.profiler.has_device_activity():
        pytest.skip("built without Kineto's headers: no kernel names to check")
    q, k, v = _leaves(_qkv(1, 2, 9, 11, 16), DEVICE)

    def step():
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()

    names = _kernels_of(step)
    for name in ("flash_fwd", "flash_bwd_delta", "flash_bwd_dq", "flash_bwd_dkv"):
        assert name in names, names
    assert not any(n.startswith("attn_") for n in names), names


# Every head dim is a program build (tens of seconds on a loaded 2-core PoCL machine): the
# default run takes D = 1 (fewer head-dim columns than the work-group's 16), 63 (odd, a partial
# column) and 128 (the fused kernel's limit); 8, 64 and 80 are slow.
@needs_flash
@pytest.mark.parametrize(
    "D",
    [1, 63, 128] + [pytest.param(d, marks=pytest.mark.slow) for d in (8, 64, 80)],
    ids=str,
)
def test_head_dims(D):
    check_sdpa(*_qkv(2, 2, 37, 45, D), is_causal=D % 2 == 0)


@needs_flash
def test_different_value_head_dim():
    check_sdpa(*_qkv(1, 3, 70, 19, 24, DV=40), is_causal=True)


@needs_flash
@pytest.mark.parametrize(
    "L,S", [(1, 1), (7, 7), (65, 65), (130, 67), (67, 130), (1, 129), (129, 1)], ids=str
)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_sequence_lengths(L, S, causal):
    check_sdpa(*_qkv(1, 2, L, S, 16), is_causal=causal)


@needs_flash
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_half_dtypes(dtype, causal):
    check_sdpa(*_qkv(2, 2, 33, 70, 64, dtype=dtype), dtype=dtype, is_causal=causal)


@needs_flash
@pytest.mark.parametrize("mshape", [(7, 9), (2, 1, 7, 9), (1, 3, 1, 9), (2, 3, 7, 9)], ids=str)
def test_bool_masks(mshape):
    mask = make_cpu(mshape, torch.bool, seed=4)
    mask[..., 0] = True
    check_sdpa(*_qkv(2, 3, 7, 9, 16), mask=mask)


@needs_flash
@pytest.mark.parametrize("mshape", [(70, 67), (2, 1, 1, 67), (2, 3, 70, 67)], ids=str)
def test_float_masks_and_their_gradient(mshape):
    mask = make_cpu(mshape, torch.float64, seed=6).float()
    check_sdpa(*_qkv(2, 3, 70, 67, 16), mask=mask, mask_grad=True)


@needs_flash
def test_half_mask_and_float_mask_with_half_inputs():
    q, k, v = _qkv(1, 2, 9, 13, 16, dtype=torch.float16)
    mask = make_cpu((9, 13), torch.float64, seed=5).to(torch.float16)
    check_sdpa(q, k, v, dtype=torch.float16, mask=mask)
    check_sdpa(q, k, v, dtype=torch.float16, mask=mask.float())


@needs_flash
def test_mask_with_is_causal():
    """torch 2.13 applies both (later versions raise before choosing a backend)."""
    q, k, v = _qkv(2, 3, 70, 67, 16)
    mask = make_cpu((70, 67), torch.float32, seed=8)
    qd, kd, vd = _leaves([q, k, v], DEVICE)
    try:
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    except RuntimeError:
        pytest.skip("this torch refuses attn_mask with is_causal (tested in test_attention.py)")
    out = F.scaled_dot_product_attention(qd, kd, vd, attn_mask=mask.to(DEVICE), is_causal=True)
    assert _ran_fused(out)
    assert_ocl_close(out, ref, rtol=2e-5, atol=2e-5)
    above = torch.ones(70, 67, dtype=torch.bool).triu(1)
    check_sdpa(q, k, v, mask=mask.masked_fill(above, -torch.inf), mask_grad=True)


@needs_flash
def test_fully_masked_rows_and_padding():
    mask = make_cpu((2, 3, 70, 67), torch.bool, seed=7)
    mask[:, :, 2] = False  # rows with every key masked: 0, as on the CPU
    mask[1, 2] = False
    out = check_sdpa(*_qkv(2, 3, 70, 67, 16), mask=mask)
    assert (out[:, :, 2] == 0).all().item()
    pad = torch.zeros(2, 1, 1, 67)
    pad[0, ..., 60:] = float("-inf")
    pad[1, ..., 3:] = float("-inf")
    check_sdpa(*_qkv(2, 3, 70, 67, 16), mask=pad)


@needs_flash
def test_nan_and_inf_inputs():
    q, k, v = _qkv(1, 2, 70, 67, 16)
    q[0, 0, 2, 3] = float("nan")
    k[0, 1, 65, 0] = float("nan")
    v[0, 0, 1, 1] = float("inf")
    q[0, 1, 40, :] = float("inf")
    qd, kd, vd = (t.to(DEVICE) for t in (q, k, v))
    out = F.scaled_dot_product_attention(qd, kd, vd)
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    assert_ocl_close(out, ref.float(), rtol=2e-5, atol=2e-5, equal_nan=True)


@needs_flash
def test_batch_heads_and_grouped_query_attention():
    check_sdpa(*_qkv(3, 5, 70, 45, 16, seed=3))
    check_sdpa(*_qkv(2, 6, 67, 70, 16, HK=2), enable_gqa=True, is_causal=True)
    check_sdpa(*_qkv(2, 4, 9, 71, 16, HK=1))  # one key/value head for every query head
    q, k, v = _inputs([(4, 9, 16), (4, 11, 16), (4, 11, 16)], torch.float32)  # 3-D
    check_sdpa(q, k, v, scale=-0.4)


@needs_flash
def test_noncontiguous_layouts():
    q, k, v = _inputs([(2, 67, 3, 16), (2, 70, 3, 16), (2, 70, 3, 16)], torch.float32)
    out = check_sdpa(
        q.transpose(1, 2),
        k.transpose(1, 2),
        v.transpose(1, 2),
        view=lambda t: t.transpose(1, 2).contiguous().transpose(1, 2),
    )
    assert out.stride(-1) == 1
    check_sdpa(
        *_qkv(2, 3, 7, 9, 16), view=lambda t: t.transpose(-1, -2).contiguous().transpose(-1, -2)
    )


@needs_flash
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_dropout_forward_backward_use_one_mask(causal):
    """The dropout mask (recovered with value = identity) is the one the backward uses, and the
    statistics hold; the same Philox counters as kernels/attention.cl."""
    p = 0.3
    q, k, v = _qkv(2, 3, 70, 16, 16, HK=1)
    kk = k.expand(2, 3, 16, 16)
    eye = torch.eye(16).expand(2, 3, 16, 16).contiguous()
    torch.ocl.manual_seed(5)
    probs = F.scaled_dot_product_attention(
        q.to(DEVICE), kk.to(DEVICE), eye.to(DEVICE), dropout_p=p, is_causal=causal
    ).cpu()
    keep = probs != 0
    if causal:
        keep |= torch.ones(70, 16, dtype=torch.bool).triu(1)
    else:
        frac = keep.double().mean().item()
        assert abs(frac - (1 - p)) < 5 * (p * (1 - p) / keep.numel()) ** 0.5, frac
    torch.ocl.manual_seed(5)
    qd, kd, vd = _leaves([q, k, v], DEVICE)
    out = F.scaled_dot_product_attention(qd, kd, vd, dropout_p=p, is_causal=causal)
    assert _ran_fused(out)
    qr, kr, vr = _leaves([q, k, v], "cpu", torch.float64)
    ref, _ = torch.ops.aten._scaled_dot_product_attention_math(
        qr, kr.expand(2, 3, 16, 16), vr.expand(2, 3, 16, 16), None, p, causal, dropout_mask=keep
    )
    assert_ocl_close(out, ref.detach().float(), rtol=2e-5, atol=2e-5)
    g = make_cpu(ref.shape, torch.float64, seed=8)
    out.backward(g.float().to(DEVICE))
    ref.backward(g)
    for a, b in ((qd, qr), (kd, kr), (vd, vr)):
        assert_ocl_close(a.grad, b.grad.float(), rtol=2e-5, atol=2e-5)


@needs_flash
def test_no_host_waits():
    q, k, v = (t.to(DEVICE).requires_grad_() for t in _qkv(2, 2, 67, 70, 16))
    mask = torch.rand(67, 70, device=DEVICE) > 0.2
    with torch.ocl.sync_debug_mode("error"):
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.2, attn_mask=mask)
        out.sum().backward()
    assert q.grad.isfinite().all().item()


@needs_flash
def test_math_path_forced_still_works():
    with sdpa_kernel([SDPBackend.MATH]):
        check_sdpa(*_qkv(1, 2, 9, 11, 16), fused=False, is_causal=True)


def test_bad_block_override_is_a_clear_error(subprocess_env):
    env = dict(
        subprocess_env,
        TORCH_OCL_DEVICE_PROFILE="gpu",
        TORCH_OCL_DEVICE_PARAMS="attention_flash_rows=24,attention_flash_wg_rows=16",
    )
    code = "import torch, torch_ocl\ntorch.ocl.device_profile()\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode != 0
    assert "attention_flash_rows (24)" in proc.stderr and "multiples of" in proc.stderr


# An asymmetric block (rows != cols, work-group 4 x 8, 2 x 4 scores per work-item, 8-value
# tiles): a row/column mix-up that the square default hides shows here.
ASYMMETRIC = (
    "attention_flash_rows=16,attention_flash_cols=32,attention_flash_wg_rows=8,"
    "attention_flash_wg_cols=8,attention_flash_tile_d=8"
)


@pytest.mark.slow
@pytest.mark.skipif(not torch.ocl.is_available(), reason="no OpenCL device")
def test_variant_in_a_child_process(subprocess_env, tmp_path):
    """This file under the GPU profile with the asymmetric block (a few kernel builds)."""
    env = dict(subprocess_env, TORCH_OCL_DEVICE_PROFILE="gpu", TORCH_OCL_DEVICE_PARAMS=ASYMMETRIC)
    select = "head_dims or sequence_lengths or float_masks or grouped or dropout or flash_kernels"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", __file__]
    proc = subprocess.run(
        [*args, "-k", select, "-m", "not slow"],
        cwd=os.path.dirname(os.path.dirname(__file__)),
        env=env,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout and " failed" not in proc.stdout, tail
