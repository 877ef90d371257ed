// Shape ops on the device with the remap kernel of kernels/shape.cl (one launch each, any
// strides, every dtype as bits): flip, roll (all dims at once), tril/triu (structured: ATen's
// meta functions, out= and in-place through Structured.h). rot90, fliplr/flipud, fft shifts and
// the like decompose onto these in ATen. unfold_backward (overlapping windows) runs ATen's own
// function with a kernel for its DispatchStub that adds each window offset's slice in turn.
// repeat_interleave's Tensor form (the index of every repeated element; the other forms are
// ATen composites over it) is a search of the running sum of the repeats: native ops, with one
// host wait for the total unless output_size gives it (as on the CPU).
#include "ops/Shape.h"

#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/UnfoldBackward.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/tril_meta.h>
#include <ATen/ops/triu_meta.h>
#include <ATen/ops/unfold_backward_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "ops/KernelTypes.h"
#include "ops/Structured.h"
#include "runtime/Device.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {

namespace {

constexpr size_t kLws = 256;
constexpr size_t kChunkLws = 64;  // when work-items take runs of elements
constexpr int kMaxDims = 8;

struct Dim {
  int64_t osize, ostride, isize, istride, offset;
  RemapMode mode;
  int role;  // 0: none, 1: the triangle's row, 2: its column
};

bool is_identity(const Dim& d) {
  return d.role == 0 && d.mode == RemapMode::kShift && d.offset == 0 && d.isize == d.osize;
}

cl_long8 long8_of(const std::vector<Dim>& dims, int64_t Dim::*field) {
  cl_long8 v{};
  for (size_t i = 0; i < dims.size(); ++i) v.s[i] = dims[i].*field;
  return v;
}

}  // namespace

FillBits fill_bits(const c10::Scalar& value, at::ScalarType dtype) {
  // A CPU scalar tensor filled like the CPU fills (same conversion, same overflow error).
  const at::Tensor t = at::scalar_tensor(value, at::TensorOptions().dtype(dtype));
  FillBits bits;
  TORCH_CHECK(t.itemsize() <= sizeof(bits.bytes), "torch-ocl: dtype ", dtype,
              " is not supported on the ocl device yet");
  std::memcpy(bits.bytes, t.const_data_ptr(), t.itemsize());
  return bits;
}

