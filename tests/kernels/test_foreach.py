"""Tests for kernels/foreach.cl against NumPy float64 references.

Layout as stated at the top of foreach.cl: 32 buffer arguments, then a table of MT_WORDS uint
words by value (w[0] = rows; row r at 1 + r*ROW: numel, cumulative chunk end, 5-bit buffer slots
per list, element offsets per list, [scalar bits]), then each kernel's own arguments; one
work-group of LWS items per chunk of LWS*MT_PER elements. The tests use a small geometry (chunks
of 16 or 32 elements) so that tensors span several chunks with partial tails, put several
tensors (and lists) in one buffer at odd offsets, include empty rows, and run both the
consecutive (CPU) and the strided (GPU) element order.
"""

import numpy as np
import pytest
from cl_tags import FLOAT_TAGS, STORE, buffer, need_fp64, store, to_f64

cl = pytest.importorskip("pyopencl")

WORDS = 160
NB = 32
GEOMETRIES = [(4, 4, True), (8, 4, False)]  # (LWS, MT_PER, MT_CONSEC)
RTOL = {"float": 2e-6, "double": 1e-12, "half": 1e-3, "bfloat16": 8e-3}
SIZES = [37, 1, 0, 16, 5, 70]  # numel of each tensor (0: an empty row)


def geometry_opts(lws, per, consec, nlist):
    opts = [f"-DMT_WORDS={WORDS}", f"-DLWS={lws}", f"-DMT_PER={per}", f"-DNLIST={nlist}"]
    return opts + (["-DMT_CONSEC"] if consec else [])


class Lists:
    """nlist lists of tensors of SIZES elements (dtype tag), laid out in 3 shared buffers: list l's
    tensor i lives in buffer (l + i) % 3 at an odd offset. values[l][i] holds float64 values."""

    def __init__(self, rng, tag, nlist, low=-3, high=3, sizes=SIZES):
        self.tag, self.nlist, self.sizes = tag, nlist, sizes
        self.where = {}
        fill = [0, 0, 0]
        for i, n in enumerate(sizes):
            for lst in range(nlist):
                b = (lst + i) % 3
                fill[b] += 3  # a gap before each tensor
                self.where[lst, i] = (b, fill[b])
                fill[b] += n
        self.host = [store(tag, rng.uniform(low, high, f + 5)) for f in fill]
        self.values = [[self.read(lst, i) for i in range(len(sizes))] for lst in range(nlist)]

    def read(self, lst, i, host=None):
        b, off = self.where[lst, i]
        h = self.host if host is None else host
        return to_f64(self.tag, h[b][off : off + self.sizes[i]])

    def set(self, lst, i, values):
        b, off = self.where[lst, i]
        self.host[b][off : off + self.sizes[i]] = store(self.tag, values)
        self.values[lst][i] = self.read(lst, i)

    def table(self, chunk, scalars=None, keep_empty=False):
        extra = 2 if scalars is not None else 0
        row_words = 3 + self.nlist + extra
        w = np.zeros(WORDS, np.uint32)
        rows, chunks = 0, 0
        for i, n in enumerate(self.sizes):
            if n == 0 and not keep_empty:
                continue
            base = 1 + rows * row_words
            chunks += (n + chunk - 1) // chunk
            slots = 0
            for lst in range(self.nlist):
                b, off = self.where[lst, i]
                slots |= b << (5 * lst)
                w[base + 3 + lst] = off
            w[base : base + 3] = [n, chunks, slots]
            if scalars is not None:
                w[base + 3 + self.nlist : base + 5 + self.nlist] = scalars[i]
            rows += 1
        w[0] = rows
        t = np.zeros((), dtype=np.dtype([("w", np.uint32, (WORDS,))]))
        t["w"] = w
        return t, rows, chunks


