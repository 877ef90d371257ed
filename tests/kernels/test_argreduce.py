"""Tests for kernels/argreduce.cl against NumPy (argmax/argmin over float64 / int64 values).

Launched as the header of argreduce.cl states and csrc/ops/Reduce.cpp does it: one work-group
of LWS work-items per row, global = {M*LWS}, local = {LWS} (the host uses LWS=64), over the view
v[m, k] = in[in_off + m*sm + k*sk]. Like torch, the first index of the extreme wins and the
first NaN wins for both argmax and argmin; with WITH_VALUES the chosen value is stored too.
NumPy's argmax/argmin follow the same rules; rows built for ties and NaN / Inf also check the
expected index explicitly.
"""

import pathlib

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, strided_input, to_f64, view2d

cl = pytest.importorskip("pyopencl")

TAGS = ("float", "double", "half", "bfloat16", "int", "long", "uchar")
HOST_LWS = 64
IDX_FILL = -7  # written to every index slot before a launch


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): keep shapes small there."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


def store(tag, x):
    """float64 values (exactly representable in float32) -> storage of tag."""
    x = np.asarray(x)
    if tag == "bfloat16":
        return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return x.astype(STORE[tag])


def gen(rng, tag, shape, ties):
    """Random values of a tag; with ties, drawn from a small pool so that rows repeat their
    extreme (the first occurrence must win)."""
    if tag in FLOAT_TAGS:
        if ties:
            x = rng.integers(-6, 7, size=shape) * 0.5
        else:
            x = rng.standard_normal(shape) * 4
            if tag != "double":
                # exactly representable in the tag (bfloat16 keeps 8 significant bits)
                x = x.astype(np.float32)
                x = to_f64(tag, store(tag, x))
        return store(tag, x)
    if ties:
        lo, hi = (0, 5) if tag == "uchar" else (-3, 4)
        return rng.integers(lo, hi, size=shape).astype(STORE[tag])
    if tag == "long":
        # values beyond float's precision: comparisons must not go through float
        return (2**60 + rng.integers(-(2**20), 2**20, size=shape)).astype(np.int64)
    info = np.iinfo(STORE[tag])
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(STORE[tag])


def sentinel(tag):
    return store(tag, np.float64(-1.5)) if tag in FLOAT_TAGS else STORE[tag](42)


def run_arg(ctx, queue, build, tag, op, flat, M, K, in_off, sm, sk, values=True,
            idx_off=2, val_off=1, lws=HOST_LWS):  # fmt: skip
    """Launch arg_reduce like the host; returns (indices, values or None).

    Slots of the index and value buffers other than [off, off + M) must stay untouched. Without
    WITH_VALUES a separate value buffer must not be written at all."""
    opts = [f"-DIN_T={tag}", f"-DOP_ARG{op.upper()}", f"-DLWS={lws}"]
    if values:
        opts.append("-DWITH_VALUES")
    prg = build("argreduce", opts)
    idx_fill = np.full(idx_off + M + 2, IDX_FILL, dtype=np.int64)
    val_fill = np.full(val_off + M + 2, sentinel(tag), dtype=STORE[tag])
    in_buf, idx_buf, val_buf = buffer(ctx, flat), buffer(ctx, idx_fill), buffer(ctx, val_fill)
    u64, i64 = np.uint64, np.int64
    cl.Kernel(prg, "arg_reduce")(
        queue, (M * lws,), (lws,), u64(M), u64(K), in_buf, u64(in_off), i64(sm), i64(sk),
        idx_buf, u64(idx_off), val_buf, u64(val_off), u64(1), u64(K), idx_buf, u64(0),
    )  # fmt: skip
    idx = np.empty_like(idx_fill)
    val = np.empty_like(val_fill)
    cl.enqueue_copy(queue, idx, idx_buf)
    cl.enqueue_copy(queue, val, val_buf)
    queue.finish()
    keep = np.ones(len(idx), bool)
    keep[idx_off : idx_off + M] = False
    assert (idx[keep] == IDX_FILL).all(), "wrote outside the index outputs"
    if not values:
        assert np.array_equal(val, val_fill), "wrote values without WITH_VALUES"
        return idx[idx_off : idx_off + M], None
    keep = np.ones(len(val), bool)
    keep[val_off : val_off + M] = False
    assert np.array_equal(val[keep], val_fill[keep]), "wrote outside the value outputs"
    return idx[idx_off : idx_off + M], val[val_off : val_off + M]


