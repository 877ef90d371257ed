"""Tests for kernels/random.cl (Philox4x32-10) against a numpy implementation."""

import numpy as np
import pytest
from cl_tags import STORE as NP_DTYPE
from cl_tags import buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

LWS = 64  # default local size in kernels/random.cl
MASK32 = np.uint64(0xFFFFFFFF)
M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)

SENTINEL = {
    "float": np.nan,
    "double": np.nan,
    "half": np.nan,
    "bfloat16": 0x7FC1,
    "bool": 77,
    "uchar": 77,
}


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): fewer samples there, no statistical checks."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


def no_stats_on_oclgrind(slow):
    if slow:
        pytest.skip("statistical check needs ~1e6 samples: too slow on Oclgrind")


def philox4x32_10(c0, c1, c2, c3, key0, key1):
    """Reference Philox4x32-10 on arrays of 32-bit counter words (uint64 arithmetic)."""
    c = [np.asarray(x, dtype=np.uint64) & MASK32 for x in (c0, c1, c2, c3)]
    c = np.broadcast_arrays(*c)
    c = [x.copy() for x in c]
    k0, k1 = np.uint64(key0), np.uint64(key1)
    for r in range(10):
        if r:
            k0 = (k0 + W0) & MASK32
            k1 = (k1 + W1) & MASK32
        p0 = M0 * c[0]
        p1 = M1 * c[2]
        c = [
            (p1 >> np.uint64(32)) ^ c[1] ^ k0,
            p1 & MASK32,
            (p0 >> np.uint64(32)) ^ c[3] ^ k1,
            p0 & MASK32,
        ]
    return [x.astype(np.uint32) for x in c]


def philox_words(n_items, key0, key1, base):
    """x0..x3 for work-items 0..n_items-1, stacked as an (n_items, 4) uint32 array."""
    ctr = np.uint64(base) + np.arange(n_items, dtype=np.uint64)
    x = philox4x32_10(ctr & MASK32, ctr >> np.uint64(32), 0, 0, key0, key1)
    return np.stack(x, axis=1)


def u01(x):
    return (x >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24)


def bf16_bits(f32):
    """Round-to-nearest-even float32 -> bfloat16 bits (finite inputs)."""
    u = np.asarray(f32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))
    return (u >> np.uint64(16)).astype(np.uint16)


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint32) << np.uint32(16)).view(np.float32)


def expected_uniform(x, p1, p2, tag):
    """Expected stored values of DIST_UNIFORM for words x (flattened, float32 math)."""
    p1, p2 = np.float32(p1), np.float32(p2)
    v = p1 + (p2 - p1) * u01(x)
    v = np.where(v >= p2, np.nextafter(p2, np.float32(-np.inf)), v).astype(np.float32)
    if tag == "half":
        h = v.astype(np.float16)
        below = np.nextafter(h, np.float16(-np.inf))
        return np.where(h.astype(np.float32) >= p2, below, h)
    if tag == "bfloat16":
        b = bf16_bits(v)
        down = np.where(b & np.uint16(0x8000), b + np.uint16(1), b - np.uint16(1))
        down = np.where(b == 0, np.uint16(0x8001), down).astype(np.uint16)
        return np.where(bf16_to_f32(b) >= p2, down, b)
    return v.astype(NP_DTYPE[tag])


def _ceil(a, b):
    return (a + b - 1) // b


def _roundup(a, b):
    return _ceil(a, b) * b


# kernel -> (elements per work-item, NumPy types of the arguments after base)
KERNEL_ARGS = {
    "philox_fill": (4, (np.float32, np.float32)),
    "philox_fill_f64": (2, (np.float64, np.float64)),
    "philox_bernoulli": (4, (np.uint64,)),
    "philox_range": (2, (np.int64, np.uint64)),
    "philox_bernoulli_tensor": (4, None),  # arguments passed as given (buffers, ...)
}