def run(ctx, queue, kernel, lists, chunk, lws, extra_args, scalars=None, keep_empty=False):
    bufs = [buffer(ctx, h) for h in lists.host]
    args = bufs + [bufs[0]] * (NB - len(bufs))
    table, rows, chunks = lists.table(chunk, scalars, keep_empty)
    if chunks:
        kernel(queue, (chunks * lws,), (lws,), *args, table, np.uint32(chunk), *extra_args)
    out = [np.empty_like(h) for h in lists.host]
    for o, b in zip(out, bufs, strict=True):
        cl.enqueue_copy(queue, o, b)
    queue.finish()
    return out


def scalar_words(v, tag):
    if tag == "double":
        return np.frombuffer(np.float64(v).tobytes(), np.uint32)
    if tag in FLOAT_TAGS:
        return np.array([np.float32(v).view(np.uint32), 0], np.uint32)
    return np.frombuffer(np.int64(v).tobytes(), np.uint32)


def comp(tag):
    return np.float64 if tag == "double" else np.float32


def close(got, want, tag, scale=1.0):
    np.testing.assert_allclose(
        got,
        to_f64(tag, store(tag, want)),
        rtol=RTOL[tag] * scale,
        atol=1e-6 * scale,
        equal_nan=True,
    )


# --------------------------------------------------------------------------------------------
# foreach_apply

# name -> (FE op, nin, scalar source, reference(a, b, c, s, alpha))
APPLY = {
    "add_list_alpha": ("add", 2, None, lambda a, b, c, s, al: a + al * b),
    "mul_scalar": ("mul", 1, "arg", lambda a, b, c, s, al: a * s),
    "div_scalarlist": ("div", 1, "list", lambda a, b, c, s, al: a / s),
    "max_list_nan": (
        "max",
        2,
        None,
        lambda a, b, c, s, al: np.where(np.isnan(a) | np.isnan(b), a + b, np.maximum(a, b)),
    ),
    "addcdiv_scalar": ("addcdiv", 3, "arg", lambda a, b, c, s, al: a + s * (b / c)),
    "addcmul_scalarlist": ("addcmul", 3, "list", lambda a, b, c, s, al: a + s * b * c),
    "lerp_list": (
        "lerp",
        3,
        None,
        lambda a, b, c, s, al: np.where(np.abs(c) < 0.5, a + c * (b - a), b - (b - a) * (1 - c)),
    ),
    "lerp_scalar": (
        "lerp",
        2,
        "arg",
        lambda a, b, c, s, al: np.where(np.abs(s) < 0.5, a + s * (b - a), b - (b - a) * (1 - s)),
    ),
    "sqrt": ("sqrt", 1, None, lambda a, b, c, s, al: np.sqrt(np.abs(a))),
    "sign": ("sign", 1, None, lambda a, b, c, s, al: np.sign(a)),
    "unscale_tensor": ("unscale", 1, "tensor", lambda a, b, c, s, al: a * s),
}


