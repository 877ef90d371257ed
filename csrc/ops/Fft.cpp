// Fast Fourier transforms: ATen's _fft_c2c, _fft_r2c and _fft_c2r (and their out= forms), which
// every torch.fft function, stft/istft and the FFT gradients (written in terms of the same three
// ops) reach.
//
// Own kernels (kernels/fft.cl), not a library: VkFFT's OpenCL backend generates and compiles
// kernels through its own host code (and pyvkfft wraps it for Python, which the native library
// may not use); clFFT is unmaintained; our kernels build on every OpenCL 1.2 device the rest of
// the backend runs on, through the same program cache, with launch shapes from the device
// profile.
//
// A 1-d transform of n points runs Stockham passes of radix 16, 8, 4, 2, 3, 5, 7, 11 and 13 over
// a [rows, n, cols] view (fft_pass, one launch per pass, ping-ponging between the output and one
// scratch tensor; the first pass reads the input in place with its strides). A transform along
// the innermost dimension (cols = 1) runs along rows; one along another dimension runs on whole
// columns side by side (work-items of neighbouring columns read neighbouring values: vector
// loads on CPU devices, coalesced ones on GPUs), with no transposition, and writes its result in
// the input's own dimension order. A length with a prime factor above 13 goes through Bluestein's
// algorithm: a chirp product and a circular convolution of power-of-two length >= 2n - 1, itself
// two transforms. n-d transforms apply the 1-d transform along each dimension. Real transforms of
// even length n run an n/2-point complex transform over the real input read as complex pairs,
// with a pre- or post-processing kernel.
//
// Twiddle tables (computed in double on the host) and Bluestein's chirps are cached per device,
// length and dtype, uploaded without a host wait.
#include <ATen/native/Resize.h>
#include <ATen/native/SpectralOpsUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/WrapDimMinimal.h>
#include <c10/util/complex.h>
#include <torch/library.h>

#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ops/KernelTypes.h"
#include "runtime/Allocator.h"
#include "runtime/DeviceProfile.h"
#include "runtime/Launch.h"
#include "runtime/Program.h"

