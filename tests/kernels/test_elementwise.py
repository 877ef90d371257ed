"""Tests for the strided `elementwise` kernel in kernels/elementwise.cl against a float64 /
integer reference (NumPy, and CPU torch where torch's semantics are the contract: floor
division, NaN-propagating maximum/minimum, clamp, sigmoid).

Built and launched as csrc/ops/Elementwise.cpp does (variant_kernel, launch_elementwise,
enqueue_elementwise, push_strides): options -DEW_OP=EWOP_<op> -DOUT_T -DCOMP_T
[-DCOMP_FLOAT] -DNIN -DIN<k>_T [-DIN<k>_SCALAR] -DNDIM [-DIDX64] [-DCHUNK]; arguments n, out,
out_off, each input's (buffer, off) or its value in REG_TYPE(COMP_T), p0, p1, p2 and, for NDIM > 0,
long8 sizes (innermost first), long8 out strides and long8 strides of every buffer input, in
elements. Global size: ceil(n / CHUNK) (CHUNK consecutive elements per work-item, in the
iterator's order when strided), rounded up to the local size (64 with a chunk, else 256).

Operands live at (mostly non-zero) offsets in larger buffers; output slots the kernel must not
write hold a sentinel that is checked afterwards.
"""

import numpy as np
import pytest
import torch
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")
cltypes = pytest.importorskip("pyopencl.cltypes")

# numpy dtype of REG_TYPE(tag): scalar kernel arguments
REG = dict(STORE, half=np.float32, bfloat16=np.float32)
# unit roundoff of a stored float type, and of the compute type REG_TYPE(tag)
OUT_EPS = {"float": 2.0**-24, "double": 2.0**-53, "half": 2.0**-11, "bfloat16": 2.0**-8}
COMP_EPS = {"float": 2.0**-24, "double": 2.0**-53, "half": 2.0**-24, "bfloat16": 2.0**-24}
# smallest positive (subnormal) value of a stored float type: absolute slack of a rounded store
TINY = {"float": 2.0**-149, "double": 2.0**-1074, "half": 2.0**-24, "bfloat16": 2.0**-133}
TORCH_INT = {"long": torch.int64, "int": torch.int32, "short": torch.int16, "char": torch.int8}
TORCH_INT.update(uchar=torch.uint8, bool=torch.bool)


@pytest.fixture(scope="module")
def slow(ctx):
    """True on Oclgrind (a simulator): keep sizes small there."""
    return "oclgrind" in (ctx.devices[0].platform.name + ctx.devices[0].name).lower()


# --- storage conversions ---------------------------------------------------------------------


def gen(rng, tag, n, lo=-4.0, hi=4.0, specials=False, nonzero=False):
    """n random stored values of a tag; floats optionally with NaN, +-Inf and +-0 mixed in."""
    if tag in FLOAT_TAGS:
        x = rng.uniform(lo, hi, n)
        if nonzero:
            x[np.abs(x) < 0.25] = 0.5
        if specials and n:
            pick = rng.random(n) < 0.15
            x[pick] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=int(pick.sum()))
        return store(tag, x)
    if tag == "bool":
        return rng.integers(0, 2, n).astype(np.uint8)
    x = rng.integers(int(lo), int(hi), n, endpoint=True)
    if nonzero:
        x[x == 0] = 1
    return x.astype(STORE[tag])


def sentinel(tag):
    if tag in FLOAT_TAGS:
        return store(tag, np.float64(-99.0))
    return STORE[tag]({"bool": 7, "uchar": 0xA5}.get(tag, -99))


# --- operands and launch ---------------------------------------------------------------------


class Buf:
    """A buffer operand: stored values `flat`, element (j0, j1, ..) (numpy order) at
    off + sum(j * stride). strides=None: contiguous (the NDIM == 0 case)."""

    def __init__(self, tag, flat, off, strides=None):
        assert flat.dtype == STORE[tag], (tag, flat.dtype)
        self.tag, self.flat, self.off, self.strides = tag, flat, off, strides

    def view(self, shape):
        strides = self.strides if self.strides is not None else _contig(shape)
        isz = self.flat.itemsize
        return np.lib.stride_tricks.as_strided(
            self.flat[self.off :], shape, [s * isz for s in strides], writeable=False
        )


