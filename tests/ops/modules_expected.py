"""Expected failures, skips and tolerances of tests/ops/test_modules.py (PyTorch's ModuleInfo
database on ocl).

Keys are (module name as in module_db, e.g. "nn.LSTM"; "train" | "eval"; "forward" |
"backward"); modules whose train and eval modes do not differ run in "train" mode only, as in
PyTorch's test_modules.py. Values are (index of the first sample that fails this way, reason). A
test expects the worst kind of failure whose first sample is among the samples it runs (2 by
default, all with TORCH_OCL_MODULES=full), as xfail(strict=True, raises=<kind>): a test that
passes, or fails in another way, fails.

Kinds, worst first:
  WRONG          silent wrong values, dtypes or shapes: real bugs.
  ERRORS         ocl raised where the CPU returned.
  ERROR_DIFFERS  both raised, differently (or only one of them raised).
  NOT_NATIVE     an op falls back to the CPU, which tests/ops sets to raise
                 NotImplementedError: "not native yet: <the aten op>".
"""

# --------------------------------------------------------------------------------------------
# SILENT WRONG RESULTS. None: every module's outputs, buffers and gradients are within the
# float32 tolerance of the CPU's float32 or float64 result (with TOLERANCES below).
WRONG: dict = {}

# ocl raised where the CPU returned. None.
ERRORS: dict = {}

# Both raised, differently. None.
ERROR_DIFFERS: dict = {}

# --------------------------------------------------------------------------------------------
# NOT NATIVE: the module reaches an op without a native ocl kernel. None (nn.CTCLoss, the last
# one, is native since csrc/ops/Ctc.cpp).
NOT_NATIVE: dict = {}

TABLES = {
    "wrong": WRONG,
    "error": ERRORS,
    "error differs": ERROR_DIFFERS,
    "not native": NOT_NATIVE,
}

# Tests that do not run: a module name (every mode and pass) or a key -> reason. None.
SKIPS: dict = {}

# Random modules, compared by structure, dtype, shape and device only: module name -> reason.
# (A module whose output differs between two CPU runs with different seeds is found at run time
# too.) None: module_db's samples construct Transformer layers and MultiheadAttention with
# dropout=0.0 and give FractionalMaxPool its _random_samples, and it has no Dropout or RReLU.
METADATA_ONLY: dict = {}

# --------------------------------------------------------------------------------------------
# Looser tolerances than tests/ocl_testing.py's float32 TOLERANCES (1e-5, 1e-6), each checked by
# hand over every sample (TORCH_OCL_MODULES=full): (module, "forward" | "backward") or module ->
# (rtol, atol, reason). "needs atol X" is the smallest atol (with rtol 1e-5) that lets every
# gradient of every sample pass against float64; the CPU's own float32 needs about as much.
_ATTENTION_GRAD = (
    "the gradient of in_proj_weight sums q/k/v gradients through the softmax backward "
    "(s * (g - sum(g * s))), whose cancellation leaves elements near zero with the terms' "
    "rounding: over all samples ocl's error against float64 matches the CPU float32's "
    "(median ratio 1.0); "
)
_SDPA = (
    "the layers call MultiheadAttention with need_weights=False, which runs ocl's fused "
    "scaled_dot_product_attention (its backward recomputes P = exp(s - logsumexp) in float32, "
    "as opinfo_expected.TOLERANCES notes for scaled_dot_product_attention), so single elements "
    "differ from the CPU's float32 by up to a few times its own error; "
)
TOLERANCES = {
    ("nn.Conv3d", "backward"): (
        1e-05,
        1e-05,
        "weight gradient of magnitude 171 summed over the batch and the output volume: "
        "needs atol 1.2e-6 on ocl, 2.5e-6 on the CPU's float32 (sample 1)",
    ),
    ("nn.LazyConv3d", "backward"): (1e-05, 1e-05, "as nn.Conv3d (the same samples)"),
    ("nn.ConvTranspose3d", "backward"): (
        1e-05,
        2e-05,
        "weight gradient of magnitude 158 summed over the batch and the input volume: "
        "needs atol 7.0e-6 on ocl, 8.7e-6 on the CPU's float32 (sample 0)",
    ),
    ("nn.LazyConvTranspose3d", "backward"): (1e-05, 2e-05, "as nn.ConvTranspose3d"),
    ("nn.MultiheadAttention", "backward"): (
        1e-05,
        5e-05,
        _ATTENTION_GRAD + "needs atol 1.55e-5 on ocl and on the CPU (sample 50)",
    ),
    ("nn.TransformerEncoderLayer", "backward"): (
        1e-05,
        5e-05,
        _ATTENTION_GRAD + _SDPA + "needs atol 4.7e-6 on ocl and on the CPU (sample 2)",
    ),
    ("nn.TransformerEncoder", "backward"): (
        1e-05,
        5e-05,
        _ATTENTION_GRAD
        + _SDPA
        + "needs atol 1.05e-5 on ocl (eval sample 25), 6.4e-6 on the CPU (train sample 9)",
    ),
    ("nn.TransformerDecoderLayer", "backward"): (
        1e-05,
        5e-05,
        _ATTENTION_GRAD
        + _SDPA
        + "needs atol 1.1e-5 on ocl (sample 45), 7.5e-6 on the CPU (sample 30)",
    ),
    ("nn.Transformer", "backward"): (
        1e-05,
        5e-05,
        _ATTENTION_GRAD
        + _SDPA
        + "needs atol 2.1e-5 on ocl (sample 10), 2.4e-5 on the CPU (sample 31)",
    ),
    ("nn.CrossEntropyLoss", "backward"): (
        1e-05,
        5e-06,
        "probability-target gradient of magnitude 264 (higher_dim_prob_target_weights_none, "
        "sample 86): needs atol 1.1e-6 on ocl, 5.7e-7 on the CPU's float32",
    ),
    ("nn.LinearCrossEntropyLoss", "backward"): (
        1e-05,
        5e-06,
        "linear.weight gradient of magnitude 82 summed over the batch: needs atol 1.7e-6 on "
        "ocl (sample 261), 1.5e-6 on the CPU's float32 (sample 250)",
    ),
}
