"""Expected failures, skips and tolerances of tests/inductor/test_inductor_opinfo.py (PyTorch's
OpInfo through torch.compile on ocl). Each entry was checked by hand: its reason says why.

EXPECTED: (OpInfo full name, dtype) -> (index of the first sample that fails this way, kind,
reason). A test whose samples include that index runs as xfail(strict=True, raises=<kind>): a
test that passes, or fails in another way, fails. Kinds (test_inductor_opinfo.py): "wrong",
"error", "refused", "not native", "dynamo", "error differs".
"""

_CHALF = (
    "ComplexHalf (complex32) tensors do not exist on ocl, eager or compiled (docs/complex.md: "
    "complex64 and complex128 only); the CPU makes them"
)
_STATS = (
    "Inductor's decomposition (torch._refs / torch._decomp) returns the saved mean and rstd in "
    "float32 on every device but the CPU, as CUDA's kernels do; eager ocl and the CPU return "
    "them in float16. The normalised output itself matches"
)
_DATA_DEPENDENT = (
    "Dynamo cannot capture it in one graph: the op reads a device value on the host "
    "(PyTorch's own Inductor OpInfo test lists it as an expected failure on CPU and CUDA too)"
)

EXPECTED: dict[tuple[str, str], tuple[int, str, str]] = {
    ("chalf", "float16"): (0, "error", _CHALF),
    ("chalf", "float32"): (0, "error", _CHALF),
    ("complex", "float16"): (0, "error", _CHALF),
    ("equal", "float16"): (0, "dynamo", _DATA_DEPENDENT + ": equal returns a Python bool"),
    ("equal", "float32"): (0, "dynamo", _DATA_DEPENDENT + ": equal returns a Python bool"),
    ("frexp", "float16"): (
        0,
        "refused",
        "ops.frexp (two outputs from one op) is not generated yet; refused with the way out "
        "(backend='aot_eager'), docs/compile.md",
    ),
    ("frexp", "float32"): (
        0,
        "refused",
        "ops.frexp (two outputs from one op) is not generated yet; refused with the way out "
        "(backend='aot_eager'), docs/compile.md",
    ),
    ("native_batch_norm", "float16"): (0, "wrong", _STATS),
    ("native_layer_norm", "float16"): (0, "wrong", _STATS),
    ("nn.functional.gaussian_nll_loss", "float16"): (
        0,
        "dynamo",
        _DATA_DEPENDENT + ": its check that var is non-negative (torch.any(var < 0))",
    ),
    ("nn.functional.gaussian_nll_loss", "float32"): (
        0,
        "dynamo",
        _DATA_DEPENDENT + ": its check that var is non-negative (torch.any(var < 0))",
    ),
    ("nn.functional.rrelu", "float32"): (
        0,
        "dynamo",
        "Dynamo does not trace rrelu in training mode (a function marked as skipped; PyTorch's "
        "own Inductor OpInfo test lists it as an expected failure on CPU and CUDA too)",
    ),
}

# (op, dtype) -> (rtol, atol, why): tolerances looser than tests/ocl_testing.py's for one op.
TOLERANCES: dict[tuple[str, str], tuple[float, float, str]] = {
    ("nn.functional.cosine_similarity", "float16"): (
        2e-3,
        3e-4,
        "a cosine near 0 is a cancelling sum of products of normalised float16 values: the "
        "first sample's 0.00709 came out 0.00717 compiled and 0.00725 on the CPU in float16 "
        "(1.6e-4 from float64), so an absolute error of a few 1e-4 is float16's, not the kernel's",
    ),
}

# op or (op, dtype) -> why the test does not run at all.
_JITERATOR = (
    "CUDA's jiterator (CUDA C compiled at run time): no meaning on ocl; PyTorch's own Inductor "
    "OpInfo test skips the jiterator ops as well"
)
SKIPS: dict[object, str] = {
    "jiterator_unary": _JITERATOR,
    "jiterator_binary": _JITERATOR,
    "jiterator_binary_return_by_ref": _JITERATOR,
    "jiterator_2inputs_2outputs": _JITERATOR,
    "jiterator_4inputs_with_extra_args": _JITERATOR,
}