class Scalar:
    """An IN<k>_SCALAR operand: a kernel argument of type REG_TYPE(COMP_T)."""

    def __init__(self, tag, value):
        self.tag, self.value = tag, value


def _contig(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


def _extent(shape, strides):
    return sum((s - 1) * st for s, st in zip(shape, strides, strict=True)) + 1


def stridedbuffer(rng, tag, shape, strides, off, **kw):
    """A Buf over random data covering the strided view (stride 0: a broadcast dimension)."""
    return Buf(tag, gen(rng, tag, off + _extent(shape, strides) + 2, **kw), off, strides)


def contigbuffer(rng, tag, n, off, **kw):
    return Buf(tag, gen(rng, tag, off + n + 3, **kw), off)


def _long8(vals):
    vals = list(vals)[::-1]  # innermost first
    return cltypes.make_long8(*(vals + [0] * (8 - len(vals))))


def options(op, out_tag, comp_tag, ins, ndim, chunk=None, idx64=False, extra=()):
    opts = [f"-DEW_OP=EWOP_{op}", f"-DOUT_T={out_tag}", f"-DCOMP_T={comp_tag}"]
    if op == "where":
        opts.append("-DLOAD_COND")
    if comp_tag in FLOAT_TAGS:
        opts.append("-DCOMP_FLOAT")
    opts.append(f"-DNIN={len(ins)}")
    for k, x in enumerate(ins):
        opts.append(f"-DIN{k}_T={x.tag}")
        if isinstance(x, Scalar):
            opts.append(f"-DIN{k}_SCALAR")
    opts.append(f"-DNDIM={ndim}")
    if idx64:
        opts.append("-DIDX64")
    if chunk is not None:
        opts.append(f"-DCHUNK={chunk}")
    return opts + list(extra)


# --- reference -------------------------------------------------------------------------------


def _torch_int(comp_tag, *xs):
    return [torch.from_numpy(np.asarray(x, np.int64)).to(TORCH_INT[comp_tag]) for x in xs]


def reference(op, comp_tag, vals, p0=0.0, p1=0.0):
    """The op over the operands' values (float64 / int64 arrays, already as REG(COMP_T) sees
    them); floats in float64 (floor division in the compute precision, like the kernel and
    torch's CUDA kernels), integers in the compute type with its wrap-around."""
    a, b, c = (list(vals) + [None] * 3)[:3]
    if comp_tag in FLOAT_TAGS:
        t = [torch.from_numpy(np.asarray(x, np.float64)) if x is not None else None for x in vals]
        ta, tb = (t + [None, None])[:2]
        with np.errstate(all="ignore"):
            if op == "add":
                return a + p0 * b
            if op == "sub":
                return a - p0 * b
            if op == "mul":
                return a * b
            if op == "div_true":
                return a / b
            if op in ("div_floor", "div_trunc"):
                # CPU torch computes half/bfloat16 floor/trunc division in the dtype itself
                cdt = {"double": torch.float64, "half": torch.float16}.get(comp_tag)
                cdt = cdt or {"bfloat16": torch.bfloat16}.get(comp_tag, torch.float32)
                mode = op.removeprefix("div_")
                return torch.div(ta.to(cdt), tb.to(cdt), rounding_mode=mode).double().numpy()
            if op == "maximum":
                return torch.maximum(ta, tb).numpy()
            if op == "minimum":
                return torch.minimum(ta, tb).numpy()
            if op == "clamp":
                return torch.clamp(ta, min=p0, max=p1).numpy()
            if op == "clamp_lo":
                return torch.clamp(ta, min=p0).numpy()
            if op == "clamp_hi":
                return torch.clamp(ta, max=p1).numpy()
            if op == "clamp_max":
                return torch.clamp(ta, max=p0).numpy()
            if op == "where":
                return np.where(a != 0, b, c)
            if op == "exp":
                return torch.exp(ta).numpy()
            if op == "tanh":
                return torch.tanh(ta).numpy()
            if op == "sigmoid":
                return torch.sigmoid(ta).numpy()
            if op == "logical_not":
                return torch.logical_not(ta).long().numpy()
        raise AssertionError(op)
    ta, tb = (_torch_int(comp_tag, *vals[:2]) + [None])[:2]
    r = {
        "add": lambda: torch.add(ta, tb, alpha=int(p0)),
        "sub": lambda: torch.sub(ta, tb, alpha=int(p0)),
        "mul": lambda: ta * tb,
        "div_floor": lambda: torch.floor_divide(ta, tb),
        "div_trunc": lambda: torch.div(ta, tb, rounding_mode="trunc"),
        "maximum": lambda: torch.maximum(ta, tb),
        "bitwise_and": lambda: ta & tb,
        "clamp": lambda: torch.clamp(ta, min=int(p0), max=int(p1)),
        "logical_not": lambda: torch.logical_not(ta),
    }[op]()
    return r.long().numpy()


EXACT = {
    "maximum", "minimum", "clamp", "clamp_lo", "clamp_hi", "clamp_max", "where", "div_floor",
    "div_trunc",
}  # fmt: skip
ULPS = {"exp": 16, "tanh": 16, "sigmoid": 16, "div_true": 4}


def check(op, out_tag, comp_tag, got, ref, mag=None, ctx_msg=""):
    """got: stored output values; ref: float64 / int64 reference. Selections (max, clamp,
    where, floor division) must match the reference rounded to the output type exactly; other
    float results within the compute rounding (k ulps of mag, default |ref|) plus the output
    rounding."""
    msg = f"{op} out={out_tag} comp={comp_tag} {ctx_msg}"
    if out_tag not in FLOAT_TAGS:
        want = store(out_tag, ref)
        np.testing.assert_array_equal(to_f64(out_tag, got), to_f64(out_tag, want), err_msg=msg)
        return
    got = to_f64(out_tag, got)
    ref = np.asarray(ref, np.float64)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg="NaN positions: " + msg)
    if op in EXACT:
        want = to_f64(out_tag, store(out_tag, ref))
        np.testing.assert_array_equal(got, want, err_msg=msg)
        return
    inf = np.isinf(ref)
    np.testing.assert_array_equal(got[inf], ref[inf], err_msg="Inf values: " + msg)
    ok = ~nan & ~inf
    mag = np.abs(ref) if mag is None else np.broadcast_to(mag, ref.shape)
    tol = ULPS.get(op, 2) * COMP_EPS[comp_tag] * mag + OUT_EPS[out_tag] * np.abs(ref)
    tol = tol + TINY[out_tag]
    with np.errstate(invalid="ignore"):
        err = np.abs(got - ref)
    bad = ok & ~(err <= tol)
    assert not bad.any(), f"{msg}: got {got[bad][:4]} want {ref[bad][:4]}"