def run_random(
    ctx,
    queue,
    build,
    kernel,
    tag,
    n,
    key,
    base,
    *params,
    dist=None,
    out_off=0,
    lws=LWS,
    extra_opts=(),
):
    """Launch a random.cl kernel with the documented geometry; returns out[out_off:].
    `params` are the kernel's arguments after base (converted to the types in KERNEL_ARGS)."""
    dtype = NP_DTYPE[tag]
    opts = ["-DOUT_T=" + tag, *extra_opts]
    if dist:
        opts.append("-DDIST_" + dist.upper())
    if lws != LWS:
        opts.append(f"-DLWS={lws}")
    prg = build("random", opts)
    host = np.zeros(out_off + n + 5, dtype=dtype)
    host[...] = SENTINEL.get(tag, -7)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    per_item, types = KERNEL_ARGS[kernel]
    args = list(params) if types is None else [t(v) for t, v in zip(types, params, strict=True)]
    gsize = _roundup(_ceil(n, per_item), lws)
    knl = cl.Kernel(prg, kernel)
    knl(
        queue,
        (gsize,),
        (lws,),
        buf,
        np.uint64(out_off),
        np.uint64(n),
        np.uint32(key[0]),
        np.uint32(key[1]),
        np.uint64(base),
        *args,
    )
    cl.enqueue_copy(queue, host, buf)
    queue.finish()
    sentinel = np.full(1, SENTINEL.get(tag, -7), dtype=dtype)
    # Nothing before out_off or after the n elements may be written.
    for region in (host[:out_off], host[out_off + n :]):
        np.testing.assert_array_equal(region, np.broadcast_to(sentinel, region.shape))
    return host[out_off : out_off + n]


def fill(ctx, queue, build, dist, tag, n, key=(1, 2), base=0, p1=0.0, p2=1.0, out_off=0):
    kernel = "philox_fill_f64" if tag == "double" else "philox_fill"
    return run_random(
        ctx, queue, build, kernel, tag, n, key, base, p1, p2, dist=dist, out_off=out_off
    )


def bernoulli(ctx, queue, build, tag, n, key, base, p, out_off=0):
    """philox_bernoulli with the host's threshold ceil(p * 2^53)."""
    t = int(np.ceil(np.ldexp(np.float64(p), 53)))
    return run_random(
        ctx,
        queue,
        build,
        "philox_bernoulli",
        tag,
        n,
        key,
        base,
        t,
        dist="bernoulli",
        out_off=out_off,
    )


def words_flat(n, key, base, per_item=4):
    return philox_words(_ceil(n, per_item), key[0], key[1], base).ravel()


# ----------------------------------------------------------------------------- reference


def test_reference_philox_known_answers():
    # Known-answer vectors of Philox4x32-10 from the Random123 distribution.
    cases = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ]
    for ctr, key, want in cases:
        got = philox4x32_10(*ctr, *key)
        assert [int(g) for g in got] == list(want)


# ----------------------------------------------------------------------------- uniform


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 64, 255, 257, 1001])
@pytest.mark.parametrize(
    "key,base", [((0, 0), 0), ((1, 2), 5), ((0xDEADBEEF, 0x12345678), 2**32 - 3)]
)
def test_uniform_bit_exact(ctx, queue, build, n, key, base):
    out = fill(ctx, queue, build, "uniform", "float", n, key, base, 0.0, 1.0)
    want = expected_uniform(words_flat(n, key, base)[:n], 0.0, 1.0, "float")
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("p1,p2", [(-2.0, 3.0), (0.25, 0.5), (-1e3, -7.5)])
def test_uniform_bit_exact_range(ctx, queue, build, p1, p2):
    n, key, base = 4099, (7, 9), 1 << 40
    out = fill(ctx, queue, build, "uniform", "float", n, key, base, p1, p2, out_off=3)
    want = expected_uniform(words_flat(n, key, base)[:n], p1, p2, "float")
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
    assert (out >= np.float32(p1)).all() and (out < np.float32(p2)).all()


@pytest.mark.parametrize(
    "tag,p1,p2",
    [
        ("float", 1000.0, 1001.0),
        ("half", 1000.0, 1001.0),
        ("half", 0.0, 1.0),
        ("bfloat16", 0.0, 1.0),
        ("bfloat16", -3.0, 2.0),
    ],
)
def test_uniform_never_returns_upper_bound(ctx, queue, build, slow, tag, p1, p2):
    # Near 1000 a float step is 2^-14, so p1 + u rounds up to p2 for u > 1 - 2^-15; in
    # half/bfloat16 the output rounding reaches p2 much more often.
    n, key, base = (1 << 12) if slow else (1 << 20), (3, 4), 11
    out = fill(ctx, queue, build, "uniform", tag, n, key, base, p1, p2)
    x = words_flat(n, key, base)[:n]
    want = expected_uniform(x, p1, p2, tag)
    np.testing.assert_array_equal(out, want)
    vals = bf16_to_f32(out) if tag == "bfloat16" else out.astype(np.float32)
    assert (vals < p2).all() and (vals >= p1).all()
    # The clamp was actually exercised: unclamped values would have hit p2 sometimes.
    raw = np.float32(p1) + np.float32(p2 - p1) * u01(x)
    if tag == "half":
        raw = raw.astype(np.float16).astype(np.float32)
    elif tag == "bfloat16":
        raw = bf16_to_f32(bf16_bits(raw))
    assert slow or (raw >= p2).any()


