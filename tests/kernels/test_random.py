"""Tests for kernels/random.cl (Philox4x32-10) against a numpy implementation."""

import numpy as np
import pytest
from cl_tags import STORE as NP_DTYPE

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


def run_random(ctx, queue, build, kernel, tag, n, key, base, p1, p2, dist=None, out_off=0, lws=LWS):
    """Launch philox_fill/philox_range with the documented geometry; returns out[out_off:]."""
    dtype = NP_DTYPE[tag]
    opts = ["-DOUT_T=" + tag]
    if dist:
        opts.append("-DDIST_" + dist.upper())
    if lws != LWS:
        opts.append(f"-DLWS={lws}")
    prg = build("random", opts)
    host = np.zeros(out_off + n + 5, dtype=dtype)
    host[...] = SENTINEL.get(tag, -7)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    if kernel == "philox_fill":
        per_item = 4
        extra = (np.float32(p1), np.float32(p2))
    else:
        per_item = 2
        extra = (np.int64(p1), np.uint64(p2))
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
        *extra,
    )
    cl.enqueue_copy(queue, host, buf)
    queue.finish()
    sentinel = np.full(1, SENTINEL.get(tag, -7), dtype=dtype)
    # Nothing before out_off or after the n elements may be written.
    for region in (host[:out_off], host[out_off + n :]):
        np.testing.assert_array_equal(region, np.broadcast_to(sentinel, region.shape))
    return host[out_off : out_off + n]


def fill(ctx, queue, build, dist, tag, n, key=(1, 2), base=0, p1=0.0, p2=1.0, out_off=0):
    return run_random(ctx, queue, build, "philox_fill", tag, n, key, base, p1, p2, dist, out_off)


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


@pytest.mark.parametrize("tag", ["double", "half", "bfloat16", "int", "long", "short", "char"])
def test_uniform_output_types(ctx, queue, build, has_fp64, tag):
    if tag == "double" and not has_fp64:
        pytest.skip("device has no cl_khr_fp64")
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


@pytest.mark.parametrize("tag", ["half", "bfloat16", "double"])
def test_normal_output_types(ctx, queue, build, has_fp64, tag):
    if tag == "double" and not has_fp64:
        pytest.skip("device has no cl_khr_fp64")
    n, key, base = 999, (3, 1), 8
    ref = fill(ctx, queue, build, "normal", "float", n, key, base, 1.0, 0.5)
    out = fill(ctx, queue, build, "normal", tag, n, key, base, 1.0, 0.5)
    if tag == "half":
        np.testing.assert_array_equal(out, ref.astype(np.float16))
    elif tag == "bfloat16":
        np.testing.assert_array_equal(out, bf16_bits(ref))
    else:
        np.testing.assert_array_equal(out, ref.astype(np.float64))


# ----------------------------------------------------------------------------- bernoulli


@pytest.mark.parametrize("tag", ["float", "bool", "uchar", "int", "half", "bfloat16"])
def test_bernoulli_exact(ctx, queue, build, tag):
    n, key, base, p = 2051, (8, 8), 3, 0.3
    out = fill(ctx, queue, build, "bernoulli", tag, n, key, base, p, 0.0, out_off=1)
    bits = u01(words_flat(n, key, base)[:n]) < np.float32(p)
    if tag == "bfloat16":
        want = np.where(bits, np.uint16(0x3F80), np.uint16(0))
    else:
        want = bits.astype(NP_DTYPE[tag])
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_bernoulli_mean(ctx, queue, build, p, slow):
    no_stats_on_oclgrind(slow)
    n = 1_000_000
    out = fill(ctx, queue, build, "bernoulli", "float", n, (4, 2), 0, p)
    assert set(np.unique(out)) <= {0.0, 1.0}
    se = np.sqrt(max(p * (1 - p), 1e-12) / n)
    assert abs(out.mean() - p) < 5 * se + 1e-12


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
    a = fill(ctx, queue, build, dist, "float", n, (1, 1), 100, 0.5, 1.0)
    b = fill(ctx, queue, build, dist, "float", n, (1, 1), 100, 0.5, 1.0)
    np.testing.assert_array_equal(a, b)
    c = fill(ctx, queue, build, dist, "float", n, (1, 1), 101, 0.5, 1.0)
    d = fill(ctx, queue, build, dist, "float", n, (2, 1), 100, 0.5, 1.0)
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
        ctx, queue, build, "philox_fill", "float", n, key, base, 0.0, 1.0, "uniform", lws=16
    )
    np.testing.assert_array_equal(
        out, expected_uniform(words_flat(n, key, base)[:n], 0.0, 1.0, "float")
    )