void launch_remap(const at::Tensor& out, const at::Tensor& in, const std::vector<RemapDim>& dims,
                  const void* fill, Triangle tri, int64_t k) {
  TORCH_INTERNAL_ASSERT(out.dim() == in.dim() && static_cast<size_t>(out.dim()) == dims.size());
  TORCH_INTERNAL_ASSERT(out.scalar_type() == in.scalar_type());
  if (out.numel() == 0) return;
  // 16-byte elements (complex128) have no kernel type: their two 8-byte halves are one more,
  // innermost, dim (zero fill only: the halves of a fill value differ).
  const bool halves = out.itemsize() == 16;
  TORCH_CHECK_NOT_IMPLEMENTED(!halves || fill == nullptr, "torch-ocl: filling ", out.scalar_type(),
                              " elements with a value in this shape op is not supported on the "
                              "ocl device yet");
  const int64_t scale = halves ? 2 : 1;
  // Innermost first: dim 0 of the kernel is the tensor's last dim.
  std::vector<Dim> v;
  const int64_t rank = out.dim();
  if (halves) v.push_back(Dim{2, 1, 2, 1, 0, RemapMode::kShift, 0});
  for (int64_t d = rank - 1; d >= 0; --d) {
    int role = 0;
    if (tri != Triangle::kNone && d == rank - 2) role = 1;
    if (tri != Triangle::kNone && d == rank - 1) role = 2;
    v.push_back(Dim{out.size(d), out.stride(d) * scale, in.size(d), in.stride(d) * scale,
                    dims[d].offset, dims[d].mode, role});
  }
  // Size-1 identity dims add nothing; walking the output in memory order keeps writes local
  // (channels_last), and neighbouring identity dims that are one dim in both tensors merge.
  v.erase(std::remove_if(v.begin(), v.end(),
                         [](const Dim& d) { return is_identity(d) && d.osize == 1; }),
          v.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const Dim& a, const Dim& b) { return a.ostride < b.ostride; });
  std::vector<Dim> merged;
  for (const Dim& d : v) {
    if (!merged.empty()) {
      Dim& m = merged.back();
      if (is_identity(m) && is_identity(d) && d.ostride == m.ostride * m.osize &&
          d.istride == m.istride * m.isize) {
        m.osize *= d.osize;
        m.isize = m.osize;
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.empty()) merged.push_back(Dim{1, 1, 1, 1, 0, RemapMode::kShift, 0});
  TORCH_CHECK_NOT_IMPLEMENTED(merged.size() <= kMaxDims,
                              "torch-ocl: this shape op supports tensors of up to ", kMaxDims,
                              " non-trivial dimensions on the ocl device, got ", merged.size());
  // One int per dim (bits packed into one uint made Oclgrind mis-execute the mode tests).
  cl_int8 modes{};
  cl_int row_dim = -1, col_dim = -1;
  for (size_t i = 0; i < merged.size(); ++i) {
    modes.s[i] = static_cast<cl_int>(merged[i].mode);
    if (merged[i].role == 1) row_dim = static_cast<cl_int>(i);
    if (merged[i].role == 2) col_dim = static_cast<cl_int>(i);
  }
  c10::DeviceGuard guard(out.device());
  const int device = out.device().index();
  const size_t itemsize = halves ? 8 : out.itemsize();
  const FillBits zero;
  // Runs of up to `chunk` elements along dim 0 per work-item (kernels/shape.cl).
  const int64_t chunk = static_cast<int64_t>(device_profile(device).stream_chunk);
  KernelLaunch l(
      get_kernel(device, "shape.cl", "remap",
                 std::string("-DT=") + bits_tag(itemsize) + " -DCHUNK=" + std::to_string(chunk)));
  const int64_t total = out.numel() * scale;  // kernel elements (halves of 16-byte ones)
  l.arg(static_cast<cl_ulong>(total));
  l.buffer(buffer_of(out), itemsize).buffer(buffer_of(in), itemsize);
  l.arg(static_cast<cl_int>(merged.size()));
  l.arg(long8_of(merged, &Dim::osize)).arg(long8_of(merged, &Dim::ostride));
  l.arg(long8_of(merged, &Dim::isize)).arg(long8_of(merged, &Dim::istride));
  l.arg(long8_of(merged, &Dim::offset)).arg(modes);
  l.raw(itemsize, fill ? fill : zero.bytes);
  l.arg(static_cast<cl_int>(tri)).arg(static_cast<cl_long>(k));
  l.arg(row_dim).arg(col_dim);
  const int64_t s0 = merged[0].osize;
  l.enqueue1d(device, static_cast<size_t>(total / s0 * ((s0 + chunk - 1) / chunk)),
              chunk > 1 ? kChunkLws : kLws);
}

namespace {

std::vector<RemapDim> identity_dims(int64_t rank) {
  return std::vector<RemapDim>(static_cast<size_t>(rank));
}

// ---------------------------------------------------------------------------------------------
// flip: the CPU's checks (dims wrapped, no repeats), a result laid out like self.

at::Tensor flip_impl(const at::Tensor& self, at::IntArrayRef dims) {
  const int64_t rank = self.dim();
  const auto flipped = at::dim_list_to_bitset(dims, rank);
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  std::vector<RemapDim> map = identity_dims(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (flipped[d]) map[d].mode = RemapMode::kFlip;
  }
  launch_remap(out, self, map);
  return out;
}

// ---------------------------------------------------------------------------------------------
// roll: the CPU's argument rules (roll_common), every dim rolled in the same launch.

at::Tensor roll_impl(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  if (dims.size() != 1 || shifts.size() != 1) {
    TORCH_CHECK(!shifts.empty(), "`shifts` required");
    if (dims.empty() && shifts.size() == 1) {
      // Rolls the flattened tensor; the result is contiguous, as the CPU's.
      const at::Tensor flat = self.contiguous().view({self.numel()});
      return roll_impl(flat, shifts, {0}).view(self.sizes());
    }
    TORCH_CHECK(shifts.size() == dims.size(),
                "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
  }
  if (self.numel() == 0) return self.clone(at::MemoryFormat::Preserve);
  std::vector<RemapDim> map = identity_dims(self.dim());
  bool unmoved_dim = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t size = self.size(dims[i]);  // the CPU's error for a bad dim
    const int64_t d = at::maybe_wrap_dim(dims[i], self.dim());
    const int64_t s = ((shifts[i] % size) + size) % size;
    map[d].mode = RemapMode::kWrap;
    map[d].offset = (map[d].offset + s) % size;
    unmoved_dim = unmoved_dim || s == 0;
  }
  // The CPU rolls one dim after the other as a cat of two slices; a dim rolled by a multiple of
  // its size cats with an empty slice, which gives a contiguous result.
  const at::MemoryFormat format =
      unmoved_dim ? at::MemoryFormat::Contiguous : self.suggest_memory_format();
  at::Tensor out = at::empty(self.sizes(), self.options().memory_format(format));
  launch_remap(out, self, map);
  return out;
}

// ---------------------------------------------------------------------------------------------
// tril / triu (structured): out is contiguous and may be self itself (the in-place variants),
// since each element is read only where it is written.

template <Triangle kTri>
void tri_kernel(const Outputs<1>& out, const at::Tensor& self, int64_t k) {
  launch_remap(out[0], self, identity_dims(self.dim()), nullptr, kTri, k);
}

using Tril = Structured<at::meta::structured_tril, tri_kernel<Triangle::kLower>, 0>;
using Triu = Structured<at::meta::structured_triu, tri_kernel<Triangle::kUpper>, 0>;

// unfold_backward's stub: grad_input (zeros, the input's shape) += the windows of grad (the
// input's shape with `dim` replaced by the window count, plus a last dimension of `size`). Each
// offset j in a window is one strided add_: element j of window w goes to w * step + j.
void unfold_backward_kernel(at::Tensor& grad_input, const at::Tensor& grad, int64_t dim,
                            int64_t size, int64_t step) {
  if (grad_input.dim() == 0) {
    grad_input.add_(grad.sum());
    return;
  }
  dim = at::maybe_wrap_dim(dim, grad_input.dim());
  const int64_t windows = grad.size(dim);
  if (windows == 0) return;
  for (int64_t j = 0; j < size; ++j) {
    grad_input.slice(dim, j, j + (windows - 1) * step + 1, step).add_(grad.select(-1, j));
  }
}

// repeat_interleave(repeats): i repeated repeats[i] times, in repeats' dtype (int64 or int32).
// Element j of the result is the first i whose running sum of repeats exceeds j.
at::Tensor repeat_interleave_tensor(const at::Tensor& repeats, std::optional<int64_t> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK_NOT_IMPLEMENTED(
      repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
      "\"repeat_interleave\" not implemented for '", c10::toString(repeats.scalar_type()), "'");
  if (repeats.size(0) == 0) return at::empty({0}, repeats.options());
  const at::Tensor cumsum = repeats.cumsum(0);
  int64_t total;
  if (output_size) {
    total = *output_size;
  } else {
    total = cumsum[-1].item<int64_t>();
    TORCH_CHECK(repeats.ge(0).all().item<bool>(), "repeats can not be negative");
  }
  const at::Tensor positions = at::arange(total, cumsum.options());
  return at::searchsorted(cumsum, positions, /*out_int32=*/repeats.scalar_type() == at::kInt,
                          /*right=*/true);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("repeat_interleave.Tensor", repeat_interleave_tensor);
  m.impl("unfold_backward", at::native::unfold_backward);
  m.impl("flip", flip_impl);
  m.impl("roll", roll_impl);
  m.impl("tril", Tril::functional);
  m.impl("tril.out", Tril::out);
  m.impl("tril_", Tril::inplace);
  m.impl("triu", Triu::functional);
  m.impl("triu.out", Triu::out);
  m.impl("triu_", Triu::inplace);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(unfold_backward_stub, &torch_ocl::unfold_backward_kernel);
}  // namespace at::native