def test_uniform_half_clamps_at_one(ctx, queue, build, slow):
    no_stats_on_oclgrind(slow)
    n, key, base = 1 << 16, (21, 22), 0
    out = fill(ctx, queue, build, "uniform", "half", n, key, base, 0.0, 1.0)
    want = expected_uniform(words_flat(n, key, base)[:n], 0.0, 1.0, "half")
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
    assert out.max() == np.nextafter(np.float16(1), np.float16(0))


@pytest.mark.parametrize("tag", ["half", "bfloat16", "int", "long", "short", "char"])
def test_uniform_output_types(ctx, queue, build, tag):
    n, key, base, p1, p2 = 1003, (5, 6), 77, -20.0, 30.0
    out = fill(ctx, queue, build, "uniform", tag, n, key, base, p1, p2, out_off=5)
    x = words_flat(n, key, base)[:n]
    if tag in ("int", "long", "short", "char"):
        f = expected_uniform(x, p1, p2, "float")
        want = np.trunc(f).astype(NP_DTYPE[tag])
    else:
        want = expected_uniform(x, p1, p2, tag)
    np.testing.assert_array_equal(out, want)


def test_uniform_distribution(ctx, queue, build, slow):
    no_stats_on_oclgrind(slow)
    n = 1_000_000
    out = fill(ctx, queue, build, "uniform", "float", n, (99, 100), 0, -1.0, 3.0)
    assert np.isfinite(out).all()
    assert out.min() >= -1.0 and out.max() < 3.0
    se = 4.0 / np.sqrt(12 * n)
    assert abs(out.mean() - 1.0) < 5 * se
    hist = np.histogram(out, bins=16, range=(-1.0, 3.0))[0]
    assert np.abs(hist - n / 16).max() < 6 * np.sqrt(n / 16)


# ----------------------------------------------------------------------------- normal


def box_muller(x, mean, std):
    x = x.reshape(-1, 2).astype(np.uint64)
    u1 = ((x[:, 0] >> np.uint64(8)) + np.uint64(1)).astype(np.float64) * 2.0**-24
    u2 = (x[:, 1] >> np.uint64(8)).astype(np.float64) * 2.0**-24
    r = np.sqrt(-2.0 * np.log(u1))
    t = 2 * np.pi * u2
    return mean + std * np.stack([r * np.cos(t), r * np.sin(t)], axis=1).ravel()


@pytest.mark.parametrize("n", [1, 3, 6, 129])
def test_normal_matches_box_muller(ctx, queue, build, n):
    key, base, mean, std = (17, 18), 1000, 0.5, 2.0
    out = fill(ctx, queue, build, "normal", "float", n, key, base, mean, std, out_off=2)
    want = box_muller(words_flat(n, key, base), mean, std)[:n]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * std)


def test_normal_distribution(ctx, queue, build, slow):
    no_stats_on_oclgrind(slow)
    n, mean, std = 1_000_000, -1.5, 3.0
    out = fill(ctx, queue, build, "normal", "float", n, (12, 34), 5, mean, std)
    assert np.isfinite(out).all()
    want = box_muller(words_flat(n, (12, 34), 5), mean, std)[:n]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * std)
    se = std / np.sqrt(n)
    assert abs(out.mean() - mean) < 5 * se
    # Standard error of the sample standard deviation is about std / sqrt(2n).
    assert abs(out.std() - std) < 5 * std / np.sqrt(2 * n)
    z = (out - mean) / std
    assert abs(np.mean(np.abs(z) < 1) - 0.6826894921) < 0.003


def test_normal_extreme_words_finite(ctx, queue, build, slow):
    # Scan many counters: every u1 is in (0, 1], so log never sees 0.
    n = (1 << 10) if slow else (1 << 18)
    out = fill(ctx, queue, build, "normal", "float", n, (0, 0), 0, 0.0, 1.0)
    assert np.isfinite(out).all()
    assert np.abs(out).max() < 6.0  # sqrt(-2 log 2^-24) is about 5.77


@pytest.mark.parametrize("tag", ["half", "bfloat16"])
def test_normal_output_types(ctx, queue, build, tag):
    n, key, base = 999, (3, 1), 8
    ref = fill(ctx, queue, build, "normal", "float", n, key, base, 1.0, 0.5)
    out = fill(ctx, queue, build, "normal", tag, n, key, base, 1.0, 0.5)
    if tag == "half":
        np.testing.assert_array_equal(out, ref.astype(np.float16))
    else:
        np.testing.assert_array_equal(out, bf16_bits(ref))


# ----------------------------------------------------------------------------- float64