@pytest.mark.parametrize("tag", FLOAT_TAGS)
@pytest.mark.parametrize("name", list(APPLY))
@pytest.mark.parametrize("inplace", [True, False], ids=["inplace", "out"])
@pytest.mark.parametrize("geo", GEOMETRIES, ids=["consec", "strided"])
def test_apply(ctx, queue, build, has_fp64, rng, tag, name, inplace, geo):
    need_fp64(has_fp64, tag)
    op, nin, source, ref = APPLY[name]
    lws, per, consec = geo
    nlist = nin + (0 if inplace else 1)
    lists = Lists(rng, tag, nlist)
    if name == "sqrt":
        for i in range(len(SIZES)):
            lists.set(0, i, np.abs(lists.values[0][i]))
    if name.startswith("max"):
        lists.set(0, 0, np.where(np.arange(37) % 5 == 0, np.nan, lists.values[0][0]))
        lists.set(1, 5, np.where(np.arange(70) % 7 == 0, np.nan, lists.values[1][5]))
    if op == "addcdiv":
        for i in range(len(SIZES)):
            lists.set(2, i, lists.values[2][i] + np.sign(lists.values[2][i]) * 0.5)
    opts = [f"-DT={tag}", f"-DFE_OP=FE_{op}", f"-DNIN={nin}", "-DFE_FLOAT"]
    opts += geometry_opts(lws, per, consec, nlist) + (["-DINPLACE"] if inplace else [])
    opts += ["-DCOMP_IS_DOUBLE"] if tag == "double" else []
    if op in ("add", "mul", "div", "max", "lerp") and (source is not None):
        opts.append("-DSECOND_SCALAR")
    scalars, extra = None, []
    s_values = [0.75] * len(SIZES)
    ct = comp(tag)
    if source == "arg":
        extra = [ct(0.75), ct(0.5)]
    else:
        extra = [ct(0), ct(0.5)]
    if source == "list":
        opts.append("-DSCALARLIST")
        s_values = [0.25 * (i + 1) * (-1) ** i for i in range(len(SIZES))]
        scalars = [scalar_words(v, tag) for v in s_values]
    if source == "tensor":
        opts += ["-DS_TENSOR", "-DS_T=float", "-DCHECK_FINITE"]
        sbuf = buffer(ctx, np.array([9, 0.125, 9], np.float32))
        found = np.zeros(3, np.float32)
        fbuf = buffer(ctx, found)
        extra += [sbuf, np.uint64(1), fbuf, np.uint64(1)]
        s_values = [0.125] * len(SIZES)
        lists.set(0, 3, np.where(np.arange(16) == 9, np.inf, lists.values[0][3]))
    kernel = cl.Kernel(build("foreach", opts), "foreach_apply")
    out = run(ctx, queue, kernel, lists, lws * per, lws, extra, scalars)
    for i in range(len(SIZES)):
        a = lists.values[0][i]
        b = lists.values[1][i] if nin > 1 else None
        c = lists.values[2][i] if nin > 2 else None
        s = s_values[i]
        with np.errstate(all="ignore"):
            want = ref(a, b, c, np.float64(ct(s)), np.float64(ct(0.5)))
        got = lists.read(0 if inplace else nin, i, out)
        close(got, want, tag)
        # inputs that are not the output are untouched, and so are the gaps
        for lst in range(1, nin):
            np.testing.assert_array_equal(lists.read(lst, i, out), lists.values[lst][i])
    if source == "tensor":
        found_host = np.empty(3, np.float32)
        cl.enqueue_copy(queue, found_host, fbuf)
        np.testing.assert_array_equal(found_host, [0, 1, 0])


@pytest.mark.parametrize("geo", GEOMETRIES, ids=["consec", "strided"])
def test_pow_scalar_exponents(ctx, queue, build, rng, geo):
    """The exponents the CPU computes without pow(): 2, 3, 0.5, -0.5, -1, -2; others pow()."""
    lws, per, consec = geo
    opts = ["-DT=float", "-DFE_OP=FE_pow", "-DNIN=1", "-DFE_FLOAT", "-DSECOND_SCALAR"]
    kernel = cl.Kernel(build("foreach", opts + geometry_opts(lws, per, consec, 2)), "foreach_apply")
    for e in (2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.7):
        lists = Lists(rng, "float", 2, low=-2, high=3)
        lists.set(0, 0, np.concatenate([[-np.inf, -0.0, np.inf, 0.0], lists.values[0][0][4:]]))
        out = run(ctx, queue, kernel, lists, lws * per, lws, [np.float32(e), np.float32(1)])
        for i in range(len(SIZES)):
            a = lists.values[0][i]
            with np.errstate(all="ignore"):
                want = {0.5: np.sqrt(a), -0.5: 1 / np.sqrt(a), -1.0: 1 / a}.get(e, np.power(a, e))
            close(lists.read(1, i, out), want, "float", scale=4)


