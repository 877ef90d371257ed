"""Tests for kernels/attention.cl against a NumPy float64 reference.

Every launch follows the geometry at the top of attention.cl: attn_fwd / attn_bwd_dq take
global = {ceil(L / (LWS * RQ)) * LWS, B * H}, attn_bwd_dkv {ceil(S / (LWS * RQ)) * LWS, B * HK},
local = {LWS, 1}; attn_bwd_delta global = {ceil(B * H * L / LWS) * LWS}. Tensors are passed as
(buffer, offset, stride_b, stride_h, stride_l) with a contiguous head dim; buffers carry
padding in front (the offsets) and behind, which must come back untouched, and the layouts
include [B, L, H, D] memory viewed as [B, H, L, D] (how attention modules call SDPA). The
dropout mask is recomputed with the reference Philox4x32-10 of test_random.py. The work splits
of a CPU device (RQ = 4, LWS = 16) and of a GPU (RQ = 1, LWS = 64), and both tile sizes (BT = 16,
8), are run.
"""

import numpy as np
import pytest
from cl_tags import STORE, buffer, store, to_f64
from test_random import philox4x32_10

cl = pytest.importorskip("pyopencl")

PAD, TAIL = 5, 7
SENTINEL = 77.0
CPU_SPLIT, GPU_SPLIT = (4, 16), (1, 64)  # (RQ, LWS)
TOL = {"float": (2e-5, 2e-5), "half": (4e-3, 4e-3), "bfloat16": (3e-2, 3e-2)}
I64, U64, I32, U32, F32 = np.int64, np.uint64, np.int32, np.uint32, np.float32


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): small shapes only there."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


class Operand:
    """A [B, H, R, D] tensor in a padded flat buffer; layout "bhld" (contiguous) or "blhd"
    ([B, R, H, D] memory)."""

    def __init__(self, ctx, tag, data, layout="bhld"):
        self.tag, self.shape = tag, data.shape
        B, H, R, D = data.shape
        mem = data if layout == "bhld" else data.transpose(0, 2, 1, 3)
        self.strides = (H * R * D, R * D, D) if layout == "bhld" else (R * H * D, D, H * D)
        flat = np.full(PAD + data.size + TAIL, store(tag, SENTINEL), dtype=STORE[tag])
        flat[PAD : PAD + data.size] = store(tag, np.ascontiguousarray(mem)).ravel()
        self.value = to_f64(tag, store(tag, data))  # the stored values, as the kernel sees them
        self.flat, self.layout = flat, layout
        self.buf = buffer(ctx, flat)

    def args(self):
        return [self.buf, U64(PAD), *map(I64, self.strides)]

    def read(self, queue):
        cl.enqueue_copy(queue, self.flat, self.buf)
        queue.finish()
        pad = np.concatenate([self.flat[:PAD], self.flat[PAD + int(np.prod(self.shape)) :]])
        assert np.all(to_f64(self.tag, pad) == SENTINEL), "wrote outside the tensor"
        mem = self.flat[PAD : PAD + int(np.prod(self.shape))]
        B, H, R, D = self.shape
        if self.layout == "bhld":
            return to_f64(self.tag, mem.reshape(B, H, R, D))
        return to_f64(self.tag, mem.reshape(B, R, H, D).transpose(0, 2, 1, 3))


def floats(ctx, n, fill=SENTINEL):
    """A float buffer of n values after PAD sentinels (statistics, dS)."""
    a = np.full(PAD + n + TAIL, fill, dtype=np.float32)
    return a, buffer(ctx, a)


def read_floats(queue, host, buf, n):
    cl.enqueue_copy(queue, host, buf)
    queue.finish()
    assert np.all(host[:PAD] == SENTINEL) and np.all(host[PAD + n :] == SENTINEL)
    return host[PAD : PAD + n].astype(np.float64)


