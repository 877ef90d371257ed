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
//  - AtenStructured<Impl>: an op whose whole implementation is ATen's own structured class
//    (at::native::structured_<op>_out in ATen/ops/<op>_native.h: its meta builds a
//    TensorIterator or declares the outputs (cumsum, sort), its impl calls a DispatchStub for
//    which we register our kernel). This file only supplies the outputs, as the wrappers PyTorch
//    generates for its CPU kernels do:
//        m.impl("exp", AtenStructured<at::native::structured_exp_out>::functional);
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
#include <torch/headeronly/version.h>

#include <array>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace at {
struct TensorIteratorBase;  // std::is_base_of needs only the derived class complete
}

// torch before 2.13 passes the outputs' dimension names to the meta classes' set_output_*
// callbacks. torch-ocl supports 2.13 on; these two macros only let it build against the older
// torch of a GPU machine that has no other (ci/nvidia-device-check.sh).
#if TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 13
#define TORCH_OCL_OUTPUT_NAMES_PARAM , at::DimnameList names = {}
#define TORCH_OCL_OUTPUT_NAMES_ARG , names
#else
#define TORCH_OCL_OUTPUT_NAMES_PARAM
#define TORCH_OCL_OUTPUT_NAMES_ARG
#endif

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

// The argument type of the registered op (its schema's C++ type) for a meta/impl argument type.
template <class T>
struct SchemaArg {
  using type = T;
};
template <>
struct SchemaArg<at::OptionalTensorRef> {
  using type = const std::optional<at::Tensor>&;
};
template <>
struct SchemaArg<at::OptionalScalarRef> {
  using type = const std::optional<at::Scalar>&;
};

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

// The inputs' devices, as ATen's generated CUDA wrappers check them: every input tensor but a
// 0-dim CPU one (a scalar, which TensorIterator accepts) on one device. (out= tensors have their
// own check, with ATen's out= message.)
void check_input_devices(const std::vector<const at::Tensor*>& inputs);

// A functional variant's new output.
at::Tensor allocate_output(at::IntArrayRef sizes, at::IntArrayRef strides,
                           const at::TensorOptions& options);

// The meta class with its set_output_* callbacks for one call.
template <class Meta, size_t N>
class Call final : public Meta {
 public:
  Call(Mode mode, const Outputs<N>& given) : mode_(mode), outputs_(given) {}

  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options TORCH_OCL_OUTPUT_NAMES_PARAM) override {
    set(i, sizes, strides, options);
  }
  // The kernels get contiguous working outputs anyway (see working_output), so a requested
  // layout is only what a functional output is allocated with.
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options TORCH_OCL_OUTPUT_NAMES_PARAM) override {
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
  std::vector<const at::Tensor*> inputs;
  (collect(inputs, args), ...);
  check_input_devices(inputs);
  Call<Meta, N> call(mode, given);
  call.meta(meta_arg(args)...);
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

// ---- structured ops implemented by ATen (the kernel is behind a DispatchStub) ----

namespace structured_detail {

// The outputs of one call of Impl, allocated (functional), checked and resized (out=) or checked
// (in place) as the meta function declares them; for a TensorIterator-based Impl its own
// set_output_raw_strided runs afterwards, as in PyTorch's generated wrappers. (Other impls, such
// as cumsum's or sort's, get the caller's tensors and let their stubs handle any layout.)
template <class Impl, size_t N>
class AtenCall final : public Impl {
  // Impl's own outputs are a TensorIterator's (most ops) or only the ones set here (ops whose
  // meta function declares the output directly, such as pow(Scalar, Tensor)).
  static constexpr bool kIterator = std::is_base_of_v<at::TensorIteratorBase, Impl>;

 public:
  AtenCall(Mode mode, const Outputs<N>& given) : mode_(mode), outs_(given) {}

  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options TORCH_OCL_OUTPUT_NAMES_PARAM) override {
    set(i, sizes, strides, options);
    if constexpr (kIterator)
      Impl::set_output_raw_strided(i, sizes, strides, options TORCH_OCL_OUTPUT_NAMES_ARG);
  }
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options TORCH_OCL_OUTPUT_NAMES_PARAM) override {
    set(i, sizes, strides, options);
    if constexpr (kIterator)
      Impl::set_output_raw_strided(i, sizes, strides, options TORCH_OCL_OUTPUT_NAMES_ARG);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return outs_[i]; }
  const Outputs<N>& outs() const { return outs_; }

 private:
  void set(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
           const at::TensorOptions& options) {
    TORCH_INTERNAL_ASSERT(i >= 0 && static_cast<size_t>(i) < N);
    switch (mode_) {
      case Mode::kFunctional:
        outs_[i] = allocate_output(sizes, strides, options);
        break;
      case Mode::kOut:
        resize_out(outs_[i], sizes, strides, options);
        break;
      case Mode::kInplace:
        check_inplace(outs_[i], sizes, options);
        break;
    }
  }
  Mode mode_;
  Outputs<N> outs_;
};