namespace torch_ocl {
namespace {

constexpr int kRadices[] = {16, 8, 4, 2, 3, 5, 7, 11, 13};

// The passes of an n-point transform (radices in order), or empty if n has a prime factor above
// 13 (Bluestein) or n is 1.
std::vector<int> factorise(int64_t n) {
  std::vector<int> radices;
  for (int r : kRadices) {
    while (n % r == 0) {
      radices.push_back(r);
      n /= r;
    }
  }
  if (n != 1) radices.clear();
  return radices;
}

const char* cplx_tag(at::ScalarType t, int device) {
  return type_tag(t, device);  // "cfloat" or "cdouble" (raises for complex128 without fp64)
}

// Tensors cached per device, dtype and length, never freed (they live as long as the process, as
// the compiled kernels do).
struct CacheKey {
  int device;
  at::ScalarType dtype;
  int64_t n;
  int kind;
  bool operator<(const CacheKey& o) const {
    return std::tie(device, dtype, n, kind) < std::tie(o.device, o.dtype, o.n, o.kind);
  }
};
std::mutex g_cache_mutex;
std::map<CacheKey, at::Tensor>& cache() {
  static auto* m = new std::map<CacheKey, at::Tensor>();
  return *m;
}

// A host table of complex values (double precision) as a device tensor of `dtype`.
at::Tensor upload(const std::vector<c10::complex<double>>& values, at::ScalarType dtype,
                  const at::Device& device) {
  at::Tensor host = at::empty({static_cast<int64_t>(values.size())},
                              at::TensorOptions().dtype(at::kComplexDouble));
  std::copy(values.begin(), values.end(), host.data_ptr<c10::complex<double>>());
  return host.to(dtype).to(device);  // an asynchronous write (staged)
}

// w_n^t = exp(-2 pi i t / n), t < n; the angle reduced exactly (t / n in [0, 1)).
at::Tensor twiddles(int64_t n, at::ScalarType dtype, const at::Device& device) {
  const CacheKey key{device.index(), dtype, n, 0};
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  auto it = cache().find(key);
  if (it != cache().end()) return it->second;
  std::vector<c10::complex<double>> w(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    const double a = -2.0 * M_PI * static_cast<double>(t) / static_cast<double>(n);
    w[static_cast<size_t>(t)] = {std::cos(a), std::sin(a)};
  }
  at::Tensor table = upload(w, dtype, device);
  cache().emplace(key, table);
  return table;
}

// The passes' twiddles of an n-point transform with these radices (kernels/fft.cl): w_{pR}^{rk} at
// [r p + k] for the pass with radix R after radices whose product is p (r = 1..R-1, k < p; entry
// 0 unused), then the R-th roots of unity w_R^m (m < R) of each radix without constants of its
// own (3, 5, 7, 11, 13), at the offsets returned in `root_off` (indexed by radix).
struct PassTable {
  at::Tensor table;
  int root_off[14] = {};
};
PassTable pass_twiddles(int64_t n, const std::vector<int>& radices, at::ScalarType dtype,
                        const at::Device& device) {
  PassTable t;
  int64_t size = n;
  for (int R : radices) {
    if (R == 2 || R == 4 || R == 8 || R == 16 || t.root_off[R] != 0) continue;
    t.root_off[R] = static_cast<int>(size);
    size += R;
  }
  const CacheKey key{device.index(), dtype, n, 5};
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  auto it = cache().find(key);
  if (it != cache().end()) {
    t.table = it->second;
    return t;
  }
  std::vector<c10::complex<double>> w(static_cast<size_t>(size), {1.0, 0.0});
  auto root = [](int64_t num, int64_t den) {  // exp(-2 pi i num / den), num reduced mod den
    const double a = -2.0 * M_PI * static_cast<double>(num % den) / static_cast<double>(den);
    return c10::complex<double>(std::cos(a), std::sin(a));
  };
  int64_t p = 1;
  for (int R : radices) {
    for (int r = 1; r < R; ++r)
      for (int64_t k = 0; k < p; ++k) w[static_cast<size_t>(r * p + k)] = root(r * k, p * R);
    p *= R;
  }
  for (int R = 3; R < 14; ++R)
    for (int m = 0; t.root_off[R] != 0 && m < R; ++m)
      w[static_cast<size_t>(t.root_off[R] + m)] = root(m, R);
  t.table = upload(w, dtype, device);
  cache().emplace(key, t.table);
  return t;
}

std::string pass_options(at::ScalarType dtype, int device, bool inverse) {
  std::string opts = std::string("-DCPLX_T=") + cplx_tag(dtype, device);
  if (inverse) opts += " -DFFT_INVERSE";
  return opts;
}

// Grid of `items` work-items per row by `rows` rows (the kernels' last argument, `rows`, is
// appended here): work-groups of fft_lws work-items, several short rows to a group (a row of 4
// butterfly items no longer leaves 60 of 64 work-items idle).
void enqueue_rows(KernelLaunch& launch, int device, int64_t items, int64_t rows) {
  launch.arg(static_cast<cl_long>(rows));
  launch.enqueue_grid(device, static_cast<size_t>(items), static_cast<size_t>(rows), 1,
                      static_cast<size_t>(device_profile(device).fft_lws));
}

void bluestein_rows(const at::Tensor& x, const at::Tensor& out, bool inverse, double scale);

// A transform's input: [b1, b2, n, cols] with any strides (rows b = b1 * B2 + b2).
struct Lines {
  at::Tensor base;  // the tensor whose storage is read
  int64_t B1, B2, n, C;
  int64_t sb1, sb2, sn, sc;
};

// Passes whose p is at least this run along rows with neighbouring k on neighbouring work-items
// (layout 1: eight complex64 values are a 64-byte cache line); the first ones (p small) with
// neighbouring q (layout 2).
constexpr int64_t kLayoutKMin = 8;

// out: contiguous [B1 * B2, n, C] (complex) = the n-point transforms along n of `in` (complex, no
// conjugate or negative bit), scaled by `scale`. n has radices (factorise(n) not empty).
void fft_lines(const Lines& in, const at::Tensor& out, bool inverse, double scale) {
  const int64_t n = in.n, C = in.C, B = in.B1 * in.B2;
  const std::vector<int> radices = factorise(n);
  TORCH_INTERNAL_ASSERT(!radices.empty());
  TORCH_CHECK(n <= INT32_MAX / 16 && C <= INT32_MAX / 2, "torch-ocl: FFT length ", n,
              " or batch of columns ", C, " is too large (at most 2^27 and 2^30)");
  const int device = out.device().index();
  const at::ScalarType dtype = out.scalar_type();
  const PassTable tw = pass_twiddles(n, radices, dtype, out.device());
  const int m = static_cast<int>(radices.size());
  at::Tensor scratch = m > 1 ? at::empty({B, n, C}, out.options()) : at::Tensor();
  const DeviceProfile& prof = device_profile(device);
  const int per = prof.fft_per_item;
  const std::string base =
      pass_options(dtype, device, inverse) + " -DPER_ITEM=" + std::to_string(per);
  const size_t real_size = out.itemsize() / 2;  // the kernel addresses real parts
  const size_t lws = static_cast<size_t>(prof.fft_lws);
  int64_t p = 1;
  for (int s = 0; s < m; ++s) {
    const int R = radices[static_cast<size_t>(s)];
    // The last pass writes `out`; before it the targets alternate scratch / out.
    const at::Tensor& dst = ((m - 1 - s) % 2 == 0) ? out : scratch;
    const bool first = s == 0;
    const at::Tensor& src = first ? in.base : (((m - s) % 2 == 0) ? out : scratch);
    const int64_t sb1 = first ? in.sb1 : n * C, sb2 = first ? in.sb2 : 0;
    const int64_t sn = first ? in.sn : C, sc = first ? in.sc : 1;
    const int64_t rows2 = first ? in.B2 : 1;
    const int64_t count = n / R;
    const int layout = C > 1 ? 0 : (p >= kLayoutKMin ? 1 : 2);
    // Launch dimension 0 (neighbouring work-items) and the positions along dimension 1 per row.
    const int64_t n0 = layout == 0 ? C : (layout == 1 ? p : count / p);
    const int64_t size1 = layout == 0 ? count : (layout == 1 ? count / p : p);
    const bool unit = (layout == 0 ? sc : sn) == 1;
    const bool scaled = s == m - 1 && scale != 1.0;
    std::string opts =
        base + " -DRADIX=" + std::to_string(R) + " -DFFT_LAYOUT=" + std::to_string(layout);
    if (unit) opts += " -DFFT_UNIT_LANE";
    if (scaled) opts += " -DFFT_SCALE";
    cl_kernel k = get_kernel(device, "fft.cl", "fft_pass", opts);
    // An exact grid (kernels/fft.cl): dimension 0 in work-groups of l0, the largest power of two
    // within fft_lws and n0; when l0 does not divide n0, a second launch runs the last l0 lanes
    // (lanes n0 - l0 .. n0 - 1, some of them done by the first launch: they write the same values
    // again, after it, on the same in-order queue). Dimension 1 in work-groups of the largest
    // power of two that divides it within fft_lws / l0.
    size_t l0 = 1;
    while (l0 * 2 <= lws && static_cast<int64_t>(l0 * 2) <= n0) l0 *= 2;
    const int64_t n1 = (size1 * B + per - 1) / per;
    auto l1_for = [&](size_t cap) {
      size_t l1 = 1;
      while (l1 * 2 <= cap && n1 % static_cast<int64_t>(l1 * 2) == 0) l1 *= 2;
      return l1;
    };
    const int64_t main0 = n0 - n0 % static_cast<int64_t>(l0);
    for (int part = 0; part < 2; ++part) {
      const int64_t lane0 = part == 0 ? 0 : n0 - static_cast<int64_t>(l0);
      const int64_t extent = part == 0 ? main0 : (main0 == n0 ? 0 : static_cast<int64_t>(l0));
      if (extent == 0) continue;
      const size_t local[3] = {l0, l1_for(lws / l0), 1};
      const size_t global[3] = {static_cast<size_t>(extent), static_cast<size_t>(n1), 1};
      KernelLaunch launch(k);
      launch.buffer(buffer_of(src), real_size);
      launch.arg(static_cast<cl_long>(sn)).arg(static_cast<cl_long>(sc));
      launch.arg(static_cast<cl_long>(sb1)).arg(static_cast<cl_long>(sb2));
      launch.arg(static_cast<cl_int>(rows2));
      launch.buffer(buffer_of(dst), real_size);
      launch.buffer(buffer_of(tw.table), real_size);
      launch.arg(static_cast<cl_int>(R < 14 ? tw.root_off[R] : 0));
      launch.arg(static_cast<cl_int>(n)).arg(static_cast<cl_int>(p)).arg(static_cast<cl_int>(C));
      if (dtype == at::kComplexDouble) {
        launch.arg(scale);
      } else {
        launch.arg(static_cast<float>(scale));
      }
      launch.arg(static_cast<cl_long>(B)).arg(static_cast<cl_int>(lane0));
      launch.enqueue(device, 3, global, local);
    }
    p *= R;
  }
}

// out [B, n] (contiguous, complex) = the n-point transforms of the rows of x (complex, no
// conjugate or negative bit): [B, n] or [B1, B2, n] with B = B1 * B2, any strides (read in place
// by the first pass), scaled by `scale`.
void fft_rows(const at::Tensor& x, const at::Tensor& out, bool inverse, double scale) {
  TORCH_INTERNAL_ASSERT(x.dim() == 2 || x.dim() == 3);
  const int64_t n = x.size(-1), B = out.size(0);
  if (B == 0 || n == 0) return;
  if (factorise(n).empty()) {  // Bluestein and length 1 take [B, n] rows
    const at::Tensor rows = x.dim() == 3 ? x.reshape({B, n}) : x;
    if (n == 1) {
      out.copy_(rows);
      if (scale != 1.0) out.mul_(scale);
      return;
    }
    return bluestein_rows(rows, out, inverse, scale);
  }
  const bool two = x.dim() == 3;
  const Lines in{x,           two ? x.size(0) : B,   two ? x.size(1) : 1, n, 1,
                 x.stride(0), two ? x.stride(1) : 0, x.stride(-1),        1};
  fft_lines(in, out.view({B, n, 1}), inverse, scale);
}

// Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_j = exp(-+ pi i j^2 / n), as a circular
// convolution of length M (a power of two >= 2n - 1) through the transforms above. The chirp c
// and the transform of the convolution kernel are cached per length, dtype and direction.
void bluestein_rows(const at::Tensor& x, const at::Tensor& out, bool inverse, double scale) {
  const int64_t B = x.size(0), n = x.size(1);
  int64_t M = 1;
  while (M < 2 * n - 1) M *= 2;
  const at::ScalarType dtype = out.scalar_type();
  const at::Device device = out.device();
  at::Tensor chirp, kernel_hat;
  {
    const CacheKey ckey{device.index(), dtype, n, inverse ? 2 : 1};
    const CacheKey kkey{device.index(), dtype, n, inverse ? 4 : 3};
    std::unique_lock<std::mutex> lock(g_cache_mutex);
    auto it = cache().find(ckey);
    if (it != cache().end()) {
      chirp = it->second;
      kernel_hat = cache().at(kkey);
    } else {
      lock.unlock();
      const double sign = inverse ? 1.0 : -1.0;
      std::vector<c10::complex<double>> c(static_cast<size_t>(n));
      std::vector<c10::complex<double>> b(static_cast<size_t>(M), {0.0, 0.0});
      for (int64_t j = 0; j < n; ++j) {
        // j^2 mod 2n keeps the angle exact for large j.
        const int64_t q = (j * j) % (2 * n);  // n <= 2^27: no overflow
        const double a = sign * M_PI * static_cast<double>(q) / static_cast<double>(n);
        c[static_cast<size_t>(j)] = {std::cos(a), std::sin(a)};
        const c10::complex<double> cc = std::conj(c[static_cast<size_t>(j)]);
        b[static_cast<size_t>(j)] = cc;
        if (j > 0) b[static_cast<size_t>(M - j)] = cc;
      }
      chirp = upload(c, dtype, device);
      const at::Tensor bk = upload(b, dtype, device).view({1, M});
      kernel_hat = at::empty({1, M}, out.options());
      fft_rows(bk, kernel_hat, false, 1.0);
      lock.lock();
      cache().emplace(ckey, chirp);
      cache().emplace(kkey, kernel_hat);
    }
  }
  at::Tensor a = at::zeros({B, M}, out.options());
  at::Tensor head = a.narrow(1, 0, n);  // a strided output: the elementwise kernels write it
  at::mul_out(head, x, chirp);
  at::Tensor ahat = at::empty({B, M}, out.options());
  fft_rows(a, ahat, false, 1.0);
  ahat.mul_(kernel_hat);
  fft_rows(ahat, a, true, 1.0 / static_cast<double>(M));
  at::Tensor result = out;
  at::mul_out(result, a.narrow(1, 0, n), chirp);
  if (scale != 1.0) out.mul_(scale);
}

double norm_scale(int64_t normalization, int64_t signal_numel) {
  switch (static_cast<at::native::fft_norm_mode>(normalization)) {
    case at::native::fft_norm_mode::none:
      return 1.0;
    case at::native::fft_norm_mode::by_root_n:
      return 1.0 / std::sqrt(static_cast<double>(signal_numel));
    case at::native::fft_norm_mode::by_n:
      return 1.0 / static_cast<double>(signal_numel);
  }
  TORCH_CHECK(false, "torch-ocl: unknown FFT normalization mode ", normalization);
}

void check_device_tensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, op,
              ": expected an ocl tensor, got one on ", t.device());
}

