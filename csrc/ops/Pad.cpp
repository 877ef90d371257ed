// Padding on the device: constant_pad_nd, reflection_pad1d/2d/3d and replication_pad1d/2d/3d,
// forwards through the remap kernel of kernels/shape.cl (one launch, any strides, every dtype as
// bits), backwards with kernels/pad.cl (a gather per grad_input element: deterministic sums, no
// atomics). Circular padding is ATen's _pad_circular, which decomposes into copies.
//
// Checks, shapes and layouts come from ATen where it has them: the structured ops' meta
// functions (Structured.h), constant_pad_nd's own composite run on meta tensors; the unstructured
// ones (reflection_pad2d and its backward, replication_pad2d/3d_backward) repeat the CPU's checks
// with its messages.
#include <ATen/native/Padding.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/reflection_pad1d_backward_meta.h>
#include <ATen/ops/reflection_pad1d_meta.h>
#include <ATen/ops/reflection_pad3d_backward_meta.h>
#include <ATen/ops/reflection_pad3d_meta.h>
#include <ATen/ops/replication_pad1d_backward_meta.h>
#include <ATen/ops/replication_pad1d_meta.h>
#include <ATen/ops/replication_pad2d_meta.h>
#include <ATen/ops/replication_pad3d_meta.h>
#include <c10/core/DeviceGuard.h>
#include <torch/headeronly/version.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <vector>

#include "ops/KernelTypes.h"
#include "ops/Shape.h"
#include "ops/Structured.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr size_t kLws = 64;

enum class Mode { kReflect, kReplicate };

// The op names of the CPU's dtype errors ("reflection_pad1d" not implemented for 'Bool').
enum class Op { kReflect1d, kReflect2d, kReflect3d, kReplicate1d, kReplicate2d, kReplicate3d };

constexpr Mode mode_of(Op op) {
  return op == Op::kReflect1d || op == Op::kReflect2d || op == Op::kReflect3d ? Mode::kReflect
                                                                              : Mode::kReplicate;
}

std::string name_of(Op op) {
  switch (op) {
    case Op::kReflect1d:
      return "reflection_pad1d";
    case Op::kReflect2d:
      return "reflection_pad2d";
    case Op::kReflect3d:
      return "reflection_pad3d";
    case Op::kReplicate1d:
      return "replication_pad1d";
    case Op::kReplicate2d:
      return "replication_pad2d";
    case Op::kReplicate3d:
      return "replication_pad3d";
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Forwards: remap with the padding before each padded dim as its offset.

void pad_forward(const at::Tensor& out, const at::Tensor& self, at::IntArrayRef padding, Op op) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"", name_of(op),
                              "\" not implemented for 'Bool'");
  std::vector<RemapDim> map(static_cast<size_t>(self.dim()));
  const int64_t spatial = static_cast<int64_t>(padding.size()) / 2;
  const RemapMode mode =
      mode_of(op) == Mode::kReflect ? RemapMode::kReflect : RemapMode::kReplicate;
  for (int64_t i = 0; i < spatial; ++i) {
    map[self.dim() - 1 - i] = RemapDim{mode, padding[2 * i]};
  }
  launch_remap(out, self, map);
}

template <Op kOp>
void pad_kernel(const Outputs<1>& out, const at::Tensor& self, at::IntArrayRef padding) {
  pad_forward(out[0], self, padding, kOp);
}

using ReflectionPad1d =
    Structured<at::meta::structured_reflection_pad1d, pad_kernel<Op::kReflect1d>>;
using ReflectionPad3d =
    Structured<at::meta::structured_reflection_pad3d, pad_kernel<Op::kReflect3d>>;
using ReplicationPad1d =
    Structured<at::meta::structured_replication_pad1d, pad_kernel<Op::kReplicate1d>>;
using ReplicationPad2d =
    Structured<at::meta::structured_replication_pad2d, pad_kernel<Op::kReplicate2d>>;
using ReplicationPad3d =
    Structured<at::meta::structured_replication_pad3d, pad_kernel<Op::kReplicate3d>>;

// reflection_pad2d is not structured in ATen: the CPU's checks (reflection_pad2d_out_template);
// from torch 2.15 ATen shares them in Padding.h, with new messages.
std::vector<int64_t> reflection_pad2d_sizes(const at::Tensor& input, at::IntArrayRef padding) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 15)
  const auto sizes =
      at::native::padding::pad_shape_check(input, padding, 2, /*is_reflection=*/true);
  return std::vector<int64_t>(sizes.begin(), sizes.end());
