"""Expected failures, skips and tolerances of tests/inductor/test_inductor_opinfo.py (PyTorch's
OpInfo through torch.compile on ocl). Each entry was checked by hand: its reason says why.

EXPECTED: (OpInfo full name, dtype) -> (index of the first sample that fails this way, kind,
reason). A test whose samples include that index runs as xfail(strict=True, raises=<kind>): a
test that passes, or fails in another way, fails. Kinds (test_inductor_opinfo.py): "wrong",
"error", "refused", "not native", "dynamo", "error differs".
"""

EXPECTED: dict[tuple[str, str], tuple[int, str, str]] = {}

# (op, dtype) -> (rtol, atol, why): tolerances looser than tests/ocl_testing.py's for one op.
TOLERANCES: dict[tuple[str, str], tuple[float, float, str]] = {}

# op or (op, dtype) -> why the test does not run at all.
SKIPS: dict[object, str] = {}