def u53(x):
    """53-bit numbers from word pairs (x0, x1), (x2, x3), ... as uint64."""
    x = x.reshape(-1, 2).astype(np.uint64)
    return (x[:, 0] | (x[:, 1] << np.uint64(32))) >> np.uint64(11)


def expected_uniform_f64(x, p1, p2):
    u = u53(x).astype(np.float64) * 2.0**-53
    v = np.float64(p1) + (np.float64(p2) - np.float64(p1)) * u
    return np.where(v >= p2, np.nextafter(np.float64(p2), -np.inf), v)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 128, 1001])
@pytest.mark.parametrize("p1,p2", [(0.0, 1.0), (-2.5, 3.0), (1e6, 1e6 + 1), (-1e300, 1e300)])
def test_uniform_f64_bit_exact(ctx, queue, build, has_fp64, n, p1, p2):
    need_fp64(has_fp64, "double")
    key, base = (0xDEADBEEF, 7), 2**32 - 5
    out = fill(ctx, queue, build, "uniform", "double", n, key, base, p1, p2, out_off=3)
    want = expected_uniform_f64(words_flat(n, key, base, per_item=2)[: 2 * n], p1, p2)
    np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))
    assert (out >= p1).all() and (out < p2).all()


def test_uniform_f64_resolution(ctx, queue, build, has_fp64, slow):
    # 53 random bits per value: nearly no value is a float32, and the low bits are used.
    need_fp64(has_fp64, "double")
    n = (1 << 12) if slow else (1 << 18)
    out = fill(ctx, queue, build, "uniform", "double", n, (5, 6), 0, 0.0, 1.0)
    assert out.min() >= 0.0 and out.max() < 1.0
    f32_exact = (out.astype(np.float32).astype(np.float64) == out).mean()
    assert f32_exact < 1e-3, f32_exact
    on_2_24_grid = (out * 2.0**24 == np.floor(out * 2.0**24)).mean()
    assert on_2_24_grid < 1e-3, on_2_24_grid
    # The lowest of the 53 bits is set about half of the time (values in [0.5, 1)).
    hi = out[out >= 0.5]
    lsb = ((hi * 2.0**53).astype(np.uint64) & np.uint64(1)).mean()
    assert 0.4 < lsb < 0.6, lsb


def test_uniform_f64_never_returns_upper_bound(ctx, queue, build, has_fp64):
    # [2^52, 2^52 + 1) holds one double: p1 + u rounds up to p2 for about half of the u, and
    # every one of those must come back as p1 (the largest double below p2).
    need_fp64(has_fp64, "double")
    p1 = 2.0**52
    p2 = p1 + 1.0
    n, key, base = 4096, (1, 9), 3
    out = fill(ctx, queue, build, "uniform", "double", n, key, base, p1, p2)
    np.testing.assert_array_equal(out, np.full(n, p1))


def box_muller_f64(x, mean, std):
    k = u53(x)
    u1 = (k[0::2] + np.uint64(1)).astype(np.float64) * 2.0**-53
    u2 = k[1::2].astype(np.float64) * 2.0**-53
    r = np.sqrt(-2.0 * np.log(u1))
    t = 2 * np.pi * u2
    return mean + std * np.stack([r * np.cos(t), r * np.sin(t)], axis=1).ravel()


@pytest.mark.parametrize("n", [1, 2, 3, 129])
def test_normal_f64_matches_box_muller(ctx, queue, build, has_fp64, n):
    need_fp64(has_fp64, "double")
    key, base, mean, std = (17, 18), 1000, 0.5, 2.0
    out = fill(ctx, queue, build, "normal", "double", n, key, base, mean, std, out_off=2)
    want = box_muller_f64(words_flat(n, key, base, per_item=2), mean, std)[:n]
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-13 * std)


def test_normal_f64_distribution_and_resolution(ctx, queue, build, has_fp64, slow):
    need_fp64(has_fp64, "double")
    n, mean, std = (1 << 12) if slow else 1_000_000, -1.5, 3.0
    out = fill(ctx, queue, build, "normal", "double", n, (12, 34), 5, mean, std)
    want = box_muller_f64(words_flat(n, (12, 34), 5, per_item=2), mean, std)[:n]
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12 * std)
    assert np.isfinite(out).all()
    f32_exact = (out.astype(np.float32).astype(np.float64) == out).mean()
    assert f32_exact < 1e-3, f32_exact
    if not slow:
        se = std / np.sqrt(n)
        assert abs(out.mean() - mean) < 5 * se
        assert abs(out.std() - std) < 5 * std / np.sqrt(2 * n)


# ----------------------------------------------------------------------------- bernoulli