@pytest.mark.parametrize("tag", ["long", "int", "char"])
def test_integer_ops(ctx, queue, build, rng, tag):
    """add with an int64 ScalarList (wrapping like the CPU) and max of integer lists."""
    lws, per, consec = GEOMETRIES[0]
    lists = Lists(rng, tag, 2, low=-100, high=100)
    opts = [f"-DT={tag}", "-DFE_OP=FE_add", "-DNIN=1", "-DSECOND_SCALAR", "-DSCALARLIST"]
    opts += geometry_opts(lws, per, consec, 2)
    s_values = [100 * (i + 1) for i in range(len(SIZES))]
    one = np.dtype(STORE[tag]).type(1)
    kernel = cl.Kernel(build("foreach", opts), "foreach_apply")
    out = run(
        ctx,
        queue,
        kernel,
        lists,
        lws * per,
        lws,
        [one * 0, one],
        [scalar_words(v, tag) for v in s_values],
    )
    for i in range(len(SIZES)):
        want = (lists.values[0][i].astype(np.int64) + s_values[i]).astype(STORE[tag])
        np.testing.assert_array_equal(lists.read(1, i, out), want)
    opts = [f"-DT={tag}", "-DFE_OP=FE_max", "-DNIN=2", "-DINPLACE"]
    opts += geometry_opts(lws, per, consec, 2)
    kernel = cl.Kernel(build("foreach", opts), "foreach_apply")
    out = run(ctx, queue, kernel, lists, lws * per, lws, [one * 0, one])
    for i in range(len(SIZES)):
        want = np.maximum(lists.values[0][i], lists.values[1][i])
        np.testing.assert_array_equal(lists.read(0, i, out), want)


@pytest.mark.parametrize("tag", ["short", "long", "uchar"])
def test_copy_and_zero_move_bits(ctx, queue, build, rng, tag):
    lws, per, consec = GEOMETRIES[1]
    lists = Lists(rng, tag, 2, low=0, high=100)
    for name, nin in (("copy", 2), ("zero", 1)):
        opts = [f"-DT={tag}", f"-DFE_OP=FE_{name}", f"-DNIN={nin}", "-DINPLACE"]
        opts += geometry_opts(lws, per, consec, 2 if name == "copy" else 1)
        kernel = cl.Kernel(build("foreach", opts), "foreach_apply")
        sub = lists if name == "copy" else Lists(rng, tag, 1, low=1, high=100)
        one = np.dtype(STORE[tag]).type(0)
        out = run(ctx, queue, kernel, sub, lws * per, lws, [one, one])
        for i in range(len(SIZES)):
            want = sub.values[1][i] if name == "copy" else np.zeros(SIZES[i])
            np.testing.assert_array_equal(sub.read(0, i, out), want)


# --------------------------------------------------------------------------------------------
# norms

NORMS = {
    "NORM_L2": lambda x, p: np.sqrt(np.sum(x * x)),
    "NORM_L1": lambda x, p: np.sum(np.abs(x)),
    "NORM_L0": lambda x, p: np.sum(x != 0).astype(np.float64),
    "NORM_INF": lambda x, p: np.max(np.abs(x)) if x.size else 0.0,
    "NORM_NEGINF": lambda x, p: np.min(np.abs(x)) if x.size else np.inf,
    "NORM_P": lambda x, p: np.sum(np.abs(x) ** p) ** (1 / p),
}


