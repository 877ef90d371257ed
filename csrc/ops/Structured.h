// The one out= path of the ops: dtype and device checks, resizing, and outputs that overlap an
// input. Two entry points share it:
//
//  - Structured<Meta, kernel>: an op that ATen declares structured (a meta class in
//    ATen/ops/<op>_meta.h) is registered from that class and one kernel function. The meta
//    function does every shape and dtype check of the CPU op and declares the outputs; this
//    file supplies its set_output_* callbacks, so the functional variant allocates them, the
//    out= variant checks the caller's tensors (same errors as the CPU's out= wrappers) and resizes
//    them like at::native::resize_output, and the in-place variant checks self.
//        void my_kernel(const Outputs<1>& out, const at::Tensor& self, int64_t dim);
//        using MyOp = Structured<at::meta::structured_my_op, my_kernel>;
//        m.impl("my_op", MyOp::functional);
//        m.impl("my_op.out", MyOp::out);
//
//  - prepare_out / finish_out: the same checks for an op that has no meta function (the op gives
//    its expected dtype and, where the CPU words it differently, its own message).
//
// Either way the kernel gets outputs it may write directly: contiguous, of the declared shape, and
// sharing no memory with any input. When a caller's tensor is not like that (strided, or
// overlapping an input: out= an input, x.addmm_(x, w)), the kernel writes a temporary that is
// copied into the caller's tensor afterwards.
#pragma once

#include <ATen/TensorMeta.h>
#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>

#include <array>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

namespace torch_ocl {

// ---- the shared pieces (Structured.cpp) ----

// out= must have the dtype and device the op computes (the error text of ATen's out= wrappers,
// or `dtype_message` instead for the dtype where an op words it differently on the CPU).
void check_out_dtype_device(const at::Tensor& out, const at::TensorOptions& options,
                            const char* dtype_message = nullptr);
// at::native::resize_output semantics (a warning when a non-empty tensor of another shape is
// resized); a resized tensor takes `strides` (if given) or the options' memory format. Rejects
// an out whose elements overlap each other (an expanded tensor), as the CPU's copy would.
void resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::IntArrayRef strides,
                const at::TensorOptions& options);
// In-place variants: self must already have the dtype, device and shape of the result.
void check_inplace(const at::Tensor& self, at::IntArrayRef sizes, const at::TensorOptions& options);
// Whether two tensors share any memory (true when it is too hard to tell).
bool shares_memory(const at::Tensor& a, const at::Tensor& b);

// What to do when out shares memory with an input: compute into a temporary (the structured ops,
// where the CPU computes the right result) or raise the CPU's error (ops that raise there).
enum class OnOverlap { kTemporary, kRaise };

// The tensor a kernel writes for `out`: out itself when it is contiguous and shares no memory
// with `inputs` (`same_position`, if given, is an input the kernel reads only at the element it
// then writes, so it may be out itself), otherwise a new contiguous tensor.
at::Tensor working_output(const at::Tensor& out, const std::vector<const at::Tensor*>& inputs,
                          const at::Tensor* same_position = nullptr,
                          OnOverlap on_overlap = OnOverlap::kTemporary);
// Copies a temporary from working_output back into out (nothing when it was out itself).
void finish_out(const at::Tensor& out, const at::Tensor& work);

// For ops without a meta function: checks out against the expected `options` (dtype, device),
// resizes it to `sizes` and checks its overlap with `inputs` (check_out), and returns the tensor
// to compute into (prepare_out; finish_out afterwards). An op whose result's size depends on the
// data computes first, then calls check_out and copies its result into out.
void check_out(const at::Tensor& out, at::IntArrayRef sizes, const at::TensorOptions& options,
               std::initializer_list<const at::Tensor*> inputs,
               OnOverlap on_overlap = OnOverlap::kTemporary, const char* dtype_message = nullptr);
at::Tensor prepare_out(const at::Tensor& out, at::IntArrayRef sizes,
                       const at::TensorOptions& options,
                       std::initializer_list<const at::Tensor*> inputs,
                       OnOverlap on_overlap = OnOverlap::kTemporary,
                       const char* dtype_message = nullptr);

// A meta tensor with t's sizes, strides and dtype: run ATen's meta functions on it (an op that
// reaches its checks and result layout through at::<op>(meta_like(x), ...)).
at::Tensor meta_like(const at::Tensor& t);

// ---- structured ops ----

template <size_t N>
using Outputs = std::array<at::Tensor, N>;

// An optional Scalar argument as meta functions and structured impls take it.
inline at::OptionalScalarRef scalar_ref(const std::optional<at::Scalar>& s) {
  return s ? at::OptionalScalarRef(&*s) : at::OptionalScalarRef();
}

