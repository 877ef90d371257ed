#!/usr/bin/env bash
# Run tests with every device on the GPU profile (TORCH_OCL_DEVICE_PROFILE=gpu): the GPU variants
# of the kernel families (the tiled GEMM, one element per work-item, work-group scans, large
# work-groups, the GPU attention split) run on PoCL at PoCL's speed. See ci/README.md.
#
#   ci/run-gpu-profile.sh [pytest arguments...]
#
# Default: a slice of the op tests that reaches every GPU variant (GEMM in every layout and dtype,
# convolution through the tiled GEMM, reductions, norms, scans, softmax, attention, index and
# scatter, multi-tensor ops and fused optimizers, the batch of tiny ops, elementwise kernels) and
# two models (a small CNN and Llama's training step). `nox -s gpu_profile` runs the whole op suite
# and the default models this way.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

export TORCH_OCL_DEVICE_PROFILE=gpu
if [ $# -eq 0 ]; then
  set -- \
    tests/ops/test_matmul.py tests/ops/test_blas.py tests/ops/test_conv.py \
    tests/ops/test_reduce.py tests/ops/test_norm.py tests/ops/test_scan.py \
    tests/ops/test_attention.py tests/ops/test_index.py tests/ops/test_scatter.py \
    tests/ops/test_foreach.py tests/ops/test_optim.py tests/ops/test_elementwise_tiny.py \
    tests/ops/test_amp.py tests/runtime/test_device_profile.py \
    "tests/models/test_models.py::test_small_cnn" \
    "tests/models/test_models.py::test_transformers[llama_gqa]" \
    -q -m "not slow"
fi
python -c 'import torch, torch_ocl; p = torch.ocl.device_profile(); print("device profile:", p.name, "(" + p.source + ")", p.vendor, p.params["gemm_large"], p.params["gemm_medium"], p.params["gemm_small"])'
exec python -m pytest "$@"