@pytest.mark.parametrize("tag", FLOAT_TAGS)
@pytest.mark.parametrize("kind", list(NORMS))
@pytest.mark.parametrize("geo", GEOMETRIES, ids=["consec", "strided"])
def test_norms(ctx, queue, build, has_fp64, rng, tag, kind, geo):
    need_fp64(has_fp64, tag)
    lws, per, consec = geo
    lists = Lists(rng, tag, 1)
    lists.set(0, 5, np.where(np.arange(70) == 33, np.nan, lists.values[0][5]))
    lists.set(0, 1, [0.0])
    acc = "double" if tag == "double" else "float"
    opts = ["-DNORM_KERNELS", f"-D{kind}", f"-DT={tag}", f"-DOUT_T={tag}", f"-DACC_T={acc}"]
    opts += geometry_opts(lws, per, consec, 1)
    prg = build("foreach", opts)
    chunk = lws * per
    table, rows, chunks = lists.table(chunk, keep_empty=True)
    bufs = [buffer(ctx, h) for h in lists.host]
    args = bufs + [bufs[0]] * (NB - len(bufs))
    p = comp(acc)(3.0)
    # NaN everywhere first: a partial the finish kernel reads without its being written fails the
    # test (and Oclgrind's uninitialised-value check, which flagged the reduce when this buffer
    # started uninitialised, has nothing left to report).
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    part = cl.Buffer(ctx, flags, hostbuf=np.full(chunks + 2, np.nan, comp(acc)))
    out = store(tag, np.full(rows + 2, 7.0))
    obuf = buffer(ctx, out)
    prg.foreach_norm_partial(
        queue, (chunks * lws,), (lws,), *args, table, np.uint32(chunk), p, part, np.uint64(1)
    )
    prg.foreach_norm_finish(
        queue, (rows * lws,), (lws,), table, p, part, np.uint64(1), obuf, np.uint64(1)
    )
    cl.enqueue_copy(queue, out, obuf)
    queue.finish()
    got = to_f64(tag, out)
    assert got[0] == to_f64(tag, store(tag, 7)) and got[-1] == got[0]  # untouched around
    for i in range(len(SIZES)):
        want = NORMS[kind](lists.values[0][i], 3.0)
        close(got[1 + i], want, tag, scale=4)


# --------------------------------------------------------------------------------------------
# fused optimizer steps


def adam_ref(p, g, m, v, vmax, step, lr, b1, b2, wd, eps, adamw, amsgrad, maximize, gs):
    g = g / gs
    g_unscaled = g.copy()
    if maximize:
        g = -g
    if adamw:
        p = p - lr * wd * p
    else:
        g = g + wd * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    bc1, bc2 = 1 - b1**step, 1 - b2**step
    if amsgrad:
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax) / np.sqrt(bc2) + eps
    else:
        denom = np.sqrt(v) / np.sqrt(bc2) + eps
    return p - lr / bc1 * m / denom, g_unscaled, m, v, vmax


@pytest.mark.parametrize("tag", ["float", "half", "bfloat16"])
@pytest.mark.parametrize("adamw", [False, True], ids=["adam", "adamw"])
@pytest.mark.parametrize("amsgrad", [False, True], ids=["", "amsgrad"])
@pytest.mark.parametrize("found", [0.0, 1.0])
def test_fused_adam(ctx, queue, build, rng, tag, adamw, amsgrad, found):
    lws, per, consec = GEOMETRIES[0]
    nl = 5 if amsgrad else 4
    lists = Lists(rng, tag, nl, low=0.1, high=2)
    steps = np.array([0, 3, 1, 7, 2, 5, 4, 0], np.float32)  # one per tensor, at offset 1
    sbuf = buffer(ctx, steps)
    lists_all = lists
    lists_all.nlist = nl + 1
    for i in range(len(SIZES)):
        lists_all.where[nl, i] = (3, 1 + i)
    lists_all.host.append(steps)
    opts = [f"-DT={tag}", "-DFUSED_KERNELS", "-DMAXIMIZE", "-DGRAD_SCALE", "-DFOUND_INF"]
    opts += geometry_opts(lws, per, consec, nl + 1)
    opts += (["-DADAMW"] if adamw else []) + (["-DAMSGRAD"] if amsgrad else [])
    kernel = cl.Kernel(build("foreach", opts), "fused_adam")
    hp = dict(lr=0.01, b1=0.9, b2=0.999, wd=0.1, eps=1e-6)
    gs = buffer(ctx, np.array([0, 4.0], np.float32))
    fi = buffer(ctx, np.array([found, 0], np.float32))
    extra = [np.float32(hp[k]) for k in ("lr", "b1", "b2", "wd", "eps")]
    extra += [gs, np.uint64(1), fi, np.uint64(0)]
    del sbuf
    out = run(ctx, queue, kernel, lists_all, lws * per, lws, extra)
    for i in range(len(SIZES)):
        vals = [lists.values[lst][i] for lst in range(nl)]
        vmax = vals[4] if amsgrad else None
        want = adam_ref(
            *vals[:4],
            vmax,
            float(steps[1 + i]),
            **hp,
            adamw=adamw,
            amsgrad=amsgrad,
            maximize=True,
            gs=4.0,
        )
        for lst in range(nl):
            got = lists.read(lst, i, out)
            if found:
                np.testing.assert_array_equal(got, vals[lst])
            else:
                close(got, want[lst], tag, scale=8)