def dropout_keep(B, H, L, S, thresh, key, base):
    """[B, H, L, S] bool: the kept elements (word j % 4 of counter base + r * ceil(S / 4) +
    j / 4 for row r, key j)."""
    r = np.arange(B * H * L, dtype=np.uint64)[:, None]
    j = np.arange(S, dtype=np.uint64)[None, :]
    ctr = np.uint64(base) + r * np.uint64((S + 3) // 4) + j // np.uint64(4)
    words = np.stack(philox4x32_10(ctr & np.uint64(0xFFFFFFFF), ctr >> np.uint64(32), 0, 0, *key))
    lane = np.broadcast_to((j % np.uint64(4)).astype(np.int64), ctr.shape)
    w = np.take_along_axis(words, lane[None], 0)[0]
    return ((w >> np.uint32(8)) >= np.uint32(thresh)).reshape(B, H, L, S)


def reference(q, k, v, mask, causal, scale, keep, drop_scale, dO):
    """Forward and backward in float64: out_ref, lse, delta, dQ, dK, dV, dS."""
    group = q.shape[1] // k.shape[1]
    kk, vv = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    L, S = q.shape[2], k.shape[2]
    s = scale * q @ kk.transpose(0, 1, 3, 2)
    if mask is not None:
        s = s + mask
    if causal:
        s = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, s)
    m = s.max(-1, keepdims=True)
    empty = m == -np.inf
    e = np.exp(s - np.where(empty, 0, m))
    lsum = e.sum(-1, keepdims=True)
    P = np.where(empty, 0, e / np.where(empty, 1, lsum))
    lse = np.where(empty, np.inf, m + np.log(np.where(empty, 1, lsum)))[..., 0]
    Z = np.ones_like(P) if keep is None else keep * drop_scale
    out_ref = (P * Z) @ vv
    delta = (dO * out_ref).sum(-1)
    dP = (dO @ vv.transpose(0, 1, 3, 2)) * Z
    dS = P * (dP - delta[..., None])
    dQ = scale * dS @ kk
    B, HK = k.shape[:2]
    dK = (scale * dS.transpose(0, 1, 3, 2) @ q).reshape(B, HK, group, S, -1).sum(2)
    dV = ((P * Z).transpose(0, 1, 3, 2) @ dO).reshape(B, HK, group, S, -1).sum(2)
    return out_ref, lse, delta, dQ, dK, dV, dS


def program(build, tag, mtag, D, DV, bt, split, flash=None):
    if flash is not None:  # kernels/attention_flash.cl (test_attention_flash.py)
        br, bc, wr, wc, td = flash
        blocks = f"-DBR={br} -DBC={bc} -DWG_R={wr} -DWG_C={wc} -DTD={td}".split()
        return build(
            "attention_flash", [f"-DT={tag}", f"-DM_T={mtag}", f"-DDQK={D}", f"-DDV={DV}"] + blocks
        )
    rq, lws = split
    return build(
        "attention",
        [
            f"-DT={tag}",
            f"-DM_T={mtag}",
            f"-DDQK={D}",
            f"-DDV={DV}",
            f"-DBT={bt}",
            f"-DRQ={rq}",
            f"-DLWS={lws}",
        ],
    )