// The rows of t ([..., n]) as [B1, B2, n] with the batch dimensions merged where their strides
// allow (a view: the first pass reads them in place), or a contiguous [B, n] copy when more than
// two batch dimensions remain.
at::Tensor as_rows(const at::Tensor& t) {
  std::vector<int64_t> sizes, strides;  // merged batch dimensions, outermost first
  for (int64_t i = 0; i + 1 < t.dim(); ++i) {
    if (t.size(i) == 1) continue;
    if (!sizes.empty() && strides.back() == t.stride(i) * t.size(i)) {
      sizes.back() *= t.size(i);
      strides.back() = t.stride(i);
    } else {
      sizes.push_back(t.size(i));
      strides.push_back(t.stride(i));
    }
  }
  const int64_t n = t.size(-1);
  if (sizes.size() > 2) return t.reshape({-1, n}).contiguous();
  while (sizes.size() < 2) {
    sizes.insert(sizes.begin(), 1);
    strides.insert(strides.begin(), 0);
  }
  return t.as_strided({sizes[0], sizes[1], n}, {strides[0], strides[1], t.stride(-1)});
}

// Fewest bytes of neighbouring columns for which a transform along a non-innermost dimension
// runs on the columns in place (a cache line); narrower ones move the dimension last.
constexpr int64_t kColumnBytesMin = 64;

