#!/usr/bin/env bash
# Run tests on Intel's CPU OpenCL runtime (PyPI opencl-rt 2021.2 + tbb 2021.x), the second
# OpenCL implementation tested beside PoCL.
#
#   ci/run-intel.sh                   the CI slice (below), about 5 minutes on 2 cores
#   ci/run-intel.sh [pytest args...]  those pytest arguments instead, for example
#                                     ci/run-intel.sh tests -q   (the full suites: nox -s test-intel)
#
# Needs the active environment to hold torch-ocl (with [pocl,test]); installs the Intel runtime
# into it first if needed (ci/install-intel-opencl.sh, a few seconds when it is there) and sources
# the environment that script writes. Settings already in the environment win:
#  - TORCH_OCL_DEVICES, default "Intel(R) OpenCL" (the platform's name; a bare "Intel" also matches
#    PoCL's device on an Intel host). ci/opencl_platforms.py --require checks it selects a device.
#  - TORCH_OCL_CACHE_DIR, default a new temporary directory, removed at the end: with a warm
#    program cache the runtime's compiler would not run, and the slice is there to run it.
#    Intel's runtime has no disk cache of its own.
# Intel's compiler settings (CL_CONFIG_*) are left as they are: the defaults (vectoriser on) are
# what users get.
#
# The default slice (see ci/README.md): tests/runtime; op tests that together build every program
# in kernels/ that the device's profile uses (each *.cl at least once, OP_SLICE below; checked by
# reading the kernel file out of each program cache entry after a run), and the kernel tests of
# mm_tiled.cl, the GPU profile's GEMM (KERNEL_SLICE); two models from tests/models: the small
# CNN (training-mode batch norm) and GPT-2 (layer norm, attention, tied weights).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

OP_SLICE=(
  tests/ops/test_amp.py::test_update_scale_matches_the_cpu                  # amp
  tests/ops/test_amp.py::test_unscale_matches_the_cpu                       # foreach
  tests/ops/test_attention.py::test_head_dims                               # attention, softmax
  tests/ops/test_attention.py::test_dropout_advances_the_generator          # random
  tests/ops/test_bucketize.py::test_searchsorted_1d                         # bucketize
  tests/ops/test_compact.py::test_nonzero_layouts                           # compact
  tests/ops/test_conv.py::test_forward_and_grads                            # conv, mm
  tests/ops/test_distance.py::test_float64                                  # distance
  tests/ops/test_distributions.py::test_multinomial_without_replacement_distinct_and_second_draw  # assert
  tests/ops/test_fold.py::test_unfold_fold                                  # fold
  tests/ops/test_fractional_pool.py::test_fractional_max_pool               # fractional_pool
  tests/ops/test_grid_sampler.py::test_modes                                # grid_sampler
  tests/ops/test_grid_sampler.py::test_affine_grid_spatial_transformer      # shape
  tests/ops/test_histogram.py::test_histc                                   # histogram
  tests/ops/test_index.py::test_index_put_patterns                          # index
  tests/ops/test_index.py::test_embedding_backward_dtypes                   # embedding
  tests/ops/test_misc_ops.py::test_isin_nan_inf_mixed_dtypes_and_out        # isin
  tests/ops/test_linalg.py::test_solve_triangular                           # linalg
  tests/ops/test_loss_multi.py::test_multi_margin_loss                      # loss_multi
  tests/ops/test_nn.py::test_cross_entropy_forward_backward                 # loss
  tests/ops/test_nn.py::test_max_min_dim                                    # argreduce, reduce
  tests/ops/test_norm.py::test_layer_norm                                   # norm (no affine too)
  tests/ops/test_norm.py::test_group_norm                                   # norm
  tests/ops/test_norm.py::test_batch_norm2d                                 # norm (training)
  tests/ops/test_pad.py::test_reflect_replicate                             # pad
  tests/ops/test_pool.py::test_max_pool2d_dtypes                            # pool
  tests/ops/test_scan.py::test_cumsum_float                                 # scan
  tests/ops/test_sort.py::test_sort_dtypes                                  # sort
  tests/ops/test_unique.py::test_unique                                     # unique
  tests/ops/test_unpool.py::test_unpool                                     # unpool
  tests/ops/test_upsample.py::test_interpolate                              # upsample
  tests/ops/test_ctc_loss.py::test_ctc_long_target_many_work_items         # ctc
  tests/ops/test_embedding_bag.py::test_embedding_bag_module_and_determinism  # embedding_bag
  tests/ops/test_hash_tensor.py::test_hash_tensor_special_floats_and_out    # hash_tensor
  tests/ops/test_histogramdd.py::test_histogram_bins_tensor_weights_density # histogramdd
  tests/ops/test_segment_reduce.py::test_segment_reduce_no_host_wait        # segment_reduce
  tests/ops/test_upsample_aa.py::test_aa_layouts                            # upsample_aa
)
# mm_tiled.cl runs only under the GPU profile (Intel's CPU device gets the CPU one): its kernel
# tests build it through pyopencl on the same device (TORCH_OCL_DEVICES), in several tile shapes
# and vector widths.
KERNEL_SLICE=(
  tests/kernels/test_mm_tiled.py::test_tiled_k_zero_and_offsets             # mm_tiled
  tests/kernels/test_mm_tiled.py::test_tiled_vector_loads_batches_nan       # mm_tiled
)
MODELS=(
  tests/models/test_models.py::test_small_cnn
  tests/models/test_models.py::test_gpt2_causal_lm_tied_weights
)

