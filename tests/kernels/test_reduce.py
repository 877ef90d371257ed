"""Tests for kernels/reduce.cl against a numpy float64 / int64 reference.

Every launch follows the geometry stated at the top of reduce.cl:
  reduce_rows    global = {M*LWS},           local = {LWS}
  reduce_cols    global = {roundup(M, LWS)}, local = {LWS}
  reduce_partial global = {M*G*LWS},         local = {LWS}, then reduce_rows with IN_T=ACC_T
                 and no element map on the partials (in_off=0, sm=G, sk=1, K=G) and the scale,
                 as the host does.
The element maps (MAP_*) and finishes (FIN_*) are checked against numpy on the mapped values.
"""

import pathlib

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, strided_input, to_f64, view2d

cl = pytest.importorskip("pyopencl")

# tag -> numpy dtype of REG_TYPE(tag) (scalar kernel arguments)
REG = dict(STORE, half=np.float32, bfloat16=np.float32)
# unit roundoff of the stored output type
OUT_EPS = {"float": 2.0**-24, "double": 2.0**-53, "half": 2.0**-11, "bfloat16": 2.0**-8}
ACC_EPS = {"float": 2.0**-24, "double": 2.0**-53}

OPS = ("sum", "prod", "max", "min")
KERNELS = ("rows", "cols", "partial")


def sum_acc(tag):
    """(ACC_T, OUT_T) the host uses for sum/prod of an input tag."""
    if tag in ("float", "half", "bfloat16"):
        return "float", "float"
    if tag == "double":
        return "double", "double"
    return "long", "long"


def minmax_acc(tag):
    """(ACC_T, OUT_T) for max/min as the host picks them: floats as for sums, integers
    accumulate in long and are stored in their own type."""
    if tag in FLOAT_TAGS:
        return sum_acc(tag)
    return "long", tag


def acc_out(tag, op):
    return sum_acc(tag) if op in ("sum", "prod") else minmax_acc(tag)


def from_f32(tag, x):
    """float32 values -> storage of a float tag (bfloat16 truncates to the upper 16 bits)."""
    x = np.asarray(x, dtype=np.float32)
    if tag == "bfloat16":
        return (x.view(np.uint32) >> 16).astype(np.uint16)
    return x.astype(STORE[tag])


def sentinel(tag):
    if tag in ("float", "double", "half"):
        return STORE[tag](np.nan)
    if tag == "bfloat16":
        return np.uint16(0x7FC0)
    if tag == "bool":
        return np.uint8(1)
    return STORE[tag](99)


def gen(rng, tag, op, shape):
    """Random data of a tag suitable for op (products stay near 1 / small integers)."""
    if tag in FLOAT_TAGS:
        if op == "prod":
            x = 1.0 + 0.01 * rng.standard_normal(shape)
            x *= rng.choice([-1.0, 1.0], size=shape)
        else:
            x = rng.standard_normal(shape) * 3.0
        if tag == "double":
            return x.astype(np.float64)
        return from_f32(tag, x.astype(np.float32))
    if tag == "bool":
        return rng.integers(0, 2, size=shape).astype(np.uint8)
    if op == "prod":
        lo, hi = (0, 4) if tag == "uchar" else (-4, 5)
        return rng.integers(lo, hi, size=shape).astype(STORE[tag])
    info = np.iinfo(STORE[tag])
    lo, hi = max(info.min, -(2**40)), min(info.max, 2**40)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(STORE[tag])


def reference(tag, op, vals, scale=None):
    """float64 (floats) or wrapped int64 (integers) reference over axis 1."""
    if tag in FLOAT_TAGS:
        with np.errstate(all="ignore"):
            r = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op](vals, axis=1)
            if op == "sum" and scale is not None:
                r = r * scale
        return r
    with np.errstate(all="ignore"):
        return {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op](
            vals.astype(np.int64), axis=1
        )


def _opts(in_tag, out_tag, acc_tag, op, lws, map_=None, fin=None):
    return (
        "-DIN_T=" + in_tag,
        "-DOUT_T=" + out_tag,
        "-DACC_T=" + acc_tag,
        "-DOP_" + op.upper(),
        f"-DLWS={lws}",
        *(["-DMAP_" + map_.upper()] if map_ else []),
        *(["-DFIN_" + fin.upper()] if fin else []),
    )