// x's dimensions before d as at most two (size, stride) pairs and those after d as one (merged
// where the strides allow): the [B1, B2, n, C] view of a column transform, or nothing.
std::optional<Lines> as_columns(const at::Tensor& x, int64_t d) {
  std::vector<int64_t> sizes, strides;  // merged outer dimensions, outermost first
  for (int64_t i = 0; i < d; ++i) {
    if (x.size(i) == 1) continue;
    if (!sizes.empty() && strides.back() == x.stride(i) * x.size(i)) {
      sizes.back() *= x.size(i);
      strides.back() = x.stride(i);
    } else {
      sizes.push_back(x.size(i));
      strides.push_back(x.stride(i));
    }
  }
  if (sizes.size() > 2) return std::nullopt;
  while (sizes.size() < 2) {
    sizes.insert(sizes.begin(), 1);
    strides.insert(strides.begin(), 0);
  }
  int64_t C = 1, sc = 1;  // the inner dimensions as one: innermost stride, sizes multiplied
  for (int64_t i = x.dim() - 1; i > d; --i) {
    if (x.size(i) == 1) continue;
    if (C == 1) {
      sc = x.stride(i);
    } else if (x.stride(i) != sc * C) {
      return std::nullopt;
    }
    C *= x.size(i);
  }
  return Lines{x, sizes[0], sizes[1], x.size(d), C, strides[0], strides[1], x.stride(d), sc};
}