def check(tag, op, vals, idx, val):
    """vals: the (M, K) input as float64 / int64; idx, val: the kernel's outputs."""
    want = (np.argmax if op == "max" else np.argmin)(vals, axis=1)
    np.testing.assert_array_equal(idx, want)
    if val is not None:
        picked = vals[np.arange(len(want)), want]
        got = to_f64(tag, val)
        np.testing.assert_array_equal(got, picked)  # NaN == NaN here
        finite = ~np.isnan(picked)
        assert (np.signbit(got[finite]) == np.signbit(picked[finite])).all()


def layouts(M, K):
    """(name, in_off, sm, sk): row-major, transposed (column-major), padded and step-sliced."""
    return [
        ("row", 0, K, 1),
        ("transposed", 0, 1, M),
        ("row_padded", 5, K + 3, 1),
        ("transposed_strided", 3, 2, 2 * M + 1),
        ("strided", 7, 2 * K + 1, 2),
    ]


KS = (1, 7, 255, 256, 1000)
MS = (1, 3, 20)


# every tag with WITH_VALUES (what max/min along a dim use); indices only (argmax/argmin) for
# two tags: the option only adds the value store
VARIANTS = [(tag, True) for tag in TAGS] + [(tag, False) for tag in ("float", "long")]


@pytest.mark.parametrize("op", ("max", "min"))
@pytest.mark.parametrize(
    "tag,values", VARIANTS, ids=[f"{t}-{'values' if v else 'indices'}" for t, v in VARIANTS]
)
def test_argreduce(ctx, queue, build, has_fp64, rng, slow, tag, values, op):
    need_fp64(has_fp64, tag)
    for K in KS:
        for M in (1, 3) if slow else MS:
            if slow and M * K > 800:
                continue
            for ties in (False, True):
                for name, in_off, sm, sk in layouts(M, K)[:: 2 if slow else 1]:
                    data = gen(rng, tag, (M, K), ties)
                    flat = strided_input(sentinel(tag), data, in_off, sm, sk)
                    idx, val = run_arg(
                        ctx, queue, build, tag, op, flat, M, K, in_off, sm, sk, values=values
                    )
                    vals = to_f64(tag, view2d(flat, M, K, in_off, sm, sk))
                    try:
                        check(tag, op, vals, idx, val)
                    except AssertionError as e:
                        raise AssertionError(f"M={M} K={K} ties={ties} {name}: {e}") from None


def test_broadcast_rows(ctx, queue, build, rng):
    """sm = 0: every row reads the same data (an expanded tensor) and gets the same answer."""
    M, K = 5, 300
    data = gen(rng, "float", (1, K), ties=True)
    flat = strided_input(sentinel("float"), data, 4, 0, 1)
    for op in ("max", "min"):
        idx, val = run_arg(ctx, queue, build, "float", op, flat, M, K, 4, 0, 1)
        check("float", op, to_f64("float", view2d(flat, M, K, 4, 0, 1)), idx, val)
        assert (idx == idx[0]).all()