def run_reduce(
    ctx, queue, build, kernel, in_tag, op, flat, M, K, in_off, sm, sk,
    out_off=0, out_stride=1, scale=1, lws=256, G=4, chunk=None, acc_tag=None, out_tag=None,
    map_=None, fin=None, map_p=0.0, fin_p=0.0, row=None, K2=1, sk2=0,
):  # fmt: skip
    """Run one reduction as the host would; returns (out values, out tag, acc tag).
    map_/fin name a MAP_/FIN_ option ("abs", "sqrt", ...); row is MAP_SQDEV's per-row value.
    K2, sk2: element k = t*K2 + s of a row is at t*sk + s*sk2 (K2 = 1: at k*sk)."""
    acc_d, out_d = acc_out(in_tag, op)
    acc_tag = acc_tag or acc_d
    out_tag = out_tag or out_d
    n_out = out_off + (M - 1) * out_stride + 1 + 2
    out_fill = np.full(n_out, 77, dtype=STORE[out_tag])
    out_buf = buffer(ctx, out_fill)
    in_buf = buffer(ctx, flat)
    acc_t = REG[acc_tag]
    scale_arg, map_p_arg, fin_p_arg = acc_t(scale), acc_t(map_p), acc_t(fin_p)
    aux_off = 2  # the row values live inside a larger allocation
    aux = np.zeros(aux_off + M, dtype=STORE[acc_tag])
    if row is not None:
        aux[aux_off:] = row
    aux_buf = buffer(ctx, aux)
    prog = build("reduce", _opts(in_tag, out_tag, acc_tag, op, lws, map_, fin))
    u64, i64 = np.uint64, np.int64
    tail = (scale_arg, map_p_arg, fin_p_arg, aux_buf, u64(aux_off))
    if kernel == "rows":
        cl.Kernel(prog, "reduce_rows")(
            queue, (M * lws,), (lws,), u64(M), u64(K), in_buf, u64(in_off), i64(sm), i64(sk),
            u64(K2), i64(sk2), out_buf, u64(out_off), i64(out_stride), *tail,
        )  # fmt: skip
    elif kernel == "cols":
        gsz = -(-M // lws) * lws
        cl.Kernel(prog, "reduce_cols")(
            queue, (gsz,), (lws,), u64(M), u64(K), in_buf, u64(in_off), i64(sm), i64(sk),
            u64(K2), i64(sk2), out_buf, u64(out_off), i64(out_stride), *tail,
        )  # fmt: skip
    else:
        if chunk is None:
            chunk = max(1, -(-K // G))
        part_off = 3  # partials live inside a larger allocation on the device
        part = np.full(part_off + M * G, 55, dtype=STORE[acc_tag])
        part_buf = buffer(ctx, part)
        cl.Kernel(prog, "reduce_partial")(
            queue, (M * G * lws,), (lws,), u64(M), u64(K), in_buf, u64(in_off), i64(sm), i64(sk),
            u64(K2), i64(sk2), part_buf, u64(part_off), u64(G), u64(chunk), map_p_arg, aux_buf,
            u64(aux_off),
        )  # fmt: skip
        prog2 = build("reduce", _opts(acc_tag, out_tag, acc_tag, op, lws, None, fin))
        cl.Kernel(prog2, "reduce_rows")(
            queue, (M * lws,), (lws,), u64(M), u64(G), part_buf, u64(part_off), i64(G), i64(1),
            u64(1), i64(0), out_buf, u64(out_off), i64(out_stride), *tail,
        )  # fmt: skip
    res = np.empty_like(out_fill)
    cl.enqueue_copy(queue, res, out_buf)
    queue.finish()
    idx = out_off + np.arange(M) * out_stride
    untouched = np.ones(n_out, dtype=bool)
    untouched[idx] = False
    assert np.array_equal(res[untouched], out_fill[untouched]), "wrote outside the outputs"
    return res[idx], out_tag, acc_tag


def check(in_tag, op, out_tag, acc_tag, got, vals, scale=None):
    """Compare kernel output with the reference computed from the stored input values."""
    ref = reference(in_tag, op, vals, scale)
    if out_tag not in FLOAT_TAGS:
        want = ref.astype(STORE[out_tag]) if out_tag != "bool" else (ref != 0).astype(np.uint8)
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))
        return
    got = to_f64(out_tag, got)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg="NaN positions differ")
    inf = np.isinf(ref)
    np.testing.assert_array_equal(got[inf], ref[inf], err_msg="Inf values differ")
    ok = ~nan & ~inf
    ref, got, v = ref[ok], got[ok], vals[ok]
    eps_out = OUT_EPS[out_tag]
    eps = ACC_EPS[acc_tag]
    K = vals.shape[1]
    if op == "sum":
        mag = np.sum(np.abs(v), axis=1) * (1.0 if scale is None else abs(scale))
        tol = 200 * eps * mag + 2 * eps_out * np.abs(ref)
    elif op == "prod":
        tol = (4 * K * eps + 2 * eps_out) * np.abs(ref)
    else:
        # max/min pick an input; only the output rounding can change it
        tol = eps_out * np.abs(ref)
    err = np.abs(got - ref)
    worst = int(np.argmax(err - tol)) if err.size else 0
    assert np.all(err <= tol + 1e-300), f"err {err[worst]:g} > tol {tol[worst]:g}"


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): keep shapes small there."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