// The 1-d transform of x along dim d (complex, resolved), scaled; a new tensor shaped like x.
// Along a non-innermost dimension with columns of at least kColumnBytesMin, the columns are
// transformed in place and the result is contiguous; otherwise it is contiguous in x's order with
// d moved last (a transform along the next dim reads it in place).
at::Tensor c2c_dim(const at::Tensor& x, int64_t d, bool inverse, double scale) {
  const int64_t n = x.size(d);
  d = c10::maybe_wrap_dim(d, x.dim());
  if (d != x.dim() - 1 && x.numel() > 0 && !factorise(n).empty()) {
    int64_t inner = 1;
    for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
    if (inner * static_cast<int64_t>(x.itemsize()) >= kColumnBytesMin) {
      std::optional<Lines> cols = as_columns(x, d);
      if (!cols) cols = as_columns(x.contiguous(), d);  // always mergeable
      TORCH_INTERNAL_ASSERT(cols.has_value());
      at::Tensor out = at::empty(x.sizes(), x.options());
      fft_lines(*cols, out.view({cols->B1 * cols->B2, n, cols->C}), inverse, scale);
      return out;
    }
  }
  const at::Tensor moved = x.movedim(d, -1);
  const at::Tensor rows = as_rows(moved);
  at::Tensor out = at::empty({moved.numel() / std::max<int64_t>(n, 1), n}, x.options());
  fft_rows(rows, out, inverse, scale);
  return out.view(moved.sizes()).movedim(-1, d);
}

