"""Tests for `elementwise_batch` in kernels/elementwise.cl against NumPy (float64 reference).

Geometry and argument layout as stated at the top of elementwise.cl: one work-group
(global == local), 8 buffer arguments, then a batch_list by value: BATCH_MAX records of
(op, n, out_slot, a_slot, b_slot, out_off, a_off, b_off: uint; p0, p1, bv: float) and a uint
count. Op codes are the host's choice (csrc/ops/ElementwiseBatch.cpp uses the ops' EwId).
Ops run in list order, so later ops read what earlier ones wrote.
"""

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

BATCH_MAX = 16
SLOTS = 8
OPS = ("add", "minimum", "mul", "div_true", "maximum", "clamp_min", "tanh", "exp", "neg", "sigmoid")
CODE = {name: i for i, name in enumerate(OPS)}
UNARY = {"clamp_min", "tanh", "exp", "neg", "sigmoid"}

OP_DTYPE = np.dtype(
    [
        (f, np.uint32)
        for f in ("op", "n", "out_slot", "a_slot", "b_slot", "out_off", "a_off", "b_off")
    ]
    + [("p0", np.float32), ("p1", np.float32), ("bv", np.float32)]
)
LIST_DTYPE = np.dtype([("ops", OP_DTYPE, (BATCH_MAX,)), ("count", np.uint32)])


def reference(op, a, b, p0):
    with np.errstate(all="ignore"):
        return {
            "add": lambda: a + p0 * b,
            "minimum": lambda: np.where(np.isnan(a) | np.isnan(b), a + b, np.minimum(a, b)),
            "mul": lambda: a * b,
            "div_true": lambda: a / b,
            "maximum": lambda: np.where(np.isnan(a) | np.isnan(b), a + b, np.maximum(a, b)),
            "clamp_min": lambda: np.where(np.isnan(a), a, np.where(a < p0, p0, a)),
            "tanh": lambda: np.tanh(a),
            "exp": lambda: np.exp(a),
            "neg": lambda: -a,
            "sigmoid": lambda: 1 / (1 + np.exp(-a)),
        }[op]()


@pytest.fixture(scope="module")
def kernel(build):
    opts = ["-DBATCH_T=float", f"-DBATCH_MAX={BATCH_MAX}"]
    opts.append("-DBATCH_OPS=" + "".join(f"X({i},EWOP_{op})" for i, op in enumerate(OPS)))
    return build("elementwise", opts).elementwise_batch


def run_batch(ctx, queue, kernel, slots, ops, local=64, bv=0.0):
    """slots: float32 arrays (one buffer each); ops: (op, n, (slot, off) out, a, b or None, p0);
    bv is b's value when b is None (p1 stays 0)."""
    bufs = [
        cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=s)
        for s in slots
    ]
    args = bufs + [bufs[0]] * (SLOTS - len(bufs))
    lst = np.zeros((), LIST_DTYPE)
    for k, (op, n, out, a, b, p0) in enumerate(ops):
        rec = lst["ops"][k]
        rec["op"], rec["n"], rec["p0"], rec["bv"] = CODE[op], n, p0, bv
        rec["out_slot"], rec["out_off"] = out
        rec["a_slot"], rec["a_off"] = a
        rec["b_slot"], rec["b_off"] = b if b is not None else (SLOTS, 0)
    lst["count"] = len(ops)
    kernel(queue, (local,), (local,), *args, lst)
    result = [np.empty_like(s) for s in slots]
    for r, buf in zip(result, bufs, strict=True):
        cl.enqueue_copy(queue, r, buf)
    queue.finish()
    return result


def simulate(slots, ops):
    state = [s.astype(np.float64) for s in slots]
    for op, n, (so, oo), (sa, ao), b, p0 in ops:
        x = state[sa][ao : ao + n].copy()
        y = state[b[0]][b[1] : b[1] + n].copy() if b is not None else np.zeros(n)
        state[so][oo : oo + n] = reference(op, x, y, np.float64(np.float32(p0)))
    return state


def special(rng, n):
    v = rng.uniform(-3, 3, n).astype(np.float32)
    v[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    return v


def check(got, want):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.astype(np.float32), rtol=2e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [1, 5, 63, 64, 65, 200])
def test_each_op(ctx, queue, kernel, rng, op, n):
    a = special(rng, n + 7)  # read from offset 7
    b = rng.uniform(0.5, 2, n + 3).astype(np.float32)  # from offset 3
    out = rng.uniform(-1, 1, n + 11).astype(np.float32)  # written at [4, 4 + n), the rest kept
    ops = [(op, n, (2, 4), (0, 7), None if op in UNARY else (1, 3), 0.5)]
    check(run_batch(ctx, queue, kernel, [a, b, out], ops), simulate([a, b, out], ops))


def test_dependent_chain_in_place_and_aliasing(ctx, queue, kernel, rng):
    """A full list where each op reads earlier results, some in place (out == a)."""
    n = 150
    s0 = rng.uniform(-1, 1, 3 * n).astype(np.float32)
    s1 = rng.uniform(0.5, 1.5, 2 * n).astype(np.float32)
    s2 = np.zeros(2 * n, np.float32)
    ops = [("mul", n, (2, 0), (0, 0), (1, 0), 0)]
    for k in range(BATCH_MAX - 1):
        op = OPS[k % len(OPS)]
        src = (2, 0) if k % 2 == 0 else (2, n)
        dst = (2, n) if k % 2 == 0 else (2, 0)
        if k % 5 == 4:
            dst = src  # in place
        ops.append((op, n, dst, src, None if op in UNARY else (0, n), 0.25))
    check(run_batch(ctx, queue, kernel, [s0, s1, s2], ops), simulate([s0, s1, s2], ops))


@pytest.mark.parametrize("op", ["add", "minimum", "mul", "div_true", "maximum"])
def test_scalar_operand(ctx, queue, kernel, rng, op):
    """b_slot >= SLOTS: b is the value bv for every element."""
    a = special(rng, 70)
    out = np.zeros(70, np.float32)
    for value in (2.5, -0.0, np.inf, np.nan):
        ops = [(op, 70, (1, 0), (0, 0), None, 0.75)]
        got = run_batch(ctx, queue, kernel, [a, out], ops, bv=value)
        want = reference(op, a.astype(np.float64), np.float64(np.float32(value)), 0.75)
        np.testing.assert_allclose(
            got[1], want.astype(np.float32), rtol=2e-6, atol=1e-6, equal_nan=True
        )


def test_many_slots_and_empty_list(ctx, queue, kernel, rng):
    slots = [rng.uniform(-2, 2, 40).astype(np.float32) for _ in range(SLOTS)]
    ops = [
        ("add", 40, ((i + 1) % SLOTS, 0), (i, 0), ((i + 2) % SLOTS, 0), 1.0) for i in range(SLOTS)
    ]
    check(run_batch(ctx, queue, kernel, slots, ops), simulate(slots, ops))
    check(run_batch(ctx, queue, kernel, slots, []), [s.astype(np.float64) for s in slots])