def _special_rows(K):
    """Rows with NaN / Inf at known places; returns (float64 data (M, K), expected argmax,
    expected argmin)."""
    rng = np.random.default_rng(11)
    x = np.round(rng.standard_normal((12, K)) * 2, 2)
    nan, inf = np.nan, np.inf
    a, b = K // 3, K - 2
    x[0, a] = nan  # one NaN in the middle: chosen by both
    x[1, [a, b]] = nan  # two NaNs: the first
    x[2, 0], x[2, b] = nan, inf  # NaN first, then +Inf
    x[3, [a, b]] = inf  # +Inf twice: argmax the first
    x[4, [a, b]] = -inf  # -Inf twice: argmin the first
    x[5, :] = -inf  # all -Inf: index 0 for both
    x[6, :] = inf  # all +Inf
    x[7, :] = nan  # all NaN
    x[8, a], x[8, b] = inf, -inf
    x[9, K - 1] = nan  # NaN last
    x[10, a], x[10, b] = inf, nan  # +Inf before a NaN: the NaN
    # two NaNs where the later one sits in a lower work-item (lanes 63 and 0 of 64)
    c = min(HOST_LWS - 1, K - 2)
    x[11, [c, c + 1]] = nan
    amax = np.argmax(np.where(np.isnan(x), -inf, x), axis=1)  # the first maximum, without NaN
    amin = np.argmin(np.where(np.isnan(x), inf, x), axis=1)
    first_nan = {0: a, 1: a, 2: 0, 7: 0, 9: K - 1, 10: b, 11: c}
    explicit = {3: (a, None), 4: (None, a), 5: (0, 0), 6: (0, 0), 8: (a, b)}
    for row, k in first_nan.items():
        amax[row] = amin[row] = k
    for row, (kmax, kmin) in explicit.items():
        if kmax is not None:
            amax[row] = kmax
        if kmin is not None:
            amin[row] = kmin
    return x, amax, amin


@pytest.mark.parametrize("tag", FLOAT_TAGS)
def test_nan_inf(ctx, queue, build, has_fp64, slow, tag):
    need_fp64(has_fp64, tag)
    for K in (7, 100) if slow else (7, 300):
        x, amax, amin = _special_rows(K)
        M = x.shape[0]
        data = store(tag, x)
        for in_off, sm, sk in ((0, K, 1), (2, 1, M + 1)):
            flat = strided_input(sentinel(tag), data, in_off, sm, sk)
            vals = to_f64(tag, view2d(flat, M, K, in_off, sm, sk))
            for op, want in (("max", amax), ("min", amin)):
                idx, val = run_arg(ctx, queue, build, tag, op, flat, M, K, in_off, sm, sk)
                np.testing.assert_array_equal(idx, want, err_msg=f"arg{op} K={K} sk={sk}")
                check(tag, op, vals, idx, val)
                got = to_f64(tag, val)
                assert np.isnan(got[[0, 1, 2, 7, 9, 10, 11]]).all()
                assert not np.isnan(got[[3, 4, 5, 6, 8]]).any()


def test_signed_zero_ties(ctx, queue, build):
    """-0.0 == +0.0: the first zero wins and its sign comes back with the value."""
    data = np.array([[-0.0, 0.0, -1.0], [0.0, -0.0, -1.0], [1.0, -0.0, 0.0]], np.float32)
    flat = strided_input(sentinel("float"), data, 1, 3, 1)
    idx, val = run_arg(ctx, queue, build, "float", "max", flat, 3, 3, 1, 3, 1)
    np.testing.assert_array_equal(idx, [0, 0, 0])
    np.testing.assert_array_equal(np.signbit(val), [True, False, False])
    idx, val = run_arg(ctx, queue, build, "float", "min", flat, 3, 3, 1, 3, 1)
    np.testing.assert_array_equal(idx, [2, 2, 1])
    np.testing.assert_array_equal(np.signbit(val), [True, True, True])


@pytest.mark.parametrize("lws", (1, 256))
def test_local_sizes(ctx, queue, build, rng, slow, lws):
    """Other work-group sizes than the host's 64 (the tree reduction over LWS slots)."""
    if lws > ctx.devices[0].max_work_group_size:
        pytest.skip("local size too large for the device")
    for M, K in ((2, 1), (3, 5), (4, 513)) if not slow else ((2, 1), (3, 5), (2, 130)):
        for ties in (False, True):
            data = gen(rng, "float", (M, K), ties)
            flat = strided_input(sentinel("float"), data, 2, 1, M + 1)
            vals = to_f64("float", view2d(flat, M, K, 2, 1, M + 1))
            idx, val = run_arg(ctx, queue, build, "float", "max", flat, M, K, 2, 1, M + 1, lws=lws)
            check("float", "max", vals, idx, val)