#else
  at::native::padding::check_valid_input<2>(input, padding);
  const bool batch = input.dim() == 4;
  const int64_t dim_w = batch ? 3 : 2, dim_h = dim_w - 1;
  const int64_t pad_l = padding[0], pad_r = padding[1], pad_t = padding[2], pad_b = padding[3];
  const int64_t input_h = input.size(dim_h), input_w = input.size(dim_w);
  const int64_t output_h = input_h + pad_t + pad_b, output_w = input_w + pad_l + pad_r;
  TORCH_CHECK(pad_l < input_w && pad_r < input_w,
              "Argument #4: Padding size should be less than the corresponding input dimension, "
              "but got: padding (",
              pad_l, ", ", pad_r, ") at dimension ", dim_w, " of input ", input.sizes());
  TORCH_CHECK(pad_t < input_h && pad_b < input_h,
              "Argument #6: Padding size should be less than the corresponding input dimension, "
              "but got: padding (",
              pad_t, ", ", pad_b, ") at dimension ", dim_h, " of input ", input.sizes());
  TORCH_CHECK(output_w >= 1 || output_h >= 1, "input (H: ", input_h, ", W: ", input_w,
              ")is too small. Calculated output H: ", output_h, " W: ", output_w);
  std::vector<int64_t> sizes = input.sizes().vec();
  sizes[dim_h] = output_h;
  sizes[dim_w] = output_w;
  return sizes;
#endif
}

at::MemoryFormat format_of(const at::Tensor& input, int64_t batched_dim) {
  return input.dim() == batched_dim ? input.suggest_memory_format() : at::MemoryFormat::Contiguous;
}

at::Tensor& reflection_pad2d_out(const at::Tensor& self, at::IntArrayRef padding, at::Tensor& out) {
  const std::vector<int64_t> sizes = reflection_pad2d_sizes(self, padding);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  out.resize_(sizes, format_of(self, 4));
  const at::Tensor work = working_output(out, {&self});
  pad_forward(work, self, padding, Op::kReflect2d);
  finish_out(out, work);
  return out;
}

at::Tensor reflection_pad2d(const at::Tensor& self, at::IntArrayRef padding) {
  const std::vector<int64_t> sizes = reflection_pad2d_sizes(self, padding);
  // A new result in the CPU's layout, written directly (the kernel takes any strides).
  at::Tensor out = at::empty(sizes, self.options().memory_format(format_of(self, 4)));
  pad_forward(out, self, padding, Op::kReflect2d);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Backwards: kernels/pad.cl.

std::string backward_options(at::ScalarType t, int device, Mode mode) {
  return std::string("-DT_=") + type_tag(t, device) +
         " -DACC_T=" + (t == at::kDouble ? "double" : "float") +
         (mode == Mode::kReflect ? " -DREFLECT" : " -DREPLICATE");
}

// The [N, C, D, H, W] strides of a tensor whose last `spatial` dims are padded (0 for absent
// dims), and its extents.
std::array<int64_t, 5> strides5(const at::Tensor& t, int64_t spatial) {
  std::array<int64_t, 5> st{0, 0, 0, 0, 0};
  const int64_t d = t.dim();
  if (d == spatial + 2) st[0] = t.stride(0);
  st[1] = t.stride(d - spatial - 1);
  for (int64_t i = 0; i < spatial; ++i) st[4 - i] = t.stride(d - 1 - i);
  return st;
}

std::array<int64_t, 5> sizes5(const at::Tensor& t, int64_t spatial) {
  std::array<int64_t, 5> sz{1, 1, 1, 1, 1};
  const int64_t d = t.dim();
  if (d == spatial + 2) sz[0] = t.size(0);
  sz[1] = t.size(d - spatial - 1);
  for (int64_t i = 0; i < spatial; ++i) sz[4 - i] = t.size(d - 1 - i);
  return sz;
}

// grad_input (self's shape, any strides) from grad_output; `name` for the CPU's dtype errors.
void pad_backward(const at::Tensor& gi, const at::Tensor& go, at::IntArrayRef padding, Op op) {
  const std::string name = name_of(op) + "_backward";
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(go.scalar_type()), "\"", name,
                              "\" not implemented for '", go.scalar_type(), "'");
  TORCH_CHECK(go.scalar_type() == gi.scalar_type(), "expected scalar type ", go.scalar_type(),
              " but found ", gi.scalar_type());
  if (gi.numel() == 0) return;
  const int64_t spatial = static_cast<int64_t>(padding.size()) / 2;
  TORCH_CHECK(go.dim() == gi.dim(), name, ": expected grad_output of ", gi.dim(),
              " dimensions, got ", go.dim());
  const auto in = sizes5(gi, spatial), outs = sizes5(go, spatial);
  TORCH_CHECK(in[0] == outs[0] && in[1] == outs[1], name,
              ": grad_output's batch and channel sizes ", go.sizes(), " do not match the input's ",
              gi.sizes());
  std::array<int64_t, 3> a{0, 0, 0};
  for (int64_t i = 0; i < spatial; ++i) a[2 - i] = padding[2 * i];
  c10::DeviceGuard guard(gi.device());
  const int device = gi.device().index();
  KernelLaunch l(get_kernel(device, "pad.cl", "pad_backward",
                            backward_options(gi.scalar_type(), device, mode_of(op))));
  l.arg(static_cast<cl_ulong>(gi.numel()));
  for (int i = 1; i < 5; ++i) l.arg(static_cast<cl_long>(in[i]));
  for (int i = 2; i < 5; ++i) l.arg(static_cast<cl_long>(outs[i]));
  for (int64_t v : a) l.arg(static_cast<cl_long>(v));
  for (const at::Tensor* t : {&go, &gi}) {
    l.buffer(buffer_of(*t), t->itemsize());
    for (int64_t s : strides5(*t, spatial)) l.arg(static_cast<cl_long>(s));
  }
  l.enqueue1d(device, static_cast<size_t>(gi.numel()), kLws);
}