def values(x, shape, comp_tag):
    """An operand's values as REG(COMP_T) sees them, broadcast to shape."""
    if isinstance(x, Scalar):
        v = np.float64(REG[comp_tag](x.value)) if comp_tag in FLOAT_TAGS else int(x.value)
        return np.full(shape, v)
    return to_f64(x.tag, x.view(shape))


class Ew:
    """Runs `elementwise` on the test device: launch() as the host does, check() against the
    reference."""

    def __init__(self, ctx, queue, build):
        self.ctx, self.queue, self.build = ctx, queue, build

    def launch(self, op, out_tag, comp_tag, ins, shape, *, out_off=3, out_strides=None, ndim=None,
               chunk=64, p0=0, p1=0, idx64=False, extra=()):  # fmt: skip
        """Run `elementwise` over a logical shape (numpy order); ndim=0 (the default when no input
        and no output is strided) is the contiguous case. Returns the output values (shape) as
        stored, after checking that nothing else in the output buffer changed."""
        bufs = [x for x in ins if isinstance(x, Buf)]
        if ndim is None:
            strided = out_strides is not None or any(b.strides is not None for b in bufs)
            ndim = len(shape) if strided else 0
        if ndim > 0:
            assert ndim == len(shape)
            out_strides = out_strides if out_strides is not None else _contig(shape)
        else:
            out_strides = (1,)
            assert all(b.strides is None for b in bufs)
        n = int(np.prod(shape))
        nshape = shape if ndim > 0 else (n,)
        extent = _extent(nshape, out_strides)
        out_fill = np.full(out_off + extent + 2, sentinel(out_tag), dtype=STORE[out_tag])
        pos = np.lib.stride_tricks.as_strided(
            np.arange(len(out_fill))[out_off:], nshape, [s * 8 for s in out_strides]
        )
        prg = self.build(
            "elementwise", options(op, out_tag, comp_tag, ins, ndim, chunk, idx64, extra)
        )
        mf = cl.mem_flags
        out_buf = buffer(self.ctx, out_fill)
        args = [np.uint64(n), out_buf, np.uint64(out_off)]
        for x in ins:
            if isinstance(x, Scalar):
                args.append(REG[comp_tag](x.value))
            else:
                b = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x.flat)
                args += [b, np.uint64(x.off)]
        args += [REG[comp_tag](p0), REG[comp_tag](p1), REG[comp_tag](0)]  # p0, p1, p2
        if ndim > 0:
            args += [_long8(shape), _long8(out_strides)]
            args += [_long8(b.strides if b.strides is not None else _contig(shape)) for b in bufs]
        local = 64 if chunk > 1 else 256
        items = -(-n // chunk)
        glob = -(-items // local) * local
        cl.Kernel(prg, "elementwise")(self.queue, (glob,), (local,), *args)
        res = np.empty_like(out_fill)
        cl.enqueue_copy(self.queue, res, out_buf)
        self.queue.finish()
        untouched = np.ones(len(res), bool)
        untouched[pos.ravel()] = False
        assert np.array_equal(res[untouched], out_fill[untouched]), "wrote outside the output"
        return res[pos].reshape(shape)

    def check(self, op, out_tag, comp_tag, ins, shape, ref_op=None, p0=0, p1=0, **kw):
        """launch() and compare with reference(); returns (stored output, reference)."""
        got = self.launch(op, out_tag, comp_tag, ins, shape, p0=p0, p1=p1, **kw)
        vals = [values(x, shape, comp_tag) for x in ins]
        rp0, rp1 = (float(REG[comp_tag](p)) for p in (p0, p1))
        if comp_tag not in FLOAT_TAGS:
            rp0, rp1 = int(p0), int(p1)
        ref = reference(ref_op or op, comp_tag, vals, rp0, rp1)
        mag = None
        if op in ("add", "sub") and comp_tag in FLOAT_TAGS:
            with np.errstate(invalid="ignore"):
                mag = np.abs(vals[0]) + 2 * np.abs(rp0 * vals[1])
        check(op, out_tag, comp_tag, got, ref, mag, f"shape={shape} kw={sorted(kw)}")
        return got, ref


@pytest.fixture
def ew(ctx, queue, build):
    return Ew(ctx, queue, build)


# --- NDIM == 0: contiguous ---------------------------------------------------------------------

# (op, out tag, compute tag, input tags, p0): the host's choices (common dtype as the compute
# type, true division of integers in float, logical_not into bool in the input's type)
CONTIG = [
    ("add", "float", "float", ("float", "float"), 0.75),
    ("add", "int", "int", ("int", "int"), 3),
    ("add", "bfloat16", "bfloat16", ("bfloat16", "bfloat16"), -1.5),
    ("mul", "half", "half", ("half", "half"), 0),
    ("mul", "long", "long", ("long", "long"), 0),
    ("div_true", "float", "float", ("float", "float"), 0),
    ("div_true", "float", "float", ("int", "int"), 0),
    ("div_floor", "float", "float", ("float", "float"), 0),
    ("div_floor", "bfloat16", "bfloat16", ("bfloat16", "bfloat16"), 0),
    ("div_floor", "half", "half", ("half", "half"), 0),
    ("div_trunc", "bfloat16", "bfloat16", ("bfloat16", "bfloat16"), 0),
    ("div_trunc", "half", "half", ("half", "half"), 0),
    ("div_trunc", "float", "float", ("float", "float"), 0),
    ("div_floor", "int", "int", ("int", "int"), 0),
    ("maximum", "float", "float", ("float", "float"), 0),
    ("minimum", "half", "half", ("half", "half"), 0),
    ("maximum", "uchar", "uchar", ("uchar", "uchar"), 0),
    ("exp", "float", "float", ("float",), 0),
    ("tanh", "half", "half", ("half",), 0),
    ("sigmoid", "bfloat16", "bfloat16", ("bfloat16",), 0),
    ("bitwise_and", "int", "int", ("int", "int"), 0),
    ("bitwise_and", "bool", "bool", ("bool", "bool"), 0),
    ("logical_not", "bool", "float", ("float",), 0),
    ("logical_not", "bool", "int", ("int",), 0),
    ("add", "double", "double", ("double", "double"), 0.3),
    ("div_floor", "double", "double", ("double", "double"), 0),
]


def _gen_kw(op, tag, k):
    """Data ranges per operand: divisors away from 0 for integers (x/0 is 0 here, torch
    raises), wide integers for bitwise ops, NaN/Inf/0 mixed into float inputs."""
    if tag in FLOAT_TAGS:
        kw = {"specials": True}
        if op == "exp":
            kw.update(lo=-10, hi=10)
        if op in ("div_floor", "div_trunc", "div_true") and k == 1:
            kw.update(lo=-3, hi=3)
        if op in ("div_floor", "div_trunc") and k == 0:
            kw.update(lo=-300, hi=300)  # quotients beyond half/bfloat16's integer precision
        return kw
    if op == "bitwise_and" and tag != "bool":
        return {"lo": np.iinfo(STORE[tag]).min, "hi": np.iinfo(STORE[tag]).max}
    if op in ("div_floor", "div_true") and k == 1:
        return {"lo": -9, "hi": 9, "nonzero": True}
    if op == "mul" and tag == "long":
        return {"lo": -(2**40), "hi": 2**40}  # products wrap around 2^63
    if tag == "uchar":
        return {"lo": 0, "hi": 255}
    return {"lo": -1000, "hi": 1000}


def _case_id(case):
    op, out_tag, comp_tag, in_tags, _ = case
    return f"{op}-{'_'.join(in_tags)}-{comp_tag}-{out_tag}"


# CHUNK=64 (what the host uses on CPU devices) for every case, CHUNK=1 (GPUs) for every seventh:
# the same code without the chunk loop
CONTIG_RUNS = [(c, 64) for c in CONTIG] + [(c, 1) for c in CONTIG[::7]]


@pytest.mark.parametrize(
    "case,chunk", CONTIG_RUNS, ids=[f"{_case_id(c)}-chunk{k}" for c, k in CONTIG_RUNS]
)
def test_contiguous(ew, has_fp64, rng, slow, case, chunk):
    op, out_tag, comp_tag, in_tags, p0 = case
    need_fp64(has_fp64, out_tag, comp_tag, *in_tags)
    sizes = (1, 5, 64, 200) if slow else (1, 5, 64, 1000, 4099)  # 1000, 4099: a partial chunk
    for n in sizes:
        ins = [
            contigbuffer(rng, t, n, off=2 + k, **_gen_kw(op, t, k)) for k, t in enumerate(in_tags)
        ]
        ew.check(op, out_tag, comp_tag, ins, (n,), p0=p0, chunk=chunk)


def test_floor_divide_rounding(ew, rng):
    """Floor division rounds toward -inf for every sign pair, like torch.floor_divide; x/0 is
    +-inf (floats); signed zero results keep the quotient's sign."""
    a = np.array([7, -7, 7, -7, 6, -6, 0, -0.0, 1, -1, 0, 5.5, -5.5, 1e30, 3], np.float32)
    b = np.array([2, 2, -2, -2, 3, 3, 5, 5, 0, 0, 0, 2, 2, 3e-30, np.inf], np.float32)
    ins = [
        Buf("float", np.r_[9, a].astype(np.float32), 1),
        Buf("float", np.r_[9, 9, b].astype(np.float32), 2),
    ]
    got, ref = ew.check("div_floor", "float", "float", ins, (len(a),))
    assert np.array_equal(np.signbit(got[:8]), np.signbit(ref[:8]))
    np.testing.assert_array_equal(got[:6], [3, -4, -4, 3, 2, -2])
    ai = rng.integers(-50, 51, 300).astype(np.int32)
    bi = rng.choice([-7, -3, -1, 1, 2, 5], 300).astype(np.int32)
    ins = [Buf("int", ai, 0), Buf("int", np.concatenate([[0], bi]).astype(np.int32), 1)]
    got, _ = ew.check("div_floor", "int", "int", ins, (300,))
    np.testing.assert_array_equal(got, np.floor(ai / bi.astype(np.float64)))


def test_integer_division_by_zero(ew):
    """x // 0 on integers gives 0 (no trap); without EW_NONZERO_B nothing else happens."""
    a = np.array([5, -5, 0, 7], np.int32)
    b = np.zeros(4, np.int32)
    got = ew.launch("div_floor", "int", "int", [Buf("int", a, 0), Buf("int", b, 0)], (4,))
    np.testing.assert_array_equal(got, 0)


@pytest.mark.parametrize("op", ["div_floor", "div_trunc"])
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_nonzero_divisor_check_records_the_error_code(ctx, queue, build, rng, op, strided):
    """-DEW_NONZERO_B: a zero second operand stores err_code in *err (once, by compare-and-swap
    against 0); results elsewhere are the plain quotients; no zero leaves *err untouched."""
    n = 300
    a = rng.integers(-50, 51, n).astype(np.int32)
    for zeros in (0, 3):
        b = rng.choice([-7, -3, -1, 1, 2, 5], n).astype(np.int32)
        b[rng.choice(n, zeros, replace=False)] = 0
        ndim = 1 if strided else 0
        opts = [f"-DEW_OP=EWOP_{op}", "-DOUT_T=int", "-DCOMP_T=int", "-DNIN=2"]
        opts += ["-DIN0_T=int", "-DIN1_T=int", f"-DNDIM={ndim}", "-DEW_NONZERO_B"]
        opts += [] if strided else ["-DCHUNK=64"]
        prg = build("elementwise", opts)
        mf = cl.mem_flags
        out = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        ab = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        err = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(1, np.int32))
        args = [np.uint64(n), out, np.uint64(0), ab, np.uint64(0), bb, np.uint64(0)]
        args += [np.int32(0), np.int32(0), np.int32(0)]  # p0, p1, p2
        if strided:
            args += [_long8((n,)), _long8((1,)), _long8((1,)), _long8((1,))]
        args += [err, np.int32(41)]
        local, items = (256, n) if strided else (64, -(-n // 64))
        cl.Kernel(prg, "elementwise")(queue, (-(-items // local) * local,), (local,), *args)
        got, e = np.empty(n, np.int32), np.empty(1, np.int32)
        cl.enqueue_copy(queue, got, out)
        cl.enqueue_copy(queue, e, err)
        queue.finish()
        assert e[0] == (41 if zeros else 0)
        nz = b != 0
        mode = op.removeprefix("div_")
        want = torch.div(torch.from_numpy(a[nz]), torch.from_numpy(b[nz]), rounding_mode=mode)
        np.testing.assert_array_equal(got[nz], want.numpy())
        np.testing.assert_array_equal(got[~nz], 0)


def test_narrow_integer_conversions_wrap_like_torch(ew, rng):
    """float -> uchar goes through int64, float -> char/short through int32, then wraps, at
    every position of a chunk (the vectorised body and the tail): CPU torch's conversions."""
    vals = np.array([-1, -100, 300, 255.5, -0.5, 1.7, 70000, -40000.5, 2e9, -2e9], np.float64)
    for out_tag, extra in (("uchar", [3e9, -3e9, 1e10]), ("char", []), ("short", [])):
        pool = np.r_[vals, extra]
        for n in (7, 64, 1000):
            x = store("float", pool[rng.integers(0, len(pool), n)])
            src = Buf("float", np.r_[0, x].astype(np.float32), 1)
            got = ew.launch("copy", out_tag, "float", [src], (n,))
            want = torch.from_numpy(x).to(TORCH_INT[out_tag]).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{out_tag} n={n}")


def test_maximum_minimum_nan_inf(ew):
    """NaN in either operand propagates (torch.maximum / minimum, not fmax); Inf compares."""
    nan, inf = np.nan, np.inf
    a = np.array([nan, 1, nan, inf, -inf, inf, 2, -0.0, -inf], np.float32)
    b = np.array([1, nan, nan, 3, 3, -inf, -inf, 0.0, nan], np.float32)
    for tag in ("float", "bfloat16"):  # half: test_contiguous
        ins = [Buf(tag, store(tag, np.r_[0, a]), 1), Buf(tag, store(tag, np.r_[0, 0, b]), 2)]
        for op in ("maximum", "minimum"):
            got, _ = ew.check(op, tag, tag, ins, (len(a),))
            got = to_f64(tag, got)
            assert np.isnan(got[[0, 1, 2, 8]]).all()
            want = [inf, 3, inf, 2] if op == "maximum" else [3, -inf, -inf, -inf]
            np.testing.assert_array_equal(got[3:7], want)
            assert got[7] == 0


# --- NDIM > 0: strided -------------------------------------------------------------------------


def test_strided_1d(ew, rng):
    """A step-sliced input (stride 2), a contiguous one and an output with stride 3."""
    for n in (1, 37, 300):
        a = stridedbuffer(rng, "float", (n,), (2,), off=5, specials=True)
        b = stridedbuffer(rng, "float", (n,), (1,), off=1, specials=True)
        ew.check("mul", "float", "float", [a, b], (n,), out_strides=(3,), out_off=4)


@pytest.mark.parametrize("tag", ("float", "half", "int"))
def test_strided_2d_add(ew, rng, tag):
    """a transposed (column-major), b broadcast along rows (stride 0), output rows padded."""
    p0 = 3 if tag == "int" else -1.25
    for R, C in ((1, 1), (7, 5), (33, 20)):
        a = stridedbuffer(rng, tag, (R, C), (1, R), off=2, **_gen_kw("add", tag, 0))
        b = stridedbuffer(rng, tag, (R, C), (0, 1), off=3, **_gen_kw("add", tag, 1))
        ew.check("add", tag, tag, [a, b], (R, C), p0=p0, out_strides=(C + 3, 1), out_off=1)
        # output transposed, input b broadcast along columns
        b = stridedbuffer(rng, tag, (R, C), (1, 0), off=0, **_gen_kw("add", tag, 1))
        ew.check("add", tag, tag, [a, b], (R, C), p0=p0, out_strides=(1, R), out_off=0)


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_strided_runs(ew, rng, chunk):
    """Strided work-items take CHUNK consecutive elements and step their coordinates (carrying
    into outer dims, several at once): rows shorter than, equal to and longer than the chunk,
    the last chunk partial, a permuted input and a broadcast one, a padded output, NaN/Inf."""
    for shape in ((5, 1), (4, 3), (3, 64), (2, 150), (2, 3, 131), (3, 1, 2, 5), (7, 2, 2, 2, 3)):
        nd = len(shape)
        perm = tuple(reversed(_contig(tuple(reversed(shape)))))  # column-major strides
        a = stridedbuffer(rng, "float", shape, perm, off=3, specials=True)
        bst = (0,) * (nd - 1) + (1,)  # one row broadcast over the others
        b = stridedbuffer(rng, "float", shape, bst, off=1, specials=True)
        ost = _contig(shape[:-1] + (shape[-1] + 2,))
        ew.check(
            "add", "float", "float", [a, b], shape, p0=0.5, out_strides=ost, out_off=2, chunk=chunk
        )


def test_strided_2d_maximum_mixed(ew, rng):
    """bfloat16 and half inputs computed in float (promotion), one sliced in both dims."""
    R, C = 9, 31
    a = stridedbuffer(rng, "bfloat16", (R, C), (2 * C + 4, 2), off=3, specials=True)
    b = stridedbuffer(rng, "half", (R, C), (C, 1), off=1, specials=True)
    ew.check("maximum", "float", "float", [a, b], (R, C), out_strides=(C, 1))


def test_strided_3d(ew, rng):
    """Rank 3: a permuted input, a broadcast input and a strided output, for a binary op in
    floor division and a unary op (only the input's strides are passed)."""
    shape = (3, 5, 7)
    a = stridedbuffer(rng, "float", shape, (1, 3, 15), off=4, specials=True)  # permuted
    b = stridedbuffer(rng, "float", shape, (7, 0, 1), off=2, lo=-3, hi=3, specials=True)
    ew.check("div_floor", "float", "float", [a, b], shape, out_strides=(60, 8, 1), out_off=2)
    x = stridedbuffer(rng, "half", shape, (70, 2, 10), off=1, specials=True)
    ew.check("tanh", "half", "half", [x], shape, out_strides=(1, 3, 15))


def test_where(ew, rng):
    """where(cond, a, b): bool condition (kept in its own type), float and half values in
    float; strided with a broadcast condition, and contiguous with NaN / Inf values."""
    shape = (4, 6, 5)
    cond = stridedbuffer(rng, "bool", shape, (0, 5, 1), off=3)
    a = stridedbuffer(rng, "float", shape, (30, 5, 1), off=1, specials=True)
    b = stridedbuffer(rng, "half", shape, (1, 4, 24), off=2, specials=True)
    got, _ = ew.check("where", "float", "float", [cond, a, b], shape, out_strides=(35, 6, 1))
    # the condition is read as bool: a stored 2 (non-canonical byte) still selects a
    n = 777
    c = rng.integers(0, 3, n + 1).astype(np.uint8)
    ins = [
        Buf("bool", c, 1),
        contigbuffer(rng, "float", n, 2, specials=True),
        contigbuffer(rng, "half", n, 0, specials=True),
    ]
    ew.check("where", "float", "float", ins, (n,))


def test_clamp(ew, rng):
    """clamp (p0 = lo, p1 = hi), clamp_min (p0 = lo), clamp_max (p0 = hi): NaN inputs stay NaN,
    a NaN bound gives NaN, lo > hi gives hi (torch); integers clamp in their own type, integers
    with a float bound compute in float."""
    n = 500
    x = contigbuffer(rng, "float", n, 3, specials=True)
    for lo, hi in ((-1.0, 2.0), (np.nan, 1.0), (-1.0, np.nan), (2.0, -1.0), (-np.inf, 0.5)):
        got, _ = ew.check("clamp", "float", "float", [x], (n,), p0=lo, p1=hi)
        if np.isnan(lo) or np.isnan(hi):
            assert np.isnan(got).all()
    xs = stridedbuffer(rng, "bfloat16", (20, 30), (1, 40), off=2, specials=True)
    ew.check("clamp_min", "bfloat16", "bfloat16", [xs], (20, 30), ref_op="clamp_lo", p0=0.5)
    got, _ = ew.check("clamp_max", "bfloat16", "bfloat16", [xs], (20, 30), p0=-0.5)
    xi = contigbuffer(rng, "int", n, 1, lo=-1000, hi=1000)
    ew.check("clamp", "int", "int", [xi], (n,), p0=-100, p1=250)
    got, _ = ew.check("clamp", "float", "float", [xi], (n,), p0=-99.5, p1=np.nan, ref_op="clamp")
    assert np.isnan(got).all()


def test_logical_not_strided(ew, rng):
    """logical_not into bool: NaN and -0.0 read as true / false like torch, strided."""
    x = stridedbuffer(rng, "half", (6, 40), (1, 7), off=2, specials=True)
    got, _ = ew.check("logical_not", "bool", "half", [x], (6, 40), out_strides=(41, 1))
    assert set(np.unique(got)) <= {0, 1}
    vals = to_f64("half", x.view((6, 40)))
    np.testing.assert_array_equal(got, (vals == 0).astype(np.uint8))


# --- scalar operands, IDX64 -------------------------------------------------------------------


def test_scalar_operand(ew, rng):
    """IN1_SCALAR: b is a kernel argument in REG(COMP_T), contiguous and strided; NaN / Inf /
    -0.0 values."""
    n = 333
    a = contigbuffer(rng, "half", n, 1, specials=True)
    for value in (2.5, -0.0, np.inf, -np.inf, np.nan, 1e-3):
        for op in ("div_true", "maximum"):
            ew.check(op, "half", "half", [a, Scalar("half", value)], (n,), p0=1.0)
    ai = stridedbuffer(rng, "int", (9, 11), (1, 9), off=2, lo=-5000, hi=5000)
    for value in (-3, 0, 70001):
        got, _ = ew.check(
            "mul", "int", "int", [ai, Scalar("int", value)], (9, 11), out_strides=(12, 1)
        )
        if value == 0:
            assert not got.any()
    # a scalar in front: value + p0 * b (sub is add with -alpha)
    b = contigbuffer(rng, "float", n, 4, specials=True)
    ew.check("add", "float", "float", [Scalar("float", 1.5), b], (n,), p0=-2.0)


def test_idx64(ew, rng):
    """-DIDX64 (64-bit index arithmetic) gives the same results on small sizes, contiguous
    and strided."""
    n = 1000
    ins = [contigbuffer(rng, "float", n, 1, specials=True), contigbuffer(rng, "float", n, 2)]
    ew.check("add", "float", "float", ins, (n,), p0=0.5, idx64=True)
    a = stridedbuffer(rng, "float", (13, 17), (1, 13), off=3, specials=True)
    b = stridedbuffer(rng, "float", (13, 17), (0, 1), off=1)
    ew.check("add", "float", "float", [a, b], (13, 17), p0=0.5, out_strides=(20, 1), idx64=True)