def expected_bernoulli(n, key, base, t):
    """The documented philox_bernoulli values for thresholds t (an int or one per element)."""
    ctr = np.uint64(base) + np.arange(_ceil(n, 4), dtype=np.uint64)
    x = np.stack(philox4x32_10(ctr & MASK32, ctr >> np.uint64(32), 0, 0, *key), axis=1)
    y = np.stack(philox4x32_10(ctr & MASK32, ctr >> np.uint64(32), 1, 0, *key), axis=1)
    x = x.ravel()[:n].astype(np.uint64)
    f = (y.ravel()[:n] >> np.uint32(11)).astype(np.uint64)
    k = (x << np.uint64(21)) | f  # the element's 53-bit number
    return k < np.broadcast_to(np.asarray(t, dtype=np.uint64), (n,))


@pytest.mark.parametrize("tag", ["float", "bool", "uchar", "int", "half", "bfloat16", "double"])
@pytest.mark.parametrize("p", [0.3, 0.0, 1.0, 1e-12, 1 - 2**-53])
def test_bernoulli_exact(ctx, queue, build, has_fp64, tag, p):
    need_fp64(has_fp64, tag)
    n, key, base = 2051, (8, 8), 3
    out = bernoulli(ctx, queue, build, tag, n, key, base, p, out_off=1)
    bits = expected_bernoulli(n, key, base, int(np.ceil(np.ldexp(p, 53))))
    if tag == "bfloat16":
        want = np.where(bits, np.uint16(0x3F80), np.uint16(0))
    else:
        want = bits.astype(NP_DTYPE[tag])
    np.testing.assert_array_equal(out, want)
    if p in (0.0, 1.0):
        assert bits.all() == (p == 1.0) and bits.any() == (p == 1.0)


def bernoulli_tensor(ctx, queue, build, tag, p, key, base, p_tag="float", out_off=0, p_off=0):
    """philox_bernoulli_tensor with probabilities p (stored as p_tag); returns (out, err)."""
    n = p.shape[0]
    p_host = np.concatenate([np.full(p_off, 0.5), p])
    p_buf = buffer(ctx, store(p_tag, p_host))
    err = np.zeros(1, np.int32)
    err_buf = buffer(ctx, err)
    out = run_random(
        ctx,
        queue,
        build,
        "philox_bernoulli_tensor",
        tag,
        n,
        key,
        base,
        p_buf,
        np.uint64(p_off),
        err_buf,
        np.int32(7),
        dist="bernoulli",
        out_off=out_off,
        extra_opts=("-DP_T=" + p_tag,),
    )
    cl.enqueue_copy(queue, err, err_buf)
    queue.finish()
    return out, int(err[0])


@pytest.mark.parametrize("p_tag", ["float", "double", "half", "bfloat16"])
@pytest.mark.parametrize("tag", ["float", "bool", "long"])
def test_bernoulli_tensor_exact(ctx, queue, build, has_fp64, rng, tag, p_tag):
    need_fp64(has_fp64, tag, p_tag)
    n, key, base = 1029, (5, 77), 2**32 - 1
    p = rng.random(n)
    p[:5] = [0.0, 1.0, 0.5, 2**-40, 1 - 2**-24]
    stored = to_f64(p_tag, store(p_tag, p))  # p as the kernel sees it
    out, err = bernoulli_tensor(ctx, queue, build, tag, p, key, base, p_tag, out_off=2, p_off=3)
    assert err == 0
    t = np.ceil(np.ldexp(stored, 53)).astype(np.uint64)
    want = expected_bernoulli(n, key, base, t)
    np.testing.assert_array_equal(to_f64(tag, out), want.astype(np.int64))


def test_bernoulli_ties_use_second_words(ctx, queue, build, has_fp64):
    # Probabilities whose top 32 bits equal each element's word: the second words decide, and
    # the result depends on the 21 low bits of the threshold.
    need_fp64(has_fp64, "double")
    n, key, base = 515, (3, 3), 10
    ctr = np.uint64(base) + np.arange(_ceil(n, 4), dtype=np.uint64)
    x = np.stack(philox4x32_10(ctr & MASK32, ctr >> np.uint64(32), 0, 0, *key), axis=1)
    x = x.ravel()[:n].astype(np.uint64)
    low = np.random.default_rng(5).integers(0, 1 << 21, n, dtype=np.uint64)
    t = (x << np.uint64(21)) | low
    p = t.astype(np.float64) * 2.0**-53  # exact: t < 2^53
    out, err = bernoulli_tensor(ctx, queue, build, "uchar", p, key, base, "double")
    assert err == 0
    want = expected_bernoulli(n, key, base, t)
    np.testing.assert_array_equal(out, want.astype(np.uint8))
    assert 0 < want.sum() < n  # both outcomes happen through the second words