at::Tensor c2c(const at::Tensor& self, at::IntArrayRef dims, double scale, bool inverse) {
  at::Tensor y = self.resolve_conj().resolve_neg();
  if (y.numel() == 0) return at::empty(self.sizes(), self.options());
  if (dims.empty()) return scale == 1.0 ? y.clone() : y.mul(scale);
  for (size_t i = 0; i < dims.size(); ++i)
    y = c2c_dim(y, dims[i], inverse, i + 1 == dims.size() ? scale : 1.0);
  return y;
}

at::Tensor fft_c2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool forward) {
  check_device_tensor(self, "_fft_c2c");
  TORCH_CHECK(self.is_complex(), "_fft_c2c expects a complex input tensor, but got ",
              self.scalar_type());
  c10::DeviceGuard guard(self.device());
  int64_t numel = 1;
  for (int64_t d : dim) numel *= self.size(d);
  return c2c(self, dim, norm_scale(normalization, numel), !forward);
}

// The one-sided transform of real x along dim d (the last transformed dim), scaled: a complex
// tensor with n / 2 + 1 values along d.
at::Tensor r2c_dim(const at::Tensor& x, int64_t d, double scale) {
  const int64_t n = x.size(d);
  const at::ScalarType ctype = c10::toComplexType(x.scalar_type());
  const at::Tensor moved = x.movedim(d, -1);
  std::vector<int64_t> out_shape = moved.sizes().vec();
  out_shape.back() = n / 2 + 1;
  if (n % 2 != 0 || x.numel() == 0) {  // odd: the full complex transform, first half kept
    const at::Tensor full = c2c_dim(moved.to(ctype), -1, false, scale);
    return full.narrow(-1, 0, n / 2 + 1).contiguous().movedim(-1, d);
  }
  at::Tensor rows = moved.reshape({-1, n}).contiguous();
  if (rows.storage_offset() % 2 != 0) rows = rows.clone();
  const int64_t B = rows.size(0), h = n / 2;
  const at::Tensor z_in = at::view_as_complex(rows.view({B, h, 2}));
  at::Tensor z = at::empty({B, h}, x.options().dtype(ctype));
  fft_rows(z_in, z, false, 1.0);
  at::Tensor out = at::empty({B, h + 1}, z.options());
  const int device = out.device().index();
  const at::Tensor tw = twiddles(n, ctype, out.device());
  cl_kernel k = get_kernel(device, "fft.cl", "fft_r2c_post", pass_options(ctype, device, false));
  KernelLaunch launch(k);
  const size_t itemsize = out.itemsize();
  launch.buffer(buffer_of(z), itemsize).buffer(buffer_of(out), itemsize);
  launch.buffer(buffer_of(tw), itemsize).arg(static_cast<cl_int>(h));
  if (ctype == at::kComplexDouble) {
    launch.arg(scale);
  } else {
    launch.arg(static_cast<float>(scale));
  }
  enqueue_rows(launch, device, h + 1, B);
  return out.view(out_shape).movedim(-1, d);
}