# (M, K) shapes: single row/column, odd sizes, M > K, K around multiples of LWS and RED_BLOCK
SHAPES = [(1, 1), (1, 300), (7, 1), (5, 37), (33, 5), (3, 1000), (130, 20), (2, 65)]
SHAPES_SLOW = [(1, 1), (1, 70), (5, 1), (3, 9), (9, 4)]


def layouts(M, K):
    """(name, in_off, sm, sk, out_off, out_stride) for a shape."""
    return [
        ("row", 0, K, 1, 0, 1),
        ("col", 0, 1, M, 0, 1),
        ("row_padded", 5, K + 3, 1, 2, 3),
        ("col_padded", 3, 1, M + 2, 1, 2),
        ("strided", 7, 2 * K + 1, 2, 4, 5),
        ("col_strided", 2, 3, 3 * M + 1, 0, 1),
    ]


INT_TAGS = ("int", "long", "short", "char", "uchar", "bool")
ALL_TAGS = FLOAT_TAGS + INT_TAGS


@pytest.mark.parametrize("tag", ALL_TAGS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_reduce_layouts(ctx, queue, build, has_fp64, rng, slow, kernel, op, tag):
    need_fp64(has_fp64, tag)
    lws = 16 if slow else 256
    for M, K in SHAPES_SLOW if slow else SHAPES:
        for name, in_off, sm, sk, out_off, out_stride in layouts(M, K):
            data = gen(rng, tag, op, (M, K))
            flat = strided_input(sentinel(tag), data, in_off, sm, sk)
            got, out_tag, acc_tag = run_reduce(
                ctx, queue, build, kernel, tag, op, flat, M, K, in_off, sm, sk,
                out_off=out_off, out_stride=out_stride, lws=lws,
                G=3 if kernel == "partial" else 4,
            )  # fmt: skip
            vals = to_f64(tag, view2d(flat, M, K, in_off, sm, sk))
            try:
                check(tag, op, out_tag, acc_tag, got, vals)
            except AssertionError as e:
                raise AssertionError(f"M={M} K={K} layout={name}: {e}") from None


@pytest.mark.parametrize("kernel", KERNELS)
def test_broadcast_row_stride_zero(ctx, queue, build, rng, kernel):
    M, K = 6, 50
    data = np.broadcast_to(gen(rng, "float", "sum", (1, K)), (M, K))
    flat = strided_input(sentinel("float"), data[:1], 2, 0, 1)
    got, out_tag, acc_tag = run_reduce(
        ctx, queue, build, kernel, "float", "sum", flat, M, K, 2, 0, 1
    )
    check("float", "sum", out_tag, acc_tag, got, to_f64("float", view2d(flat, M, K, 2, 0, 1)))


@pytest.mark.parametrize("tag", ("float", "double", "half", "int", "char"))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_two_runs(ctx, queue, build, has_fp64, rng, slow, kernel, op, tag):
    """Rows whose elements are a K1 x K2 grid (k = t*K2 + s at t*sk + s*sk2): a channel of an
    NCHW tensor reduced over (N, H, W), with odd sizes, K2 around the work-group size, padding
    between runs, and runs visited backwards in memory (sk < sk2)."""
    need_fp64(has_fp64, tag)
    lws = 16 if slow else 64
    cases = (
        [(3, 2, 5), (4, 3, 1), (1, 7, 17)]
        if slow
        else [(3, 2, 5), (5, 7, 63), (2, 3, 65), (64, 4, 129), (1, 300, 3), (6, 1, 40)]
    )
    for M, K1, K2 in cases:
        K = K1 * K2
        data = gen(rng, tag, op, (K1, M, K2))
        for name, in_off, sm, sk, sk2, pad in (
            ("nchw", 0, K2, M * K2, 1, 0),
            ("padded", 5, K2 + 2, M * (K2 + 2) + 3, 1, 4),
            ("inner_outer", 2, 1, M, M * K1, 1),  # (K2, K1, M) layout: s is the outer run
        ):
            span = in_off + (M - 1) * sm + (K1 - 1) * sk + (K2 - 1) * sk2 + 1 + pad
            flat = np.full(span, sentinel(tag))
            vals_raw = np.empty((M, K), dtype=flat.dtype)
            for t in range(K1):
                for m in range(M):
                    idx = in_off + m * sm + t * sk + np.arange(K2) * sk2
                    flat[idx] = data[t, m]
                    vals_raw[m, t * K2 : (t + 1) * K2] = data[t, m]
            got, out_tag, acc_tag = run_reduce(
                ctx, queue, build, kernel, tag, op, flat, M, K, in_off, sm, sk, lws=lws,
                G=3, K2=K2, sk2=sk2,
            )  # fmt: skip
            try:
                check(tag, op, out_tag, acc_tag, got, to_f64(tag, vals_raw))
            except AssertionError as e:
                raise AssertionError(f"M={M} K1={K1} K2={K2} layout={name}: {e}") from None


@pytest.mark.parametrize("tag", ("float", "double", "half", "bfloat16", "int", "bool", "uchar"))
@pytest.mark.parametrize("op", ("sum", "prod"))
@pytest.mark.parametrize("kernel", KERNELS)
def test_k_zero(ctx, queue, build, has_fp64, kernel, op, tag):
    need_fp64(has_fp64, tag)
    M = 5
    flat = np.full(4, sentinel(tag), dtype=STORE[tag])
    got, out_tag, _ = run_reduce(
        ctx, queue, build, kernel, tag, op, flat, M, 0, 1, 0, 1, out_off=1, out_stride=2, lws=32
    )
    want = 0 if op == "sum" else 1
    np.testing.assert_array_equal(to_f64(out_tag, got), np.full(M, want))


@pytest.mark.parametrize("op", ("prod", "max", "min", "sum"))
@pytest.mark.parametrize("tag", ("float", "int", "char"))
def test_partial_empty_chunks(ctx, queue, build, rng, op, tag):
    """More chunks than needed: trailing chunks are empty and must yield the identity."""
    M, K = 3, 10
    data = gen(rng, tag, op, (M, K))
    flat = strided_input(sentinel(tag), data, 1, K, 1)
    for G, chunk in ((4, 5), (8, 2), (12, 1), (3, 100)):
        got, out_tag, acc_tag = run_reduce(
            ctx, queue, build, "partial", tag, op, flat, M, K, 1, K, 1, G=G, chunk=chunk, lws=8
        )
        check(tag, op, out_tag, acc_tag, got, to_f64(tag, view2d(flat, M, K, 1, K, 1)))


@pytest.mark.parametrize("tag", ("float", "double", "half", "bfloat16"))
@pytest.mark.parametrize("kernel", KERNELS)
def test_mean_scale(ctx, queue, build, has_fp64, rng, kernel, tag):
    need_fp64(has_fp64, tag)
    for M, K in ((4, 33), (1, 1000), (40, 7)):
        data = gen(rng, tag, "sum", (M, K))
        flat = strided_input(sentinel(tag), data, 0, K, 1)
        scale = 1.0 / K
        got, out_tag, acc_tag = run_reduce(
            ctx, queue, build, kernel, tag, "sum", flat, M, K, 0, K, 1, scale=scale, lws=64
        )
        vals = to_f64(tag, view2d(flat, M, K, 0, K, 1))
        check(tag, "sum", out_tag, acc_tag, got, vals, scale=float(REG[acc_tag](scale)))


@pytest.mark.parametrize("tag", ("half", "bfloat16"))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_low_precision_output(ctx, queue, build, rng, kernel, op, tag):
    """OUT_T = half / bfloat16 (rounded store), accumulation in float."""
    M, K = 9, 77
    data = gen(rng, tag, op, (M, K))
    flat = strided_input(sentinel(tag), data, 3, 1, M)
    got, out_tag, acc_tag = run_reduce(
        ctx, queue, build, kernel, tag, op, flat, M, K, 3, 1, M, out_tag=tag, lws=32
    )
    check(tag, op, out_tag, acc_tag, got, to_f64(tag, view2d(flat, M, K, 3, 1, M)))


def _special_rows(tag, K):
    """Rows exercising NaN / Inf propagation; returns float32 data (M, K)."""
    rng = np.random.default_rng(7)
    base = (rng.standard_normal((10, K)) * 2).astype(np.float32)
    inf, nan = np.float32(np.inf), np.float32(np.nan)
    base[0, K // 2] = nan  # NaN in the middle
    base[1, 0] = nan  # NaN first
    base[2, K - 1] = nan  # NaN last
    base[3, 3] = inf  # +Inf
    base[4, 5] = -inf  # -Inf
    base[5, 1], base[5, K - 2] = inf, -inf  # +Inf and -Inf: sum NaN
    base[6, :] = -inf  # all -Inf: max is -Inf
    base[7, :] = nan  # all NaN
    base[8, 2], base[8, 4] = inf, nan  # Inf and NaN: NaN
    # row 9 stays finite
    return base


@pytest.mark.parametrize("tag", ("float", "double", "half", "bfloat16"))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_nan_inf(ctx, queue, build, has_fp64, kernel, op, tag):
    need_fp64(has_fp64, tag)
    for K in (7, 300):
        data32 = _special_rows(tag, K)
        M = data32.shape[0]
        data = data32.astype(np.float64) if tag == "double" else from_f32(tag, data32)
        for in_off, sm, sk in ((0, K, 1), (2, 1, M + 1)):
            flat = strided_input(sentinel(tag), data, in_off, sm, sk)
            got, out_tag, acc_tag = run_reduce(
                ctx, queue, build, kernel, tag, op, flat, M, K, in_off, sm, sk, lws=64
            )
            vals = to_f64(tag, view2d(flat, M, K, in_off, sm, sk))
            check(tag, op, out_tag, acc_tag, got, vals)
            res = to_f64(out_tag, got)
            ref = reference(tag, op, vals)
            # explicit expectations (the reference could hide a shared misconception)
            assert np.isnan(res[[0, 1, 2, 7, 8]]).all()
            assert not np.isnan(res[9])
            if op == "sum":
                assert np.isnan(res[5]) and res[3] == np.inf and res[4] == -np.inf
            if op == "max":
                assert res[3] == np.inf and res[6] == -np.inf and res[5] == np.inf
                assert res[4] == ref[4] and np.isfinite(res[4])
            if op == "min":
                assert res[4] == -np.inf and res[6] == -np.inf and res[5] == -np.inf


@pytest.mark.parametrize("lws", (1, 2, 8, 64, 512))
@pytest.mark.parametrize("op", ("sum", "max"))
@pytest.mark.parametrize("kernel", KERNELS)
def test_local_sizes(ctx, queue, build, rng, kernel, op, lws):
    if lws > ctx.devices[0].max_work_group_size:
        pytest.skip("local size too large for the device")
    for tag in ("float", "int"):
        for M, K in ((3, 1), (5, 700), (11, 13)):
            data = gen(rng, tag, op, (M, K))
            flat = strided_input(sentinel(tag), data, 1, K + 1, 1)
            got, out_tag, acc_tag = run_reduce(
                ctx, queue, build, kernel, tag, op, flat, M, K, 1, K + 1, 1, lws=lws, G=5
            )
            check(tag, op, out_tag, acc_tag, got, to_f64(tag, view2d(flat, M, K, 1, K + 1, 1)))


@pytest.mark.parametrize(
    "tag,op",
    [
        ("float", "sum"),
        ("float", "max"),
        ("float", "min"),
        ("double", "sum"),
        ("int", "sum"),
        ("bfloat16", "sum"),
        ("half", "sum"),
    ],
)
def test_large_row_partial(ctx, queue, build, has_fp64, rng, slow, tag, op):
    """K = 2^20 + 3 split over G chunks, then finished by reduce_rows (sum also as mean)."""
    need_fp64(has_fp64, tag)
    if slow:
        pytest.skip("too large for a simulator")
    K = 2**20 + 3
    for M, in_off, sm, sk, G in ((1, 0, K, 1, 64), (2, 3, 1, 2, 37)):
        data = gen(rng, tag, op, (M, K))
        if op == "sum" and tag in FLOAT_TAGS:
            data_f = to_f64(tag, data) + 0.5  # nonzero mean so the sum is not near zero
            data = data_f if tag == "double" else from_f32(tag, data_f.astype(np.float32))
        flat = strided_input(sentinel(tag), data, in_off, sm, sk)
        vals = to_f64(tag, view2d(flat, M, K, in_off, sm, sk))
        got, out_tag, acc_tag = run_reduce(
            ctx, queue, build, "partial", tag, op, flat, M, K, in_off, sm, sk, G=G
        )
        check(tag, op, out_tag, acc_tag, got, vals)
        if op == "sum" and tag in FLOAT_TAGS:
            ref = reference(tag, op, vals)
            # much tighter than the bound used in check(): relative error of the sum itself
            rel = np.abs(to_f64(out_tag, got) - ref) / np.abs(ref)
            assert np.all(rel < 1e-5 if acc_tag == "float" else 1e-12), rel
            scale = 1.0 / K
            got, out_tag, acc_tag = run_reduce(
                ctx, queue, build, "partial", tag, op, flat, M, K, in_off, sm, sk, G=G,
                scale=scale,
            )  # fmt: skip
            check(tag, op, out_tag, acc_tag, got, vals, scale=float(REG[acc_tag](scale)))


def test_large_row_single_group(ctx, queue, build, rng, slow):
    """A long row through reduce_rows alone (one work-group) still sums accurately."""
    if slow:
        pytest.skip("too large for a simulator")
    K = 2**20 + 3
    data = (rng.standard_normal((1, K)) + 0.5).astype(np.float32)
    flat = strided_input(sentinel("float"), data, 0, K, 1)
    got, out_tag, acc_tag = run_reduce(
        ctx, queue, build, "rows", "float", "sum", flat, 1, K, 0, K, 1
    )
    ref = data.astype(np.float64).sum()
    assert abs(float(got[0]) - ref) <= 1e-5 * abs(ref)


def test_int_sum_widens(ctx, queue, build):
    """int32 sums accumulate in long (no 32-bit overflow); uchar/bool count without wrapping."""
    K = 1000
    for tag, val, want in (
        ("int", 2**31 - 1, K * (2**31 - 1)),
        ("uchar", 255, 255 * K),
        ("bool", 1, K),
        ("char", -128, -128 * K),
    ):
        data = np.full((2, K), val, dtype=STORE[tag])
        flat = strided_input(sentinel(tag), data, 0, K, 1)
        for kernel in KERNELS:
            got, out_tag, _ = run_reduce(ctx, queue, build, kernel, tag, "sum", flat, 2, K, 0, K, 1)
            assert out_tag == "long"
            np.testing.assert_array_equal(got, np.full(2, want, dtype=np.int64))


@pytest.mark.parametrize("own_acc", (False, True))
def test_integer_minmax_limits(ctx, queue, build, own_acc):
    """Extreme integer values survive the max/min identities (type limits), with ACC_T=long
    (what the host uses) and with ACC_T equal to the input tag."""
    for tag in ("int", "long", "char", "short", "uchar", "bool"):
        if tag == "bool":
            lo, hi = 0, 1
        else:
            lo, hi = np.iinfo(STORE[tag]).min, np.iinfo(STORE[tag]).max
        data = np.array([[lo] * 5, [hi] * 5, [lo, hi, lo, hi, lo]]).astype(STORE[tag])
        flat = strided_input(sentinel(tag), data, 0, 5, 1)
        for kernel in KERNELS:
            for op in ("max", "min"):
                got, out_tag, acc_tag = run_reduce(
                    ctx, queue, build, kernel, tag, op, flat, 3, 5, 0, 5, 1, lws=4, G=3, chunk=2,
                    acc_tag=tag if own_acc else None,
                )  # fmt: skip
                check(tag, op, out_tag, acc_tag, got, to_f64(tag, data))


def test_source_states_geometry():
    src = (pathlib.Path(__file__).resolve().parents[2] / "kernels" / "reduce.cl").read_text()
    head = src.split("#ifndef LWS")[0]
    for text in ("global = {M*LWS}", "global = {roundup(M, LWS)}", "global = {M*G*LWS}"):
        assert text in head


# ------------------------------------------------------------------------------------------
# Element maps and finishes (norms, count_nonzero, nansum, variance)


def mapped(map_, vals, map_p=0.0, row=None):
    """numpy float64 image of reduce.cl's element map."""
    with np.errstate(all="ignore"):
        if map_ == "abs":
            return np.abs(vals)
        if map_ == "square":
            return vals * vals
        if map_ == "pow":
            return np.abs(vals) ** map_p
        if map_ == "nonzero":
            return (vals != 0).astype(np.float64)
        if map_ == "nanzero":
            return np.where(np.isnan(vals), 0.0, vals)
        if map_ == "sqdev":
            return (vals - row[:, None]) ** 2
    return vals


def finished(fin, v, fin_p=0.0):
    with np.errstate(all="ignore"):
        if fin == "sqrt":
            return np.sqrt(v)
        if fin == "pow":
            return v**fin_p
    return v


# (map, finish, op, map_p, fin_p): every map and finish the host uses
MAP_CASES = [
    ("abs", None, "sum", 0.0, 0.0),  # 1-norm
    ("abs", None, "max", 0.0, 0.0),  # inf-norm
    ("abs", None, "min", 0.0, 0.0),  # -inf-norm
    ("square", "sqrt", "sum", 0.0, 0.0),  # 2-norm
    ("pow", "pow", "sum", 3.0, 1.0 / 3.0),  # 3-norm (whole p: by multiplication)
    ("pow", "pow", "sum", -2.0, -0.5),  # whole negative p
    ("pow", "pow", "sum", 17.0, 1.0 / 17.0),  # whole, but through pow()
    ("pow", "pow", "sum", 0.5, 2.0),  # fractional norm
    ("pow", "pow", "sum", -1.5, -1.0 / 1.5),  # negative p
    ("nonzero", None, "sum", 0.0, 0.0),  # 0-norm
    ("nanzero", None, "sum", 0.0, 0.0),  # nansum
    ("sqdev", "sqrt", "sum", 0.0, 0.0),  # std (the scale is 1 / (K - correction))
]


def _case_id(case):
    map_, fin, op, map_p, _ = case
    return f"{map_}-{op}{'-' + fin if fin else ''}{f'-p{map_p:g}' if map_ == 'pow' else ''}"


@pytest.mark.parametrize("case", MAP_CASES, ids=_case_id)
@pytest.mark.parametrize("kernel", KERNELS)
def test_maps_and_finishes(ctx, queue, build, rng, slow, kernel, case):
    map_, fin, op, map_p, fin_p = case
    tag = "float"
    shapes = ((3, 9), (1, 70)) if slow else ((5, 37), (1, 1000), (130, 20))
    for M, K in shapes:
        data = (rng.standard_normal((M, K)) * 3).astype(np.float32)
        data[:, ::7] = 0.0  # zeros: the 0-norm counts them out, negative p sends them to inf
        if map_ == "nanzero":
            data[0, 1] = np.nan
            data[-1, -1] = np.nan
            data[0, 2] = np.inf
        if map_ == "pow" and map_p < 0:
            data[:, ::7] = 0.5  # one zero would make every such row's norm 0
        for in_off, sm, sk in ((1, K, 1), (2, 1, M + 1)):
            flat = strided_input(sentinel(tag), data, in_off, sm, sk)
            vals = to_f64(tag, view2d(flat, M, K, in_off, sm, sk))
            row = vals.mean(axis=1) + 0.25 if map_ == "sqdev" else None
            scale = 1.0 / (K - 0.5) if map_ == "sqdev" else 1.0
            got, out_tag, acc_tag = run_reduce(
                ctx, queue, build, kernel, tag, op, flat, M, K, in_off, sm, sk, out_stride=2,
                lws=32 if slow else 64, G=3, map_=map_, fin=fin, map_p=map_p, fin_p=fin_p,
                row=None if row is None else row.astype(np.float32), scale=scale,
            )  # fmt: skip
            if row is not None:
                row = row.astype(np.float32).astype(np.float64)
            m = mapped(map_, vals, map_p, row)
            red = {"sum": np.sum, "max": np.max, "min": np.min}[op](m, axis=1)
            ref = finished(fin, red * (scale if op == "sum" else 1.0), fin_p)
            got = to_f64(out_tag, got)
            # float accumulation of |x|^p and friends: a few hundred eps of the magnitude
            mag = finished(fin, np.sum(np.abs(m), axis=1) * scale, fin_p) if op == "sum" else ref
            tol = 2e-5 * np.abs(mag) + 1e-30
            with np.errstate(invalid="ignore"):
                err = np.where(got == ref, 0.0, np.abs(got - ref))  # equal infinities
            assert np.all(err <= tol), (M, K, in_off, sm, sk, got, ref)


@pytest.mark.parametrize("tag", ("half", "int", "bool", "uchar", "bfloat16"))
def test_nonzero_map_before_conversion(ctx, queue, build, rng, tag):
    """count_nonzero of any dtype: x != 0 is tested on the element, so 0.5 counts in a long
    accumulator and -0.0 does not."""
    M, K = 4, 50
    if tag in ("half", "bfloat16"):
        data32 = rng.choice(np.array([0.0, -0.0, 0.5, -0.25, 3.0], np.float32), size=(M, K))
        data = from_f32(tag, data32)
    else:
        data = gen(rng, tag, "sum", (M, K))
        data[:, ::3] = 0
    flat = strided_input(sentinel(tag), data, 0, K, 1)
    for kernel in KERNELS:
        got, out_tag, _ = run_reduce(
            ctx, queue, build, kernel, tag, "sum", flat, M, K, 0, K, 1, acc_tag="long",
            out_tag="long", map_="nonzero", lws=16, G=3,
        )  # fmt: skip
        want = (to_f64(tag, data) != 0).sum(axis=1)
        np.testing.assert_array_equal(got, want)


def test_sqdev_double_and_large_offset(ctx, queue, build, has_fp64, rng, slow):
    """The variance pass keeps its accuracy when the data sit far from zero (the row mean is
    subtracted before squaring), in float and double."""
    K = 300 if slow else 20000
    for tag in ("float", "double"):
        need_fp64(has_fp64, tag) if tag == "double" else None
        data = (1000.0 + rng.standard_normal((2, K))).astype(STORE[tag])
        vals = data.astype(np.float64)
        row = vals.mean(axis=1).astype(STORE[tag])
        flat = strided_input(sentinel(tag), data, 0, K, 1)
        for kernel in KERNELS:
            got, out_tag, _ = run_reduce(
                ctx, queue, build, kernel, tag, "sum", flat, 2, K, 0, K, 1, map_="sqdev",
                row=row, scale=1.0 / (K - 1), lws=64, G=5,
            )  # fmt: skip
            ref = ((vals - row.astype(np.float64)[:, None]) ** 2).sum(axis=1) / (K - 1)
            rel = np.abs(to_f64(out_tag, got) - ref) / ref
            assert np.all(rel < (1e-5 if tag == "float" else 1e-12)), rel