@pytest.mark.parametrize("bad", [-0.25, 1.5, np.nan, -np.inf, np.inf])
def test_bernoulli_tensor_invalid_p_sets_error(ctx, queue, build, bad):
    n, key, base = 300, (1, 2), 0
    p = np.full(n, 0.5)
    p[157] = bad
    out, err = bernoulli_tensor(ctx, queue, build, "float", p, key, base)
    assert err == 7
    assert out[157] == 0
    want = expected_bernoulli(n, key, base, np.uint64(1 << 52)).astype(np.float32)
    want[157] = 0
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0, 1e-9])
def test_bernoulli_mean(ctx, queue, build, p, slow):
    no_stats_on_oclgrind(slow)
    n = 1_000_000
    out = bernoulli(ctx, queue, build, "float", n, (4, 2), 0, p)
    assert set(np.unique(out)) <= {0.0, 1.0}
    se = np.sqrt(max(p * (1 - p), 1e-12) / n)
    assert abs(out.mean() - p) < 5 * se + 1e-12
    if p == 1e-9:
        # With 24-bit uniforms this was 2^-24 (60 ones in 10^6); now almost surely none.
        assert out.sum() <= 2


# ----------------------------------------------------------------------------- range


def expected_range(n, key, base, frm, rng_):
    x = words_flat(n, key, base, per_item=2).reshape(-1, 4).astype(np.uint64)
    r = np.stack(
        [x[:, 0] | (x[:, 1] << np.uint64(32)), x[:, 2] | (x[:, 3] << np.uint64(32))], axis=1
    ).ravel()[:n]
    if rng_:
        r = r % np.uint64(rng_)
    return (r + np.uint64(frm % 2**64)).view(np.int64)  # wrapping 64-bit add


@pytest.mark.parametrize("n", [1, 2, 3, 130, 1001])
@pytest.mark.parametrize("frm,rng_", [(0, 10), (-5, 7), (100, 1 << 40), (-(2**63), 0)])
def test_range_long_exact(ctx, queue, build, n, frm, rng_):
    key, base = (31, 41), 59
    out = run_random(ctx, queue, build, "philox_range", "long", n, key, base, frm, rng_, out_off=4)
    np.testing.assert_array_equal(out, expected_range(n, key, base, frm, rng_))
    if rng_:
        assert (out >= frm).all() and (out < frm + rng_).all()


@pytest.mark.parametrize(
    "tag,frm,rng_",
    [
        ("int", -1000, 2000),
        ("short", -3, 7),
        ("char", -128, 256),
        ("uchar", 0, 256),
        ("bool", 0, 2),
        ("float", -16, 33),
        ("half", 0, 2049),
        ("bfloat16", -8, 17),
        ("double", 0, 1 << 53),
    ],
)
def test_range_output_types(ctx, queue, build, has_fp64, tag, frm, rng_):
    if tag == "double" and not has_fp64:
        pytest.skip("device has no cl_khr_fp64")
    n, key, base = 777, (2, 71), 1 << 33
    out = run_random(ctx, queue, build, "philox_range", tag, n, key, base, frm, rng_)
    want = expected_range(n, key, base, frm, rng_)
    if tag == "bfloat16":
        got = bf16_to_f32(out).astype(np.int64)  # small integers are exact in bfloat16
    else:
        got = out.astype(np.int64)
    if tag == "bool":
        want = (want != 0).astype(np.int64)
    np.testing.assert_array_equal(got, want)


def test_range_roughly_uniform(ctx, queue, build, slow):
    no_stats_on_oclgrind(slow)
    n, frm, rng_ = 1_000_000, -3, 10
    out = run_random(ctx, queue, build, "philox_range", "int", n, (5, 5), 0, frm, rng_)
    assert out.min() == frm and out.max() == frm + rng_ - 1
    counts = np.bincount(out - frm, minlength=rng_)
    expected = n / rng_
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 40  # 9 degrees of freedom; p < 1e-5 above this


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("dist", ["uniform", "normal", "bernoulli"])
def test_determinism(ctx, queue, build, dist):
    n = 1000

    def draw(key, base):
        if dist == "bernoulli":
            return bernoulli(ctx, queue, build, "float", n, key, base, 0.5)
        return fill(ctx, queue, build, dist, "float", n, key, base, 0.5, 1.0)

    a = draw((1, 1), 100)
    b = draw((1, 1), 100)
    np.testing.assert_array_equal(a, b)
    c = draw((1, 1), 101)
    d = draw((2, 1), 100)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, d)