at::Tensor fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool onesided) {
  check_device_tensor(self, "_fft_r2c");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) && self.scalar_type() != at::kHalf &&
                  self.scalar_type() != at::kBFloat16,
              "_fft_r2c: expected a float32 or float64 input, got ", self.scalar_type(),
              " (convert with .float())");
  c10::DeviceGuard guard(self.device());
  int64_t numel = 1;
  for (int64_t d : dim) numel *= self.size(d);
  const double scale = norm_scale(normalization, numel);
  const at::ScalarType ctype = c10::toComplexType(self.scalar_type());
  if (!onesided || dim.empty()) return c2c(self.to(ctype), dim, scale, false);
  at::Tensor y = r2c_dim(self, dim.back(), dim.size() == 1 ? scale : 1.0);
  if (dim.size() > 1) y = c2c(y, dim.slice(0, dim.size() - 1), scale, false);
  return y;
}

// The real inverse along dim d of a half spectrum x (n / 2 + 1 values along d, complex,
// resolved) into n real values, scaled.
at::Tensor c2r_dim(const at::Tensor& x, int64_t d, int64_t n, double scale) {
  const at::ScalarType ctype = x.scalar_type();
  const at::ScalarType rtype = c10::toRealValueType(ctype);
  const at::Tensor moved = x.movedim(d, -1);
  std::vector<int64_t> out_shape = moved.sizes().vec();
  out_shape.back() = n;
  const int64_t half = n / 2 + 1;
  at::Tensor rows = moved.reshape({-1, moved.size(-1)});
  if (rows.size(1) != half) {  // ATen's wrappers pass exactly n / 2 + 1; keep or zero-fill
    at::Tensor fixed = at::zeros({rows.size(0), half}, rows.options());
    const int64_t keep = std::min<int64_t>(half, rows.size(1));
    fixed.narrow(1, 0, keep).copy_(rows.narrow(1, 0, keep));
    rows = fixed;
  }
  rows = rows.contiguous();
  const int64_t B = rows.size(0);
  const int device = x.device().index();
  const size_t itemsize = rows.itemsize();
  at::Tensor out;
  if (n % 2 == 0) {
    const int64_t h = n / 2;
    const at::Tensor tw = twiddles(n, ctype, x.device());
    at::Tensor y = at::empty({B, h}, rows.options());
    cl_kernel k = get_kernel(device, "fft.cl", "fft_c2r_pre", pass_options(ctype, device, true));
    KernelLaunch launch(k);
    launch.buffer(buffer_of(rows), itemsize).buffer(buffer_of(y), itemsize);
    launch.buffer(buffer_of(tw), itemsize).arg(static_cast<cl_int>(h));
    enqueue_rows(launch, device, h, B);
    at::Tensor z = at::empty({B, h}, rows.options());
    fft_rows(y, z, true, scale);
    out = at::view_as_real(z).view({B, n});
  } else {
    at::Tensor full = at::empty({B, n}, rows.options());
    cl_kernel k =
        get_kernel(device, "fft.cl", "fft_hermitian_extend", pass_options(ctype, device, true));
    KernelLaunch launch(k);
    launch.buffer(buffer_of(rows), itemsize).buffer(buffer_of(full), itemsize);
    launch.arg(static_cast<cl_int>(n));
    enqueue_rows(launch, device, n, B);
    at::Tensor z = at::empty({B, n}, rows.options());
    fft_rows(full, z, true, scale);
    out = at::empty({B, n}, x.options().dtype(rtype));
    out.copy_(at::view_as_real(z).select(-1, 0));
  }
  return out.view(out_shape).movedim(-1, d);
}