template <class Impl, size_t N, class... Args>
Outputs<N> run_aten(Mode mode, const Outputs<N>& given, const Args&... args) {
  AtenCall<Impl, N> call(mode, given);
  call.meta(meta_arg(args)...);
  const Outputs<N>& o = call.outs();
  [&]<size_t... I>(std::index_sequence<I...>) { call.impl(meta_arg(args)..., o[I]...); }
  (std::make_index_sequence<N>{});
  return o;
}

template <size_t, class T>
using Always = T;
template <class T, size_t... I>
std::tuple<Always<I, T>...> repeat_tuple(std::index_sequence<I...>);
// A tuple of N tensors (the functional result of an op with N > 1 outputs).
template <size_t N>
using TensorTuple = decltype(repeat_tuple<at::Tensor>(std::make_index_sequence<N>{}));

// The variants of an op with N outputs whose functional arguments are First, Rest...
template <class Impl, size_t N, class First, class... Rest>
struct AtenStructuredOps {
  using Result = std::conditional_t<N == 1, at::Tensor, TensorTuple<N>>;
  static Result functional(First a0, Rest... rest) {
    Outputs<N> o = run_aten<Impl, N>(Mode::kFunctional, Outputs<N>{}, a0, rest...);
    if constexpr (N == 1)
      return o[0];
    else
      return std::apply([](auto&... t) { return Result{t...}; }, o);
  }
  static at::Tensor& out(First a0, Rest... rest, at::Tensor& out) requires(N == 1) {
    run_aten<Impl, N>(Mode::kOut, Outputs<N>{out}, a0, rest...);
    return out;
  }
  static std::tuple<at::Tensor&, at::Tensor&> out2(First a0, Rest... rest, at::Tensor& out0,
                                                   at::Tensor& out1) requires(N == 2) {
    run_aten<Impl, N>(Mode::kOut, Outputs<N>{out0, out1}, a0, rest...);
    return {out0, out1};
  }
  static std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> out3(First a0, Rest... rest,
                                                                at::Tensor& out0, at::Tensor& out1,
                                                                at::Tensor& out2) requires(N == 3) {
    run_aten<Impl, N>(Mode::kOut, Outputs<N>{out0, out1, out2}, a0, rest...);
    return {out0, out1, out2};
  }
  static std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> out4(
      First a0, Rest... rest, at::Tensor& out0, at::Tensor& out1, at::Tensor& out2,
      at::Tensor& out3) requires(N == 4) {
    run_aten<Impl, N>(Mode::kOut, Outputs<N>{out0, out1, out2, out3}, a0, rest...);
    return {out0, out1, out2, out3};
  }
  static at::Tensor& inplace(at::Tensor& self, Rest... rest) requires(N == 1) {
    run_aten<Impl, N>(Mode::kInplace, Outputs<N>{self}, self, rest...);
    return self;
  }
};

// Impl::impl takes the op's arguments followed by its outputs: as many arguments as Impl::meta
// takes, the rest are the outputs.
template <class Impl, size_t N, class Tuple, class Seq>
struct AtenOpsOf;
template <class Impl, size_t N, class Tuple, size_t... I>
struct AtenOpsOf<Impl, N, Tuple, std::index_sequence<I...>> {
  using type =
      AtenStructuredOps<Impl, N, typename SchemaArg<std::tuple_element_t<I, Tuple>>::type...>;
};
template <class Sig>
struct MetaArity;
template <class M, class... A>
struct MetaArity<void (M::*)(A...)> {
  static constexpr size_t value = sizeof...(A);
};
template <class Impl, class Sig>
struct AtenImplArgs;
template <class Impl, class... A>
struct AtenImplArgs<Impl, void (Impl::*)(A...)> {
  static constexpr size_t kArgs = MetaArity<decltype(&Impl::meta)>::value;
  static_assert(sizeof...(A) >= kArgs + 1 && sizeof...(A) <= kArgs + 4,
                "AtenStructured: an impl with one to four outputs");
  using type = typename AtenOpsOf<Impl, sizeof...(A) - kArgs, std::tuple<A...>,
                                  std::make_index_sequence<kArgs>>::type;
};

}  // namespace structured_detail

// AtenStructured<Impl>::functional / ::out (::out2 .. ::out4 for two to four outputs, the
// linalg factorizations) / ::inplace for an ATen
// structured implementation class (see the top of this file).
template <class Impl>
using AtenStructured = typename structured_detail::AtenImplArgs<Impl, decltype(&Impl::impl)>::type;

}  // namespace torch_ocl
