"""Placeholder; rewritten by ci/opinfo_expectations.py."""

WRONG = {}
WRONG_NOTES = {}
ERRORS = {}
ERROR_DIFFERS = {}
NOT_NATIVE = {}
TABLES = {"wrong": WRONG, "error": ERRORS, "error differs": ERROR_DIFFERS, "not native": NOT_NATIVE}
SKIPS = {}
_UNINIT = "uninitialised output: only dtype, shape and device compared"
_RANDOM = "random output: only dtype, shape and device compared (tests/ops/test_random.py checks values)"
METADATA_ONLY = {
    "empty": _UNINIT,
    "empty_like": _UNINIT,
    "empty_permuted": _UNINIT,
    "empty_strided": _UNINIT,
    "new_empty": _UNINIT,
    "new_empty_strided": _UNINIT,
    "bernoulli": _RANDOM,
    "cauchy": _RANDOM,
    "exponential": _RANDOM,
    "geometric": _RANDOM,
    "log_normal": _RANDOM,
    "multinomial": _RANDOM,
    "nn.functional.alpha_dropout": _RANDOM,
    "nn.functional.dropout": _RANDOM,
    "nn.functional.dropout2d": _RANDOM,
    "nn.functional.dropout3d": _RANDOM,
    "nn.functional.feature_alpha_dropout.with_train": _RANDOM,
    "normal": _RANDOM,
    "normal.in_place": _RANDOM,
    "normal.number_mean": _RANDOM,
    "rand_like": _RANDOM,
    "randint": _RANDOM,
    "randint_like": _RANDOM,
    "randn": _RANDOM,
    "randn_like": _RANDOM,
    "uniform": _RANDOM,
}
TOLERANCES = {}
FALLBACK_ONLY_OPS = set()