@pytest.mark.parametrize("momentum", [False, True], ids=["plain", "momentum"])
@pytest.mark.parametrize("nesterov", [False, True], ids=["", "nesterov"])
@pytest.mark.parametrize("first", [0, 1])
def test_fused_sgd(ctx, queue, build, rng, momentum, nesterov, first):
    if nesterov and not momentum:
        pytest.skip("nesterov needs momentum")
    lws, per, consec = GEOMETRIES[1]
    nl = 3 if momentum else 2
    lists = Lists(rng, "float", nl)
    opts = ["-DT=float", "-DFUSED_KERNELS", "-DLR_TENSOR"] + geometry_opts(lws, per, consec, nl)
    opts += (["-DMOMENTUM"] if momentum else []) + (["-DNESTEROV"] if nesterov else [])
    kernel = cl.Kernel(build("foreach", opts), "fused_sgd")
    lr = buffer(ctx, np.array([0.1], np.float32))
    wd, mom, damp = 0.01, 0.9, 0.2
    extra = [np.float32(0), np.float32(wd), np.float32(mom), np.float32(damp), np.int32(first)]
    out = run(ctx, queue, kernel, lists, lws * per, lws, extra + [lr, np.uint64(0)])
    for i in range(len(SIZES)):
        p, g = lists.values[0][i], lists.values[1][i]
        g = g + wd * p
        if momentum:
            buf = g if first else mom * lists.values[2][i] + (1 - damp) * g
            close(lists.read(2, i, out), buf, "float")
            g = g + mom * buf if nesterov else buf
        close(lists.read(0, i, out), p - 0.1 * g, "float")


def test_fused_adagrad(ctx, queue, build, rng):
    lws, per, consec = GEOMETRIES[0]
    lists = Lists(rng, "float", 3, low=0.1, high=2)
    lists.nlist = 4
    steps = np.array([3, 1, 7, 2, 5, 4], np.float32)
    for i in range(len(SIZES)):
        lists.where[3, i] = (3, i)
    lists.host.append(steps)
    opts = ["-DT=float", "-DFUSED_KERNELS"] + geometry_opts(lws, per, consec, 4)
    kernel = cl.Kernel(build("foreach", opts), "fused_adagrad")
    lr, decay, wd, eps = 0.1, 0.01, 0.1, 1e-6
    extra = [np.float32(v) for v in (lr, decay, wd, eps)]
    out = run(ctx, queue, kernel, lists, lws * per, lws, extra)
    for i in range(len(SIZES)):
        p, g, s = (lists.values[lst][i] for lst in range(3))
        g = g + wd * p
        clr = lr / (1 + (steps[i] - 1) * decay)
        s = s + g * g
        close(lists.read(2, i, out), s, "float")
        close(lists.read(0, i, out), p - clr * g / (np.sqrt(s) + eps), "float", scale=4)