namespace structured_detail {

enum class Mode { kFunctional, kOut, kInplace };

// Arguments as the meta functions take them (an optional tensor as an OptionalTensorRef).
template <class T>
const T& meta_arg(const T& v) {
  return v;
}
inline at::OptionalTensorRef meta_arg(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? at::OptionalTensorRef(*t) : at::OptionalTensorRef();
}
inline at::OptionalScalarRef meta_arg(const std::optional<at::Scalar>& s) { return scalar_ref(s); }

// The tensors among the arguments, for the overlap checks.
template <class T>
void collect(std::vector<const at::Tensor*>&, const T&) {}
inline void collect(std::vector<const at::Tensor*>& v, const at::Tensor& t) {
  if (t.defined()) v.push_back(&t);
}
inline void collect(std::vector<const at::Tensor*>& v, const std::optional<at::Tensor>& t) {
  if (t && t->defined()) v.push_back(&*t);
}

template <size_t I, class... Args>
const at::Tensor* tensor_arg(const Args&... args) {
  if constexpr (I < sizeof...(Args)) {
    using T = std::decay_t<std::tuple_element_t<I, std::tuple<Args...>>>;
    if constexpr (std::is_same_v<T, at::Tensor>)
      return &std::get<I>(std::forward_as_tuple(args...));
  }
  return nullptr;
}

// A functional variant's new output.
at::Tensor allocate_output(at::IntArrayRef sizes, at::IntArrayRef strides,
                           const at::TensorOptions& options);

// The meta class with its set_output_* callbacks for one call.
template <class Meta, size_t N>
class Call final : public Meta {
 public:
  Call(Mode mode, const Outputs<N>& given) : mode_(mode), outputs_(given) {}

  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    set(i, sizes, strides, options);
  }
  // The kernels get contiguous working outputs anyway (see working_output), so a requested
  // layout is only what a functional output is allocated with.
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) override {
    set(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return outputs_[i]; }

  const Outputs<N>& outputs() const { return outputs_; }

 private:
  void set(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
           const at::TensorOptions& options) {
    TORCH_INTERNAL_ASSERT(i >= 0 && static_cast<size_t>(i) < N);
    switch (mode_) {
      case Mode::kFunctional:
        outputs_[i] = allocate_output(sizes, strides, options);
        break;
      case Mode::kOut:
        resize_out(outputs_[i], sizes, strides, options);
        break;
      case Mode::kInplace:
        check_inplace(outputs_[i], sizes, options);
        break;
    }
  }
  Mode mode_;
  Outputs<N> outputs_;
};

// Runs meta, then the kernel on working outputs, then copies temporaries back.
template <class Meta, size_t N, int kSamePosition, class Kernel, class... Args>
Outputs<N> run(Mode mode, const Outputs<N>& given, Kernel kernel, const Args&... args) {
  Call<Meta, N> call(mode, given);
  call.meta(meta_arg(args)...);
  std::vector<const at::Tensor*> inputs;
  (collect(inputs, args), ...);
  const at::Tensor* same_position = nullptr;
  if constexpr (kSamePosition >= 0) same_position = tensor_arg<kSamePosition>(args...);
  const Outputs<N>& outs = call.outputs();
  Outputs<N> work;
  for (size_t i = 0; i < N; ++i) work[i] = working_output(outs[i], inputs, same_position);
  kernel(work, args...);
  for (size_t i = 0; i < N; ++i) finish_out(outs[i], work[i]);
  return outs;
}

}  // namespace structured_detail

// Structured<Meta, kernel[, kSamePosition]>: kernel is `void (const Outputs<N>&, Args...)` with
// Args the op's arguments as in its functional C++ signature. kSamePosition is the index of an
// argument the kernel reads only where it writes (addmm's bias), which may then be the output.
// Members: functional, out (N == 1: `Args..., Tensor& out`), out2 (N == 2: `Args..., Tensor&
// out0, Tensor& out1`), inplace (N == 1: `Tensor& self, rest of Args...`).
template <class Meta, auto kKernel, int kSamePosition = -1>
struct Structured;

template <class Meta, size_t N, class A0, class... Rest,
          void (*kKernel)(const Outputs<N>&, A0, Rest...), int kSamePosition>
struct Structured<Meta, kKernel, kSamePosition> {
  using Result = std::conditional_t<N == 1, at::Tensor, std::tuple<at::Tensor, at::Tensor>>;

  static Result functional(A0 a0, Rest... rest) {
    Outputs<N> outs = structured_detail::run<Meta, N, kSamePosition>(
        structured_detail::Mode::kFunctional, Outputs<N>{}, kKernel, a0, rest...);
    if constexpr (N == 1)
      return outs[0];
    else
      return {outs[0], outs[1]};
  }

  static at::Tensor& out(A0 a0, Rest... rest, at::Tensor& out) requires(N == 1) {
    structured_detail::run<Meta, N, kSamePosition>(structured_detail::Mode::kOut, Outputs<N>{out},
                                                   kKernel, a0, rest...);
    return out;
  }

  static std::tuple<at::Tensor&, at::Tensor&> out2(A0 a0, Rest... rest, at::Tensor& out0,
                                                   at::Tensor& out1) requires(N == 2) {
    structured_detail::run<Meta, N, kSamePosition>(structured_detail::Mode::kOut,
                                                   Outputs<N>{out0, out1}, kKernel, a0, rest...);
    return {out0, out1};
  }

  static at::Tensor& inplace(at::Tensor& self,
                             Rest... rest) requires(N == 1 &&
                                                    std::is_same_v<A0, const at::Tensor&>) {
    structured_detail::run<Meta, N, kSamePosition>(structured_detail::Mode::kInplace,
                                                   Outputs<N>{self}, kKernel, self, rest...);
    return self;
  }
};

}  // namespace torch_ocl