default_run=0
if [ $# -eq 0 ]; then
  default_run=1
  set -- tests/runtime "${OP_SLICE[@]}" "${KERNEL_SLICE[@]}" "${MODELS[@]}" -q
fi

start=$SECONDS
bash "$root/ci/install-intel-opencl.sh" --env-file "${TMPDIR:-/tmp}/torch-ocl-intel-$$.env" \
  >/dev/null || {
  echo "run-intel: installing Intel's OpenCL runtime failed" >&2
  exit 1
}
# shellcheck disable=SC1090
. "${TMPDIR:-/tmp}/torch-ocl-intel-$$.env"
rm -f "${TMPDIR:-/tmp}/torch-ocl-intel-$$.env"

export TORCH_OCL_DEVICES=${TORCH_OCL_DEVICES:-"Intel(R) OpenCL"}
python "$root/ci/opencl_platforms.py" --require "$TORCH_OCL_DEVICES" || {
  echo "run-intel: no OpenCL device matches TORCH_OCL_DEVICES=$TORCH_OCL_DEVICES" >&2
  exit 1
}
# tests/models needs torchvision to be collected at all (a node id in a skipped module is an
# error): install it as .ci/run does, the one that pairs with the pinned torch.
if [ "$default_run" = 1 ] && ! python -c "import importlib.util as u, sys; sys.exit(u.find_spec('torchvision') is None)"; then
  echo "run-intel: installing torchvision and timm for the model tests"
  python -m pip install -q -c "$root/ci/constraints.txt" torchvision timm || exit 1
fi
work=""
if [ -z "${TORCH_OCL_CACHE_DIR:-}" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/torch-ocl-intel.XXXXXX")
  export TORCH_OCL_CACHE_DIR=$work/kernel-cache
fi

echo "run-intel: TORCH_OCL_DEVICES=$TORCH_OCL_DEVICES TORCH_OCL_CACHE_DIR=$TORCH_OCL_CACHE_DIR"
env | grep '^CL_CONFIG_' | sed 's/^/run-intel: /'
echo "run-intel: python -m pytest $(printf "%q " "$@")"
python -m pytest "$@"
status=$?
[ -n "$work" ] && rm -rf "$work"
echo "run-intel: exit $status after $((SECONDS - start)) s"
exit "$status"