def test_integer_limits(ctx, queue, build):
    """Type limits are ordinary values (no sentinel clashes), each row's first extreme wins."""
    for tag in ("int", "long", "uchar"):
        info = np.iinfo(STORE[tag])
        lo, hi = int(info.min), int(info.max)
        data = np.array([[lo, lo, hi, hi], [hi, lo, hi, lo], [lo] * 4, [hi] * 4], dtype=STORE[tag])
        flat = strided_input(sentinel(tag), data, 0, 4, 1)
        for op, want in (("max", [2, 0, 0, 0]), ("min", [0, 1, 0, 0])):
            idx, val = run_arg(ctx, queue, build, tag, op, flat, 4, 4, 0, 4, 1)
            np.testing.assert_array_equal(idx, want)
            check(tag, op, to_f64(tag, data), idx, val)


def test_source_states_geometry_and_options():
    src = (pathlib.Path(__file__).resolve().parents[2] / "kernels" / "argreduce.cl").read_text()
    head = src.split("#ifndef LWS")[0]
    assert "global = {M*G*LWS}, local = {LWS}" in head
    assert "WITH_VALUES" in head and "first NaN" in head and "-DPARTS" in head


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("G", [2, 5])
def test_split_rows_and_parts_pass(ctx, queue, build, rng, op, G):
    """Rows split among G work-groups (value, index partials built WITH_VALUES), then the -DPARTS
    pass over them: the first index of the extreme and the first NaN win across chunks."""
    M, K, lws = 3, 1001, HOST_LWS
    data = rng.standard_normal((M, K)).astype(np.float32)
    data[0, [7, 900]] = 50.0 if op == "max" else -50.0  # a tie in different chunks
    data[1, [600, 20]] = np.nan  # the first NaN is in the first chunk
    data[2, :] = 1.0  # all equal: index 0
    chunk = (K + G - 1) // G
    u64, i64 = np.uint64, np.int64
    base = ["-DIN_T=float", f"-DOP_ARG{op.upper()}", f"-DLWS={lws}"]
    part = build("argreduce", base + ["-DWITH_VALUES"])
    final = build("argreduce", base + ["-DWITH_VALUES", "-DPARTS"])
    in_buf = buffer(ctx, data.ravel())
    pidx, pval = buffer(ctx, np.zeros(M * G, np.int64)), buffer(ctx, np.zeros(M * G, np.float32))
    cl.Kernel(part, "arg_reduce")(
        queue, (M * G * lws,), (lws,), u64(M), u64(K), in_buf, u64(0), i64(K), i64(1),
        pidx, u64(0), pval, u64(0), u64(G), u64(chunk), pidx, u64(0),
    )  # fmt: skip
    idx, val = buffer(ctx, np.zeros(M, np.int64)), buffer(ctx, np.zeros(M, np.float32))
    cl.Kernel(final, "arg_reduce")(
        queue, (M * lws,), (lws,), u64(M), u64(G), pval, u64(0), i64(G), i64(1),
        idx, u64(0), val, u64(0), u64(1), u64(G), pidx, u64(0),
    )  # fmt: skip
    got_i, got_v = np.zeros(M, np.int64), np.zeros(M, np.float32)
    cl.enqueue_copy(queue, got_i, idx)
    cl.enqueue_copy(queue, got_v, val)
    queue.finish()
    want = [7, 20, 0]
    np.testing.assert_array_equal(got_i, want)
    assert got_v[0] == data[0, 7] and np.isnan(got_v[1]) and got_v[2] == 1.0