template <Op kOp>
void pad_backward_kernel(const Outputs<1>& gi, const at::Tensor& go, const at::Tensor& self,
                         at::IntArrayRef padding) {
  pad_backward(gi[0], go, padding, kOp);
}

using ReflectionPad1dBackward =
    Structured<at::meta::structured_reflection_pad1d_backward, pad_backward_kernel<Op::kReflect1d>>;
using ReflectionPad3dBackward =
    Structured<at::meta::structured_reflection_pad3d_backward, pad_backward_kernel<Op::kReflect3d>>;
using ReplicationPad1dBackward = Structured<at::meta::structured_replication_pad1d_backward,
                                            pad_backward_kernel<Op::kReplicate1d>>;

// The unstructured backwards: the CPU's checks (its *_backward_out_template functions; from torch
// 2.15 ATen's shared pad_backward_shape_check).
template <Op kOp>
void check_backward(const at::Tensor& go, const at::Tensor& input, at::IntArrayRef padding) {
  constexpr int64_t spatial = kOp == Op::kReplicate3d ? 3 : 2;
  if constexpr (kOp != Op::kReflect2d) {
    TORCH_CHECK(static_cast<int64_t>(padding.size()) == 2 * spatial,
                "padding size is expected to be ", 2 * spatial);
  } else {
    TORCH_CHECK(padding.size() == 4, "padding size is expected to be 4, but got: ", padding.size());
  }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 15)
  at::native::padding::pad_backward_shape_check(go, input, padding, spatial);
#else
  const int64_t dim_w = input.dim() == spatial + 2 ? spatial + 1 : spatial;
  const int64_t dim_h = dim_w - 1, dim_d = dim_w - 2;
  const int64_t ow = input.size(dim_w) + padding[0] + padding[1];
  const int64_t oh = input.size(dim_h) + padding[2] + padding[3];
  TORCH_CHECK(ow == go.size(dim_w), "gradOutput width unexpected. Expected: ", ow,
              ", Got: ", go.size(dim_w));
  TORCH_CHECK(oh == go.size(dim_h), "gradOutput height unexpected. Expected: ", oh,
              ", Got: ", go.size(dim_h));
  if constexpr (spatial == 3) {
    const int64_t od = input.size(dim_d) + padding[4] + padding[5];
    TORCH_CHECK(od == go.size(dim_d), "gradOutput depth unexpected. Expected: ", od,
                ", Got: ", go.size(dim_d));
  }
#endif
}