def run_case(
    ctx,
    queue,
    build,
    *,
    B=2,
    H=3,
    HK=None,
    L=7,
    S=9,
    D=16,
    DV=16,
    tag="float",
    mtag=None,
    mask_shape=None,
    causal=False,
    p=0.0,
    bt=16,
    split=CPU_SPLIT,
    layout="bhld",
    scale=0.3,
    seed=0,
    specials=None,
    mask_rows_inf=(),
    flash=None,
):
    """One forward and backward of kernels/attention.cl (work split `split`, tile rows `bt`), or
    of kernels/attention_flash.cl with `flash` = its block (BR, BC, WG_R, WG_C, TD), against the
    float64 reference."""
    HK = H if HK is None else HK
    mtag = mtag or tag
    rng = np.random.default_rng(seed)
    data = [
        rng.uniform(-2, 2, s) for s in ((B, H, L, D), (B, HK, S, D), (B, HK, S, DV), (B, H, L, DV))
    ]
    if specials:
        specials(data)
    q, k, v, dO = (Operand(ctx, tag, a, layout) for a in data)
    mask = None
    margs = [q.buf, U64(0), I64(0), I64(0), I64(0), I64(0)]
    if mask_shape is not None:
        mval = rng.uniform(-3, 1, mask_shape)
        mval[rng.uniform(size=mask_shape) < 0.2] = -np.inf
        for row in mask_rows_inf:
            mval[..., row, :] = -np.inf
        mflat = np.full(PAD + mval.size + TAIL, store(mtag, 0.0), dtype=STORE[mtag])
        mflat[PAD : PAD + mval.size] = store(mtag, mval).ravel()
        mbuf = buffer(ctx, mflat)
        full = np.broadcast_to(to_f64(mtag, store(mtag, mval)), (B, H, L, S))
        mask = full
        st = [0 if n == 1 else int(np.prod(mask_shape[i + 1 :])) for i, n in enumerate(mask_shape)]
        st = [0] * (4 - len(st)) + st
        margs = [mbuf, U64(PAD), *map(I64, st)]
    thresh = int(round(p * 2**24))
    key, base = (0x1234, 0xABCD), 1000
    keep = dropout_keep(B, H, L, S, thresh, key, base) if p else None
    drop_scale = np.float32(1 / (1 - p))
    out_ref, lse, delta, dQ, dK, dV, dS = reference(
        q.value,
        k.value,
        v.value,
        mask,
        causal,
        float(F32(scale)),
        keep,
        float(drop_scale),
        dO.value,
    )
    prg = program(build, tag, mtag, D, DV, bt, split, flash)
    rq, lws = split
    name = "flash_" if flash else "attn_"
    if flash:
        lws = 64  # the delta kernel's (any size)
    tail = [
        I32(mask is not None),
        I32(causal),
        I64(H),
        I64(H // HK),
        I64(L),
        I64(S),
        F32(scale),
        U32(thresh),
        drop_scale,
        U32(key[0]),
        U32(key[1]),
        U64(base),
    ]
    rtol, atol = TOL[tag]

    def rows_global(rows, groups):
        if flash:
            br, _, wr, wc, _ = flash
            return (-(-rows // br) * wc, groups * wr)
        return ((rows + lws * rq - 1) // (lws * rq) * lws, groups)

    local = (flash[3], flash[2]) if flash else (lws, 1)

    # forward
    out = Operand(ctx, tag, np.full((B, H, L, DV), SENTINEL), layout)  # every element written
    lse_h, lse_b = floats(ctx, B * H * L)
    cl.Kernel(prg, name + "fwd")(
        queue,
        rows_global(L, B * H),
        local,
        *q.args(),
        *k.args(),
        *v.args(),
        *out.args(),
        lse_b,
        U64(PAD),
        *margs,
        *tail,
    )
    got_o = out.read(queue)
    np.testing.assert_allclose(got_o, out_ref, rtol=rtol, atol=atol)
    got_lse = read_floats(queue, lse_h, lse_b, B * H * L)
    np.testing.assert_allclose(got_lse, lse.ravel(), rtol=1e-5, atol=1e-5)

    # backward, from the reference statistics (each kernel on its own)
    dlt_h, dlt_b = floats(ctx, B * H * L)
    o_ref = Operand(ctx, tag, out_ref, layout)
    cl.Kernel(prg, name + "bwd_delta")(
        queue,
        (-(-B * H * L // lws) * lws,),
        (lws,),
        *dO.args(),
        *o_ref.args(),
        dlt_b,
        U64(PAD),
        I64(H),
        I64(L),
        I64(B * H * L),
    )
    exp_delta = (dO.value * o_ref.value).sum(-1).ravel()
    np.testing.assert_allclose(
        read_floats(queue, dlt_h, dlt_b, B * H * L), exp_delta, rtol=1e-5, atol=1e-5
    )
    lse_in = buffer(ctx, np.concatenate([np.zeros(PAD), lse.ravel()]).astype(np.float32))
    dlt_in = buffer(ctx, np.concatenate([np.zeros(PAD), delta.ravel()]).astype(np.float32))
    dq = Operand(ctx, tag, np.full((B, H, L, D), SENTINEL), layout)
    ds_h, ds_b = floats(ctx, B * H * L * S)
    cl.Kernel(prg, name + "bwd_dq")(
        queue,
        rows_global(L, B * H),
        local,
        *q.args(),
        *k.args(),
        *v.args(),
        *dO.args(),
        *dq.args(),
        ds_b,
        U64(PAD),
        I32(1),
        lse_in,
        U64(PAD),
        dlt_in,
        U64(PAD),
        *margs,
        *tail,
    )
    np.testing.assert_allclose(dq.read(queue), dQ, rtol=rtol, atol=atol * 4)
    np.testing.assert_allclose(
        read_floats(queue, ds_h, ds_b, B * H * L * S), dS.ravel(), rtol=1e-5, atol=1e-5
    )
    dk = Operand(ctx, tag, np.full((B, HK, S, D), SENTINEL), layout)
    dv = Operand(ctx, tag, np.full((B, HK, S, DV), SENTINEL), layout)
    cl.Kernel(prg, name + "bwd_dkv")(
        queue,
        rows_global(S, B * HK),
        local,
        *q.args(),
        *k.args(),
        *v.args(),
        *dO.args(),
        *dk.args(),
        *dv.args(),
        lse_in,
        U64(PAD),
        dlt_in,
        U64(PAD),
        *margs,
        *tail,
    )
    np.testing.assert_allclose(dk.read(queue), dK, rtol=rtol, atol=atol * 4)
    np.testing.assert_allclose(dv.read(queue), dV, rtol=rtol, atol=atol * 4)
    return got_o


@pytest.mark.parametrize("split", [CPU_SPLIT, GPU_SPLIT], ids=["cpu_split", "gpu_split"])
@pytest.mark.parametrize("L,S", [(1, 1), (7, 9), (33, 17), (70, 5)], ids=lambda x: str(x))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_float(ctx, queue, build, slow, split, L, S, causal):
    if slow and L > 7:
        pytest.skip("small shapes only on Oclgrind")
    run_case(ctx, queue, build, L=L, S=S, causal=causal, split=split)


@pytest.mark.parametrize(
    "mask_shape", [(7, 9), (2, 1, 1, 9), (3, 7, 9), (2, 3, 7, 9)], ids=lambda s: str(s)
)
def test_masks(ctx, queue, build, mask_shape):
    run_case(ctx, queue, build, mask_shape=mask_shape, causal=len(mask_shape) == 4)


def test_grouped_heads_layouts_and_padding(ctx, queue, build, slow):
    """GROUP = 2 and 4 (one key head), [B, L, H, D] memory, head dims padded to float8 (24 ->
    3 float8, 40 -> 5) and BT = 8."""
    run_case(ctx, queue, build, H=4, HK=2, D=24, DV=40, bt=8, layout="blhd", L=9, S=11)
    run_case(ctx, queue, build, H=4, HK=1, D=24, DV=40, bt=8, causal=True, L=9, S=11)


@pytest.mark.parametrize("p", [0.3, 0.9])
def test_dropout(ctx, queue, build, p):
    """The kernels drop exactly the elements whose Philox words say so, in the forward and in
    both backward kernels."""
    run_case(ctx, queue, build, p=p, L=9, S=13)
    run_case(ctx, queue, build, p=p, L=9, S=13, causal=True, H=4, HK=2, split=GPU_SPLIT)


@pytest.mark.parametrize("tag", ["half", "bfloat16"])
def test_half_types(ctx, queue, build, tag):
    run_case(ctx, queue, build, tag=tag, mtag="float", mask_shape=(7, 9))


def test_fully_masked_rows_nan_and_inf(ctx, queue, build):
    def specials(data):
        data[0][0, 1, 2, 3] = np.nan  # a NaN query: its row becomes NaN
        data[1][1, 0, 4, 0] = np.inf  # an infinite key: NaN where it meets a query

    with np.errstate(invalid="ignore"):
        out = run_case(ctx, queue, build, specials=specials, mask_shape=(2, 3, 7, 9))
    assert np.isnan(out[0, 1, 2]).all()


def test_all_keys_masked_row(ctx, queue, build):
    """A row whose keys are all -inf: output 0, lse +inf (checked in run_case), zero
    gradients; with every row masked too."""
    out = run_case(ctx, queue, build, mask_shape=(7, 9), mask_rows_inf=(2, 6))
    assert (out[:, :, 2] == 0).all() and (out[:, :, 6] == 0).all()
    out = run_case(ctx, queue, build, mask_shape=(7, 9), mask_rows_inf=range(7), L=7, S=9)
    assert (out == 0).all()