def test_offset_advance_continues_stream(ctx, queue, build):
    # Two launches with the host advancing base by ceil(n / 4) equal one long launch
    # whenever the first n is a multiple of 4.
    whole = fill(ctx, queue, build, "uniform", "float", 1000, (9, 9), 40)
    first = fill(ctx, queue, build, "uniform", "float", 600, (9, 9), 40)
    second = fill(ctx, queue, build, "uniform", "float", 400, (9, 9), 40 + 600 // 4)
    np.testing.assert_array_equal(np.concatenate([first, second]), whole)
    r_whole = run_random(ctx, queue, build, "philox_range", "long", 100, (9, 9), 40, 0, 0)
    r_first = run_random(ctx, queue, build, "philox_range", "long", 60, (9, 9), 40, 0, 0)
    r_second = run_random(ctx, queue, build, "philox_range", "long", 40, (9, 9), 70, 0, 0)
    np.testing.assert_array_equal(np.concatenate([r_first, r_second]), r_whole)


def test_custom_local_size(ctx, queue, build):
    n, key, base = 333, (1, 3), 2
    out = run_random(
        ctx, queue, build, "philox_fill", "float", n, key, base, 0.0, 1.0, dist="uniform", lws=16
    )
    np.testing.assert_array_equal(
        out, expected_uniform(words_flat(n, key, base)[:n], 0.0, 1.0, "float")
    )


# ----------------------------------------------------------------------------- exponential,
# cauchy, log-normal, geometric (philox_fill) and philox_multinomial


def u01_open(x):
    """The odd multiples of 2^-24 in (0, 1) that exponential / cauchy / geometric use."""
    return ((x >> np.uint32(8)) | np.uint32(1)).astype(np.float32) * np.float32(2.0**-24)


@pytest.mark.parametrize("n", [1, 5, 257])
def test_exponential_cauchy_geometric_match_reference(ctx, queue, build, n):
    x = words_flat(n, (5, 6), 3)[:n]
    u = u01_open(x).astype(np.float64)
    assert (u > 0).all() and (u < 1).all()
    got = fill(ctx, queue, build, "exponential", "float", n, key=(5, 6), base=3, p1=2.0)
    np.testing.assert_allclose(got, -np.log(u) / 2.0, rtol=1e-5, atol=0)
    assert (got > 0).all()
    got = fill(ctx, queue, build, "cauchy", "float", n, key=(5, 6), base=3, p1=1.0, p2=0.5)
    ref = 1.0 + 0.5 * np.tan(np.pi * (u - 0.5))
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    lg = np.log1p(-0.3)
    got = fill(ctx, queue, build, "geometric", "float", n, key=(5, 6), base=3, p1=0.0, p2=lg)
    ref = np.ceil(np.log(u) / lg)
    # log in float may move a value across an integer only at the boundaries: rare.
    assert (got == ref).mean() > 0.99 and (got >= 1).all()
    got_long = fill(ctx, queue, build, "geometric", "long", n, key=(5, 6), base=3, p1=0.0, p2=lg)
    np.testing.assert_array_equal(got_long, got.astype(np.int64))


def test_log_normal_is_exp_of_normal(ctx, queue, build):
    n = 301
    z = fill(ctx, queue, build, "normal", "float", n, key=(8, 9), base=11, p1=0.2, p2=0.5)
    got = fill(ctx, queue, build, "log_normal", "float", n, key=(8, 9), base=11, p1=0.2, p2=0.5)
    np.testing.assert_allclose(got, np.exp(z.astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("dist", ["exponential", "cauchy", "log_normal", "geometric"])
def test_new_fill_dists_f64(ctx, queue, build, has_fp64, dist):
    if not has_fp64:
        pytest.skip("no fp64 on this device")
    n = 99
    p1, p2 = (1.5, np.log1p(-0.25)) if dist == "geometric" else (0.5, 2.0)
    if dist == "exponential":
        p2 = 0.0
    got = fill(ctx, queue, build, dist, "double", n, key=(3, 4), base=7, p1=p1, p2=p2)
    w = philox_words(_ceil(n, 2), 3, 4, 7).astype(np.uint64)
    k = np.stack(
        [
            (w[:, 0] | (w[:, 1] << np.uint64(32))) >> np.uint64(11),
            (w[:, 2] | (w[:, 3] << np.uint64(32))) >> np.uint64(11),
        ],
        axis=1,
    ).ravel()
    u = (k[:n] | np.uint64(1)).astype(np.float64) * 2.0**-53
    if dist == "exponential":
        ref = -np.log(u) / p1
    elif dist == "cauchy":
        ref = p1 + p2 * np.tan(np.pi * (u - 0.5))
    elif dist == "geometric":
        ref = np.ceil(np.log(u) / p2)
    else:
        u1 = (k[0::2] + 1).astype(np.float64) * 2.0**-53
        u2 = k[1::2].astype(np.float64) * 2.0**-53
        r = np.sqrt(-2 * np.log(u1))
        z = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], axis=1).ravel()
        ref = np.exp(p1 + p2 * z[:n])
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def run_multinomial(ctx, queue, build, cdf, n_sample, key=(1, 2), base=0, cdf_t="float"):
    """philox_multinomial on cdf (n_dist x n_cat); returns (samples, error word)."""
    n_dist, n_cat = cdf.shape
    prg = build("random", [f"-DCDF_T={cdf_t}"])
    mf = cl.mem_flags
    host_cdf = np.ascontiguousarray(cdf, dtype=np.float64 if cdf_t == "double" else np.float32)
    cdf_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host_cdf)
    out = np.full(n_dist * n_sample + 3, -5, dtype=np.int64)
    out_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    err = np.zeros(1, dtype=np.int32)
    err_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=err)
    cl.Kernel(prg, "philox_multinomial")(
        queue, (_roundup(n_sample, LWS), n_dist), (LWS, 1), out_buf, np.uint64(0),
        np.uint64(n_sample), np.uint64(n_cat), np.uint32(key[0]), np.uint32(key[1]),
        np.uint64(base), cdf_buf, np.uint64(0), err_buf, np.int32(1), np.int32(2), np.int32(3),
    )  # fmt: skip
    cl.enqueue_copy(queue, out, out_buf)
    cl.enqueue_copy(queue, err, err_buf)
    queue.finish()
    assert (out[n_dist * n_sample :] == -5).all()
    return out[: n_dist * n_sample].reshape(n_dist, n_sample), int(err[0])


