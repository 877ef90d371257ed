#!/usr/bin/env bash
# Run tests with every device on the GPU profile (TORCH_OCL_DEVICE_PROFILE=gpu): the GPU variants
# of the kernel families (the tiled GEMM, one element per work-item, work-group scans, large
# work-groups, the GPU attention split) run on PoCL at PoCL's speed. See ci/README.md.
#
#   ci/run-gpu-profile.sh [pytest arguments...]
#
# Default: tests/ops/test_kernel_variants.py (one compact pass over every kernel family whose
# variant comes from the profile: the tiled GEMM in each size class, layout and dtype, the
# implicit-GEMM convolution, norms, reductions, softmax, scans, sort, attention, index and scatter,
# pooling, multi-tensor ops and fused Adam, the batch of tiny ops, elementwise kernels), the GPU
# attention variant's own tests (tests/ops/test_attention_gpu.py: flash-attention-2 kernels over
# head dims, masks, dropout, half types), the norm tests, and two models (a small CNN and Llama's training step). The whole op suite this way
# passed too but takes far longer (kernel compiles of every variant): `nox -s gpu_profile`. `nox -s gpu_profile` runs the whole op suite
# and the default models this way.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

export TORCH_OCL_DEVICE_PROFILE=gpu
if [ $# -eq 0 ]; then
  set -- \
    tests/ops/test_kernel_variants.py tests/ops/test_attention_gpu.py tests/ops/test_norm.py \
    "tests/models/test_models.py::test_small_cnn" \
    "tests/models/test_models.py::test_transformers[llama_gqa]" \
    -q -m "not slow"
fi
python -c 'import torch, torch_ocl; p = torch.ocl.device_profile(); print("device profile:", p.name, "(" + p.source + ")", p.vendor, p.params["gemm_large"], p.params["gemm_medium"], p.params["gemm_small"], "attention_flash=" + str(p.params["attention_flash"]))'
exec python -m pytest "$@"