template <Op kOp>
at::Tensor& pad_backward_out(const at::Tensor& go, const at::Tensor& self, at::IntArrayRef padding,
                             at::Tensor& gi) {
  check_backward<kOp>(go, self, padding);
  TORCH_CHECK(gi.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", gi.scalar_type(), " instead");
  gi.resize_(self.sizes(), self.suggest_memory_format());
  const at::Tensor work = working_output(gi, {&go, &self});
  pad_backward(work, go, padding, kOp);
  finish_out(gi, work);
  return gi;
}

template <Op kOp>
at::Tensor pad_backward_functional(const at::Tensor& go, const at::Tensor& self,
                                   at::IntArrayRef padding) {
  check_backward<kOp>(go, self, padding);
  at::Tensor gi =
      at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  pad_backward(gi, go, padding, kOp);  // a new tensor in the CPU's layout, written directly
  return gi;
}

// ---------------------------------------------------------------------------------------------
// constant_pad_nd: ATen's composite run on meta tensors gives the CPU's checks and the result's
// layout; one remap launch then writes the whole result (the composite fills, then copies).

at::Tensor constant_pad_nd(const at::Tensor& self, at::IntArrayRef pad, const at::Scalar& value) {
  const at::Tensor meta = at::constant_pad_nd(meta_like(self), pad, value);
  bool grows = false;
  std::vector<RemapDim> map(static_cast<size_t>(self.dim()));
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    map[self.dim() - 1 - i].offset = pad[2 * i];
    grows = grows || pad[2 * i] > 0 || pad[2 * i + 1] > 0;
  }
  // The fill value converts like the CPU's fill_ (which it calls only when something grows).
  // (16-byte elements, complex128: zero padding only - launch_remap fills their halves with zero)
  const bool wide = self.itemsize() > 8;
  TORCH_CHECK_NOT_IMPLEMENTED(!wide || !grows || value.toComplexDouble() == 0.0,
                              "torch-ocl: padding ", self.scalar_type(),
                              " with a non-zero value is not supported on the ocl device yet");
  const FillBits fill = grows && !wide ? fill_bits(value, self.scalar_type()) : FillBits{};
  at::Tensor out = at::empty_strided(meta.sizes(), meta.strides(), self.options());
  launch_remap(out, self, map, wide ? nullptr : fill.bytes);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("constant_pad_nd", constant_pad_nd);
  m.impl("reflection_pad1d", ReflectionPad1d::functional);
  m.impl("reflection_pad1d.out", ReflectionPad1d::out);
  m.impl("reflection_pad2d", reflection_pad2d);
  m.impl("reflection_pad2d.out", reflection_pad2d_out);
  m.impl("reflection_pad3d", ReflectionPad3d::functional);
  m.impl("reflection_pad3d.out", ReflectionPad3d::out);
  m.impl("replication_pad1d", ReplicationPad1d::functional);
  m.impl("replication_pad1d.out", ReplicationPad1d::out);
  m.impl("replication_pad2d", ReplicationPad2d::functional);
  m.impl("replication_pad2d.out", ReplicationPad2d::out);
  m.impl("replication_pad3d", ReplicationPad3d::functional);
  m.impl("replication_pad3d.out", ReplicationPad3d::out);
  m.impl("reflection_pad1d_backward", ReflectionPad1dBackward::functional);
  m.impl("reflection_pad1d_backward.grad_input", ReflectionPad1dBackward::out);
  m.impl("reflection_pad2d_backward", pad_backward_functional<Op::kReflect2d>);
  m.impl("reflection_pad2d_backward.grad_input", pad_backward_out<Op::kReflect2d>);
  m.impl("reflection_pad3d_backward", ReflectionPad3dBackward::functional);
  m.impl("reflection_pad3d_backward.grad_input", ReflectionPad3dBackward::out);
  m.impl("replication_pad1d_backward", ReplicationPad1dBackward::functional);
  m.impl("replication_pad1d_backward.grad_input", ReplicationPad1dBackward::out);
  m.impl("replication_pad2d_backward", pad_backward_functional<Op::kReplicate2d>);
  m.impl("replication_pad2d_backward.grad_input", pad_backward_out<Op::kReplicate2d>);
  m.impl("replication_pad3d_backward", pad_backward_functional<Op::kReplicate3d>);
  m.impl("replication_pad3d_backward.grad_input", pad_backward_out<Op::kReplicate3d>);
}

}  // namespace torch_ocl