def test_multinomial_matches_reference(ctx, queue, build, rng):
    probs = rng.random((3, 11)).astype(np.float32)
    probs[1, [0, 4, 10]] = 0
    cdf = np.cumsum(probs, axis=1, dtype=np.float32)
    n_sample = 70
    got, err = run_multinomial(ctx, queue, build, cdf, n_sample, key=(7, 8), base=5)
    assert err == 0
    for r in range(3):
        ctr = 5 + r * n_sample + np.arange(n_sample)
        x0 = philox4x32_10(ctr, 0, 0, 0, 7, 8)[0]
        target = u01(x0) * cdf[r, -1]
        ref = np.searchsorted(cdf[r], target, side="right")
        np.testing.assert_array_equal(got[r], ref)
    assert not np.isin(got[1], [0, 4, 10]).any()


@pytest.mark.parametrize(
    ("row", "code"),
    [([1, -1, 2], 1), ([1, np.inf, 2], 2), ([1, np.nan, 2], 2), ([0, 0, 0], 3), ([0, 0, 1], 0)],
)
def test_multinomial_invalid_rows_set_error(ctx, queue, build, row, code):
    probs = np.array([[1, 1, 1], row], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        cdf = np.cumsum(probs, axis=1, dtype=np.float32)
    got, err = run_multinomial(ctx, queue, build, cdf, 9)
    assert err == code
    assert ((got >= 0) & (got < 3)).all()
    if code == 0:
        assert (got[1] == 2).all()


def test_multinomial_zero_probability_tail_never_drawn(ctx, queue, build):
    # Only the first category has a non-zero probability: the others share its running sum.
    cdf = np.array([[1.0, 1.0, 1.0], [0.0, 0.5, 0.5]], dtype=np.float32)
    got, err = run_multinomial(ctx, queue, build, cdf, 200)
    assert err == 0 and (got[0] == 0).all() and (got[1] == 1).all()


def test_multinomial_f64(ctx, queue, build, has_fp64, rng):
    if not has_fp64:
        pytest.skip("no fp64 on this device")
    probs = rng.random((2, 6))
    cdf = np.cumsum(probs, axis=1)
    got, err = run_multinomial(ctx, queue, build, cdf, 40, key=(1, 1), base=2, cdf_t="double")
    assert err == 0
    for r in range(2):
        ctr = 2 + r * 40 + np.arange(40)
        w = philox4x32_10(ctr, 0, 0, 0, 1, 1)
        k = (w[0].astype(np.uint64) | (w[1].astype(np.uint64) << np.uint64(32))) >> np.uint64(11)
        target = k.astype(np.float64) * 2.0**-53 * cdf[r, -1]
        np.testing.assert_array_equal(got[r], np.searchsorted(cdf[r], target, side="right"))
