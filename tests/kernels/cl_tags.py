"""The kernels' type tags (kernels/common.clh) as NumPy dtypes, shared by the kernel tests."""

import numpy as np

# tag -> numpy storage dtype (bfloat16 is stored as uint16 bits, bool as uint8)
STORE = {
    "float": np.float32,
    "double": np.float64,
    "half": np.float16,
    "bfloat16": np.uint16,
    "long": np.int64,
    "int": np.int32,
    "short": np.int16,
    "char": np.int8,
    "uchar": np.uint8,
    "bool": np.uint8,
}

FLOAT_TAGS = ("float", "double", "half", "bfloat16")


def to_f64(tag, a):
    """Stored values of a tag as float64 (floats) or int64 (integers, bool as 0/1)."""
    a = np.asarray(a)
    if tag == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if tag in FLOAT_TAGS:
        return a.astype(np.float64)
    if tag == "bool":
        return (a != 0).astype(np.int64)
    return a.astype(np.int64)


def f32_to_bf16(x):
    """float32 -> bfloat16 bits, round to nearest even, NaN stays NaN (torch's conversion)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def store(tag, x):
    """float64 / int values -> storage of tag, rounded to nearest like the kernels' stores."""
    x = np.asarray(x)
    if tag == "bfloat16":
        return f32_to_bf16(x.astype(np.float32))
    if tag == "bool":
        return (x != 0).astype(np.uint8)
    return x.astype(STORE[tag])


def need_fp64(has_fp64, *tags):
    """Skips the test when one of the tags is double and the device has no fp64."""
    import pytest

    if "double" in tags and not has_fp64:
        pytest.skip("device has no cl_khr_fp64")


def buffer(ctx, arr):
    """A read-write device buffer initialised with arr."""
    import pyopencl as cl

    mf = cl.mem_flags
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(arr))


def strided_input(fill, data, in_off, sm, sk, pad=3):
    """A flat array filled with `fill` (its dtype is the storage dtype) holding data[m, k] at
    in_off + m*sm + k*sk, with `pad` more elements at the end."""
    M, K = data.shape
    n = in_off + pad + 1
    if M and K:
        n += (M - 1) * sm + (K - 1) * sk
    flat = np.full(n, fill)
    if M and K:
        isz = flat.itemsize
        view = np.lib.stride_tricks.as_strided(
            flat[in_off:], shape=(M, K), strides=(sm * isz, sk * isz), writeable=True
        )
        view[...] = data
    return flat


def view2d(flat, M, K, in_off, sm, sk):
    """The [M, K] view of flat at in_off with element strides (sm, sk), read-only."""
    isz = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[in_off:], shape=(M, K), strides=(sm * isz, sk * isz), writeable=False
    )
