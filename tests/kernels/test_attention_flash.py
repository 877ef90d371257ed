"""Tests for kernels/attention_flash.cl (the GPU profile's flash-attention-2 kernels) against the
NumPy float64 reference of test_attention.py, through its run_case: the same operands (padded
buffers whose padding must come back untouched, [B, L, H, D] layouts), masks, dropout words,
statistics and gradients as kernels/attention.cl. Blocks: the GPU default (64 x 64 rows, 16 x 16
work-items), the mobile one (16 x 16, 8 x 8), and asymmetric ones (rows != cols, work-group
shapes that are not square, tiles of 8 and 4 head-dim values) so that a row/column mix-up shows.
Run on Oclgrind by ci/run-oclgrind.sh (tests/kernels): small shapes there.
"""

import numpy as np
import pytest
from test_attention import run_case

DEFAULT = (64, 64, 16, 16, 16)  # (BR, BC, WG_R, WG_C, TD)
MOBILE = (16, 16, 8, 8, 16)
ASYM = (16, 32, 4, 8, 8)
ASYM_T = (32, 8, 8, 2, 4)
BLOCKS = {"default": DEFAULT, "mobile": MOBILE, "asym": ASYM, "asym_t": ASYM_T}


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): small shapes and blocks only there."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


@pytest.mark.parametrize("block", list(BLOCKS), ids=str)
@pytest.mark.parametrize("L,S", [(1, 1), (7, 9), (37, 70), (70, 5)], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_float(ctx, queue, build, slow, block, L, S, causal):
    if slow and (L > 7 or block == "default"):
        pytest.skip("small shapes and blocks only on Oclgrind")
    run_case(ctx, queue, build, L=L, S=S, causal=causal, flash=BLOCKS[block])


# Each head dim is two program builds; the large ones are slow (tests/ops/test_attention_gpu.py
# covers 63, 64, 80 and 128 under the GPU profile).
@pytest.mark.parametrize(
    "D,DV",
    [
        (1, 1),
        (8, 8),
        pytest.param(63, 80, marks=pytest.mark.slow),
        pytest.param(128, 128, marks=pytest.mark.slow),
    ],
    ids=str,
)
def test_head_dims(ctx, queue, build, slow, D, DV):
    if slow and D > 8:
        pytest.skip("small head dims only on Oclgrind")
    run_case(ctx, queue, build, D=D, DV=DV, L=19, S=21, causal=True, flash=ASYM)
    if not slow:
        run_case(ctx, queue, build, D=D, DV=DV, L=19, S=21, flash=DEFAULT)


@pytest.mark.parametrize(
    "mask_shape", [(7, 9), (2, 1, 1, 9), (3, 7, 9), (2, 3, 7, 9)], ids=lambda s: str(s)
)
def test_masks(ctx, queue, build, mask_shape):
    run_case(ctx, queue, build, mask_shape=mask_shape, causal=len(mask_shape) == 4, flash=ASYM)


def test_grouped_heads_and_layouts(ctx, queue, build):
    run_case(ctx, queue, build, H=4, HK=2, D=24, DV=40, layout="blhd", L=9, S=11, flash=ASYM_T)
    run_case(ctx, queue, build, H=4, HK=1, D=24, DV=40, causal=True, L=9, S=11, flash=ASYM)


@pytest.mark.parametrize("p", [0.3, 0.9])
def test_dropout(ctx, queue, build, p):
    """The same Philox words as kernels/attention.cl, in the forward and both backward kernels."""
    run_case(ctx, queue, build, p=p, L=9, S=13, flash=ASYM)
    run_case(ctx, queue, build, p=p, L=9, S=13, causal=True, H=4, HK=2, flash=ASYM_T)


@pytest.mark.parametrize("tag", ["half", "bfloat16"])
def test_half_types(ctx, queue, build, tag):
    run_case(ctx, queue, build, tag=tag, mtag="float", mask_shape=(7, 9), flash=ASYM)


def test_fully_masked_rows_nan_and_inf(ctx, queue, build):
    def specials(data):
        data[0][0, 1, 2, 3] = np.nan
        data[1][1, 0, 4, 0] = np.inf

    with np.errstate(invalid="ignore"):
        out = run_case(ctx, queue, build, specials=specials, mask_shape=(2, 3, 7, 9), flash=ASYM)
    assert np.isnan(out[0, 1, 2]).all()
    out = run_case(ctx, queue, build, mask_shape=(7, 9), mask_rows_inf=(2, 6), flash=ASYM_T)
    assert (out[:, :, 2] == 0).all() and (out[:, :, 6] == 0).all()