at::Tensor fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   int64_t last_dim_size) {
  check_device_tensor(self, "_fft_c2r");
  TORCH_CHECK(self.is_complex(), "_fft_c2r expects a complex input tensor, but got ",
              self.scalar_type());
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  c10::DeviceGuard guard(self.device());
  int64_t numel = last_dim_size;
  for (size_t i = 0; i + 1 < dim.size(); ++i) numel *= self.size(dim[i]);
  const double scale = norm_scale(normalization, numel);
  at::Tensor y = self.resolve_conj().resolve_neg();
  if (dim.size() > 1) y = c2c(y, dim.slice(0, dim.size() - 1), 1.0, true);
  std::vector<int64_t> out_shape = self.sizes().vec();
  out_shape[static_cast<size_t>(dim.back())] = last_dim_size;
  if (y.numel() == 0)
    return at::zeros(out_shape, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return c2r_dim(y, dim.back(), last_dim_size, scale);
}

// out= forms: the result copied into `out` (resized as ATen's resize_output does).
at::Tensor& copy_into(const at::Tensor& result, at::Tensor& out) {
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}
at::Tensor& fft_c2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        bool forward, at::Tensor& out) {
  return copy_into(fft_c2c(self, dim, normalization, forward), out);
}
at::Tensor& fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        bool onesided, at::Tensor& out) {
  return copy_into(fft_r2c(self, dim, normalization, onesided), out);
}
at::Tensor& fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        int64_t last_dim_size, at::Tensor& out) {
  return copy_into(fft_c2r(self, dim, normalization, last_dim_size), out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fft_c2c", fft_c2c);
  m.impl("_fft_c2c.out", fft_c2c_out);
  m.impl("_fft_r2c", fft_r2c);
  m.impl("_fft_r2c.out", fft_r2c_out);
  m.impl("_fft_c2r", fft_c2r);
  m.impl("_fft_c2r.out", fft_c2r_out);
}

}  // namespace torch_ocl
