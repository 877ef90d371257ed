// Multi-tensor kernels: one launch applies an op to many tensors (the _foreach_* ops, their
// norms, the fused optimizer steps and the AMP unscale), like CUDA's multi_tensor_apply.
//
// A launch gets up to MT_NB distinct buffers (b0..b31: the tensors' OpenCL buffers, each passed
// once however many tensors live in it) and a table, by value, that says where every tensor of
// every list is. Operand l of tensor r lives in buffer b<slot(r, l)> at element offset
// off(r, l) (in elements of that list's dtype); all lists of a tensor have the same number of
// elements (list 0's numel) except the lists read as one value per tensor (fused steps).
//
// Table (uint words, MT_WORDS of them, the host fills it the same way: csrc/ops/MultiTensor.cpp):
//   w[0]                     number of tensors (rows) in this launch
//   row r at w[1 + r*MT_ROW]:
//     +0                     numel
//     +1                     chunk_end: chunks (work-groups) of rows 0..r, cumulative
//     +2                     slots: 5 bits per list, list l in bits [5l, 5l+5)
//     +3 .. +3+NLIST-1       element offset of each list's tensor in its buffer
//     +3+NLIST, +4+NLIST     with -DSCALARLIST: the row's scalar: float bits in the first word, or
//                            double bits (low, high) when COMP is double
// Work-group g handles chunk g: the row r whose chunk range holds g, elements
// [(g - chunk_begin(r)) * chunk, min(numel, ... + chunk)) of it. Rows with numel 0 have no chunks.
//
// Geometry options (per device, set by the host): -DMT_WORDS=<n> -DLWS=<n> (local size, a power of
//   two) -DMT_PER=<k> (elements per work-item in a chunk: chunk = LWS * MT_PER) and -DMT_CONSEC
//   on CPU devices (a work-item's elements are consecutive, which the compiler vectorises;
//   otherwise they are LWS apart, so neighbouring work-items touch neighbouring elements).
//   -DNLIST=<n> lists in the table.
//
// Kernels:
//   foreach_apply     out = OP(a, b, c) elementwise; see "foreach_apply" below.
//   foreach_norm_partial / foreach_norm_finish   per-tensor vector norms, two passes.
//   fused_adam, fused_sgd, fused_adagrad          optimizer steps (torch's _fused_*_ ops).
//   cat_copy          torch.cat of many inputs in one launch; see "cat_copy" below.

#define MT_NB 32

// Per-element helpers that compilers inline (as OCL_ISNAN in common.clh). PoCL 3.0's built-ins
// (sqrt, fabs, isnan, isfinite) are out-of-line calls, and a loop that calls a function is not
// vectorised: with them Adam's fused step ran 6x and NaN-propagating max 8x slower. clang's
// __builtin_sqrt is the IEEE (correctly rounded) square root, as the CPU computes it. Arguments
// are evaluated twice.
#define MT_FABS(x) ((x) < 0 ? -(x) : (x) + 0) /* + 0 turns -0.0 into +0.0 */
// Not for SPIR targets (Oclgrind; Intel's compiler): the LLVM sqrt intrinsic the built-in becomes
// is not an OpenCL function there, and Oclgrind refused to create every kernel using it.
#if defined(__clang__) && !defined(__SPIR__) && defined(COMP_IS_DOUBLE)
#define MT_SQRT(x) __builtin_sqrt(x)
#elif defined(__clang__) && !defined(__SPIR__)
#define MT_SQRT(x) __builtin_sqrtf(x)
#else
#define MT_SQRT(x) sqrt(x)
#endif

#ifdef SCALARLIST
#define MT_ROW (5 + NLIST)
#else
#define MT_ROW (3 + NLIST)
#endif

typedef struct {
  uint w[MT_WORDS];
} mt_table;

#define MT_BUF_PARAMS                                                                     \
  __global uchar *b0, __global uchar *b1, __global uchar *b2, __global uchar *b3,         \
      __global uchar *b4, __global uchar *b5, __global uchar *b6, __global uchar *b7,     \
      __global uchar *b8, __global uchar *b9, __global uchar *b10, __global uchar *b11,   \
      __global uchar *b12, __global uchar *b13, __global uchar *b14, __global uchar *b15, \
      __global uchar *b16, __global uchar *b17, __global uchar *b18, __global uchar *b19, \
      __global uchar *b20, __global uchar *b21, __global uchar *b22, __global uchar *b23, \
      __global uchar *b24, __global uchar *b25, __global uchar *b26, __global uchar *b27, \
      __global uchar *b28, __global uchar *b29, __global uchar *b30, __global uchar *b31
#define MT_BUFS                                                                                  \
  __global uchar* const mt_bufs[MT_NB] = {b0,  b1,  b2,  b3,  b4,  b5,  b6,  b7,  b8,  b9,  b10, \
                                          b11, b12, b13, b14, b15, b16, b17, b18, b19, b20, b21, \
                                          b22, b23, b24, b25, b26, b27, b28, b29, b30, b31}

#define MT_AT(r, k) tab.w[1 + (r)*MT_ROW + (k)]
// List l's pointer for row r, typed as STORE_TYPE(tag) and moved to the tensor's first element.
#define MT_PTR(tag, r, l) \
  ((__global STORE_TYPE(tag)*)mt_bufs[(MT_AT(r, 2) >> (5 * (l))) & (MT_NB - 1)] + MT_AT(r, 3 + (l)))

// This group's row (mt_r), and its element range [mt_lo, mt_hi).
#define MT_LOCATE(chunk)                                     \
  const uint mt_g = (uint)get_group_id(0);                   \
  uint mt_r = 0;                                             \
  while (mt_g >= MT_AT(mt_r, 1)) ++mt_r;                     \
  const uint mt_first = mt_r == 0 ? 0u : MT_AT(mt_r - 1, 1); \
  const uint mt_lo = (mt_g - mt_first) * (chunk);            \
  const uint mt_hi = min(MT_AT(mt_r, 0), mt_lo + (chunk))

// Runs BODY(i) for this work-item's elements i of [mt_lo, mt_hi).
#ifdef MT_CONSEC
#define MT_FOR_EACH(BODY)                                              \
  do {                                                                 \
    const uint mt_base = mt_lo + (uint)get_local_id(0) * MT_PER;       \
    if (mt_base + MT_PER <= mt_hi) {                                   \
      for (uint mt_j = 0; mt_j < MT_PER; ++mt_j) BODY(mt_base + mt_j); \
    } else {                                                           \
      for (uint mt_i = mt_base; mt_i < mt_hi; ++mt_i) BODY(mt_i);      \
    }                                                                  \
  } while (0)
#else
#define MT_FOR_EACH(BODY)                                                                  \
  do {                                                                                     \
    for (uint mt_i = mt_lo + (uint)get_local_id(0); mt_i < mt_hi; mt_i += LWS) BODY(mt_i); \
  } while (0)
#endif

// ---------------------------------------------------------------------------------------------
// foreach_apply: for every element i of every tensor,
//   out[i] = OP(a[i], b[i], c[i])  computed in COMP = REG_TYPE(T) (float for half/bfloat16)
// Options: -DT=<tag> (every list's dtype) -DFE_OP=FE_<name> -DNIN=<1..3> (lists read: a = list 0,
//   b = list 1, c = list 2) and -DINPLACE (out is list 0; otherwise list NIN, so NLIST = NIN + 1).
//   The op's scalar `s` comes from -DS_ARG (the kernel argument s_arg), -DSCALARLIST (the row) or
//   -DS_TENSOR -DS_T=<tag> (element 0 of the tensor s_buf, read on the device). `alpha` is a
//   kernel argument. -DSECOND_SCALAR: binary ops take s as their second operand instead of b.
//   -DCHECK_FINITE: a non-finite a sets found[0] = 1 (AMP's unscale). -DFE_FLOAT: T is a floating
//   tag; otherwise an integer tag: the integer ops (add, sub, mul, max, min, neg, abs, sign), or
//   copy and zero, which move elements as integers of their size. SCALARLIST rows hold the
//   scalar's int64 bits for integer T.
// Arguments: MT_BUF_PARAMS, mt_table tab, uint chunk, COMP s_arg, COMP alpha
//   [, __global S_T* s_buf, ulong s_off]  (S_TENSOR)
//   [, __global float* found, ulong found_off]  (CHECK_FINITE)

#ifdef FE_OP
#define COMP REG_TYPE(T)

#if defined(COMP_IS_DOUBLE)
#define SCALAR_FROM_ROW(r) as_double((uint2)(MT_AT(r, 3 + NLIST), MT_AT(r, 4 + NLIST)))
#elif !defined(FE_FLOAT)
#define SCALAR_FROM_ROW(r) ((COMP)as_long((uint2)(MT_AT(r, 3 + NLIST), MT_AT(r, 4 + NLIST))))
#else
#define SCALAR_FROM_ROW(r) as_float(MT_AT(r, 3 + NLIST))
#endif

#ifdef SECOND_SCALAR
#define SECOND(b) s
#else
#define SECOND(b) (b)
#endif

#ifdef FE_FLOAT
// NaN-propagating maximum/minimum, as torch's clamp_min/clamp_max and maximum/minimum.
inline COMP fe_max(COMP a, COMP b) { return OCL_ISNAN(a) || OCL_ISNAN(b) ? a + b : (a > b ? a : b); }
inline COMP fe_min(COMP a, COMP b) { return OCL_ISNAN(a) || OCL_ISNAN(b) ? a + b : (a < b ? a : b); }
#define FE_ABS(a) MT_FABS(a)
#else
inline COMP fe_max(COMP a, COMP b) { return a > b ? a : b; }
inline COMP fe_min(COMP a, COMP b) { return a < b ? a : b; }
// The abs() builtin returns the unsigned type; cast back (the minimum wraps, as on the CPU).
#define FE_ABS(a) ((COMP)abs(a))
#endif

// Binary ops: second operand b (list 1) or the scalar (SECOND_SCALAR).
#define FE_add(a, b, c) ((a) + alpha * SECOND(b))
#define FE_sub(a, b, c) ((a)-alpha * SECOND(b))
#define FE_mul(a, b, c) ((a)*SECOND(b))
#define FE_div(a, b, c) ((a) / SECOND(b))
#define FE_max(a, b, c) fe_max(a, SECOND(b))
#define FE_min(a, b, c) fe_min(a, SECOND(b))
#if defined(SECOND_SCALAR) && defined(FE_FLOAT)
// The CPU's pow(tensor, scalar) computes these exponents as sqrt, rsqrt, reciprocal and products
// (sqrt(-inf) is NaN where pow(-inf, 0.5) is inf).
inline COMP fe_pow_scalar(COMP a, COMP e) {
  if (e == (COMP)2) return a * a;
  if (e == (COMP)3) return a * a * a;
  if (e == (COMP)0.5) return MT_SQRT(a);
  if (e == (COMP)-0.5) return (COMP)1 / MT_SQRT(a);
  if (e == (COMP)-1) return (COMP)1 / a;
  if (e == (COMP)-2) return (COMP)1 / (a * a);
  return pow(a, e);
}
#define FE_pow(a, b, c) fe_pow_scalar(a, s)
#else
#define FE_pow(a, b, c) pow(a, b)
#endif
#define FE_rpow(a, b, c) pow(s, a)
// Pointwise ops (value s), lerp (weight c, or s with SECOND_SCALAR for lerp's weight).
#define FE_addcmul(a, b, c) ((a) + s * (b) * (c))
#define FE_addcdiv(a, b, c) ((a) + s * ((b) / (c)))
#ifdef SECOND_SCALAR
#define FE_WEIGHT(c) s
#else
#define FE_WEIGHT(c) (c)
#endif
#ifdef FE_FLOAT
inline COMP fe_lerp(COMP a, COMP b, COMP w) {
  return MT_FABS(w) < (COMP)0.5 ? a + w * (b - a) : b - (b - a) * ((COMP)1 - w);
}
#endif
#define FE_lerp(a, b, c) fe_lerp(a, b, FE_WEIGHT(c))
// Unary ops.
#define FE_neg(a, b, c) (-(a))
#define FE_abs(a, b, c) FE_ABS(a)
#define FE_sign(a, b, c) (COMP)(((a) > 0) - ((a) < 0))
#define FE_sqrt(a, b, c) MT_SQRT(a)
#define FE_rsqrt(a, b, c) ((COMP)1 / MT_SQRT(a))
#define FE_reciprocal(a, b, c) ((COMP)1 / (a))
#define FE_exp(a, b, c) exp(a)
#define FE_expm1(a, b, c) expm1(a)
#define FE_log(a, b, c) log(a)
#define FE_log10(a, b, c) log10(a)
#define FE_log1p(a, b, c) log1p(a)
#define FE_log2(a, b, c) log2(a)
#define FE_sin(a, b, c) sin(a)
#define FE_cos(a, b, c) cos(a)
#define FE_tan(a, b, c) tan(a)
#define FE_asin(a, b, c) asin(a)
#define FE_acos(a, b, c) acos(a)
#define FE_atan(a, b, c) atan(a)
#define FE_sinh(a, b, c) sinh(a)
#define FE_cosh(a, b, c) cosh(a)
#define FE_tanh(a, b, c) tanh(a)
#define FE_sigmoid(a, b, c) ((COMP)1 / ((COMP)1 + exp(-(a))))
#define FE_erf(a, b, c) erf(a)
#define FE_erfc(a, b, c) erfc(a)
#define FE_lgamma(a, b, c) lgamma(a)
#define FE_ceil(a, b, c) ceil(a)
#define FE_floor(a, b, c) floor(a)
#define FE_round(a, b, c) rint(a)
#define FE_trunc(a, b, c) trunc(a)
#define FE_frac(a, b, c) ((a)-trunc(a))
// Moving elements as bits (T is an integer tag of the element size): copy (out = list 1, in place
// into list 0), zero.
#define FE_copy(a, b, c) (b)
#define FE_zero(a, b, c) ((COMP)0)
// AMP: a * inv_scale (untouched when inv_scale is 1), as the CPU's unscale.
#define FE_unscale(a, b, c) (s == (COMP)1 ? (a) : (a)*s)

#ifdef INPLACE
#define OUT_LIST 0
#else
#define OUT_LIST NIN
#endif

#if NIN > 1
#define LOAD_B(i) ((COMP)LOAD(T, pb, i))
#else
#define LOAD_B(i) ((COMP)0)
#endif
#if NIN > 2
#define LOAD_C(i) ((COMP)LOAD(T, pc, i))
#else
#define LOAD_C(i) ((COMP)0)
#endif

#ifdef CHECK_FINITE
// Every writer stores the same value; an atomic store keeps that free of data races.
#define CHECK_A(a) \
  if (!OCL_ISFINITE(a)) atomic_xchg((volatile __global int*)(found + found_off), as_int(1.0f))
#else
#define CHECK_A(a)
#endif

#define FE_BODY(i)                                                     \
  do {                                                                 \
    const COMP a = (COMP)LOAD(T, pa, i), b = LOAD_B(i), c = LOAD_C(i); \
    CHECK_A(a);                                                        \
    STORE(T, po, i, CONVERT(T, FE_OP(a, b, c)));                       \
  } while (0)

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void foreach_apply(
    MT_BUF_PARAMS, const mt_table tab, uint chunk, COMP s_arg, COMP alpha
#ifdef S_TENSOR
    ,
    __global const STORE_TYPE(S_T)* s_buf, ulong s_off
#endif
#ifdef CHECK_FINITE
    ,
    __global float* found, ulong found_off
#endif
) {
  MT_BUFS;
  MT_LOCATE(chunk);
#if defined(SCALARLIST)
  const COMP s = SCALAR_FROM_ROW(mt_r);
#elif defined(S_TENSOR)
  const COMP s = (COMP)LOAD(S_T, s_buf, s_off);
#else
  const COMP s = s_arg;
#endif
  __global STORE_TYPE(T)* const pa = MT_PTR(T, mt_r, 0);
#if NIN > 1
  __global STORE_TYPE(T)* const pb = MT_PTR(T, mt_r, 1);
#endif
#if NIN > 2
  __global STORE_TYPE(T)* const pc = MT_PTR(T, mt_r, 2);
#endif
  __global STORE_TYPE(T)* const po = MT_PTR(T, mt_r, OUT_LIST);
  (void)s;
  (void)alpha;
  MT_FOR_EACH(FE_BODY);
}
#endif  // FE_OP

// ---------------------------------------------------------------------------------------------
// Vector norms of every tensor (list 0, dtype T), accumulated in ACC_T (float, double for double):
//   -DNORM_L2 sqrt(sum x^2), -DNORM_L1 sum |x|, -DNORM_L0 count of x != 0, -DNORM_INF max |x|,
//   -DNORM_NEGINF min |x|, -DNORM_P (sum |x|^p)^(1/p) with the argument p.
// foreach_norm_partial(MT_BUF_PARAMS, tab, chunk, p, part, part_off): group g writes its chunk's
//   partial (sum, max or min; NaN propagates) to part[part_off + g]. Launch: one group per chunk.
// foreach_norm_finish(tab, p, part, part_off, out, out_off): group r reduces row r's partials and
//   writes the norm, converted to OUT_T, to out[out_off + r] (an empty tensor: 0). Launch: one
//   group per row.

#ifdef NORM_KERNELS
#define ACC REG_TYPE(ACC_T)

#if defined(NORM_INF)
#define NORM_MAP(x) MT_FABS(x)
#define NORM_ID ((ACC)0)
#define NORM_COMBINE(u, v) ((OCL_ISNAN(u) || (u) > (v)) ? (u) : (v))
#elif defined(NORM_NEGINF)
#define NORM_MAP(x) MT_FABS(x)
#define NORM_ID ((ACC)INFINITY)
#define NORM_COMBINE(u, v) ((OCL_ISNAN(u) || (u) < (v)) ? (u) : (v))
#else
#if defined(NORM_L2)
#define NORM_MAP(x) ((x) * (x))
#elif defined(NORM_L1)
#define NORM_MAP(x) MT_FABS(x)
#elif defined(NORM_L0)
#define NORM_MAP(x) ((ACC)((x) != 0))
#else
#define NORM_MAP(x) pow(fabs(x), p)
#endif
#define NORM_ID ((ACC)0)
#define NORM_COMBINE(u, v) ((u) + (v))
#endif

#if defined(NORM_L2)
#define NORM_FINISH(v) sqrt(v)
#elif defined(NORM_P)
#define NORM_FINISH(v) pow(v, (ACC)1 / p)
#else
#define NORM_FINISH(v) (v)
#endif

inline ACC norm_group_reduce(ACC v, __local ACC* scratch, uint lid) {
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = LWS / 2; h > 0; h >>= 1) {
    if (lid < h) scratch[lid] = NORM_COMBINE(scratch[lid], scratch[lid + h]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

#define NORM_BODY(i)                      \
  do {                                    \
    const ACC x = (ACC)LOAD(T, px, i);    \
    acc = NORM_COMBINE(acc, NORM_MAP(x)); \
  } while (0)

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void foreach_norm_partial(
    MT_BUF_PARAMS, const mt_table tab, uint chunk, ACC p, __global ACC* part, ulong part_off) {
  __local ACC scratch[LWS];
  MT_BUFS;
  MT_LOCATE(chunk);
  __global STORE_TYPE(T)* const px = MT_PTR(T, mt_r, 0);
  ACC acc = NORM_ID;
  (void)p;
  MT_FOR_EACH(NORM_BODY);
  const uint lid = (uint)get_local_id(0);
  const ACC total = norm_group_reduce(acc, scratch, lid);
  if (lid == 0) part[part_off + mt_g] = total;
}

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void foreach_norm_finish(
    const mt_table tab, ACC p, __global const ACC* part, ulong part_off,
    __global STORE_TYPE(OUT_T)* out, ulong out_off) {
  __local ACC scratch[LWS];
  const uint r = (uint)get_group_id(0), lid = (uint)get_local_id(0);
  const uint begin = r == 0 ? 0u : MT_AT(r - 1, 1), end = MT_AT(r, 1);
  ACC acc = NORM_ID;
  for (uint k = begin + lid; k < end; k += LWS) acc = NORM_COMBINE(acc, part[part_off + k]);
  const ACC total = norm_group_reduce(acc, scratch, lid);
  (void)p;
  if (lid == 0) STORE(OUT_T, out, out_off + r, CONVERT(OUT_T, NORM_FINISH(total)));
}
#endif  // NORM_KERNELS

// ---------------------------------------------------------------------------------------------
// Fused optimizer steps, computed in COMP (float for float/half/bfloat16 params) per element.
// The lists are distinct tensors (the params, their gradients, each state), so their pointers are
// restrict: without it the compiler cannot vectorise a loop that writes three of them.
// Lists (all dtype T except the step list, float32 with one value per tensor):
//   fused_adam:    0 param, 1 grad, 2 exp_avg, 3 exp_avg_sq, [4 max_exp_avg_sq with -DAMSGRAD],
//                  then step
//   fused_sgd:     0 param, 1 grad, [2 momentum_buffer with -DMOMENTUM]
//   fused_adagrad: 0 param, 1 grad, 2 state_sum, 3 step
// Options: -DMAXIMIZE, -DADAMW (decoupled weight decay), -DNESTEROV, -DGRAD_SCALE (grads are
//   divided by grad_scale[0] and written back unscaled), -DFOUND_INF (nothing happens when
//   found_inf[0] == 1), -DLR_TENSOR (lr is element 0 of a float32 tensor instead of an argument).
// Arguments: MT_BUF_PARAMS, tab, chunk, then the hyper-parameters of each kernel (below), then
//   the optional (buffer, offset) pairs grad_scale, found_inf, lr in that order.

#ifdef FUSED_KERNELS
#define COMP REG_TYPE(T)

#ifdef GRAD_SCALE
#define GS_PARAMS , __global const float *gs, ulong gs_off
#else
#define GS_PARAMS
#endif
#ifdef FOUND_INF
#define FI_PARAMS , __global const float *fi, ulong fi_off
#define SKIP_IF_FOUND_INF() \
  if (fi[fi_off] == 1.0f) return
#else
#define FI_PARAMS
#define SKIP_IF_FOUND_INF()
#endif
#ifdef LR_TENSOR
#define LR_PARAMS , __global const float *lr_buf, ulong lr_off
#define LR_VALUE ((COMP)lr_buf[lr_off])
#else
#define LR_PARAMS
#define LR_VALUE lr_arg
#endif
#define OPT_PARAMS GS_PARAMS FI_PARAMS LR_PARAMS

// Loads the gradient (unscaled and written back with GRAD_SCALE, negated with MAXIMIZE).
#ifdef GRAD_SCALE
#define LOAD_GRAD(g, i)                             \
  COMP g = (COMP)LOAD(T, pg, i) / (COMP)gs[gs_off]; \
  STORE(T, pg, i, CONVERT(T, g))
#else
#define LOAD_GRAD(g, i) COMP g = (COMP)LOAD(T, pg, i)
#endif
#ifdef MAXIMIZE
#define MAYBE_NEGATE(g) g = -g
#else
#define MAYBE_NEGATE(g)
#endif

#ifdef AMSGRAD
#define ADAM_STEP_LIST 5
#else
#define ADAM_STEP_LIST 4
#endif

#define ADAM_BODY(i)                                                               \
  do {                                                                             \
    COMP param = (COMP)LOAD(T, pp, i);                                             \
    LOAD_GRAD(grad, i);                                                            \
    MAYBE_NEGATE(grad);                                                            \
    ADAM_DECAY();                                                                  \
    const COMP m = beta1 * (COMP)LOAD(T, pm, i) + ((COMP)1 - beta1) * grad;        \
    const COMP v = beta2 * (COMP)LOAD(T, pv, i) + ((COMP)1 - beta2) * grad * grad; \
    STORE(T, pm, i, CONVERT(T, m));                                                \
    STORE(T, pv, i, CONVERT(T, v));                                                \
    ADAM_DENOM(denom, v, i);                                                       \
    param -= step_size * m / denom;                                                \
    STORE(T, pp, i, CONVERT(T, param));                                            \
  } while (0)

#ifdef ADAMW
#define ADAM_DECAY() param -= lr * weight_decay * param
#else
#define ADAM_DECAY() grad += param * weight_decay
#endif
#ifdef AMSGRAD
// std::max(old, v) as the CPU: a NaN v keeps the old maximum.
#define ADAM_DENOM(d, v, i)                 \
  const COMP vold = (COMP)LOAD(T, pmax, i); \
  const COMP vmax = vold < v ? v : vold;    \
  STORE(T, pmax, i, CONVERT(T, vmax));      \
  const COMP d = MT_SQRT(vmax) / bc2_sqrt + eps
#else
#define ADAM_DENOM(d, v, i) const COMP d = MT_SQRT(v) / bc2_sqrt + eps
#endif

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void fused_adam(
    MT_BUF_PARAMS, const mt_table tab, uint chunk, COMP lr_arg, COMP beta1, COMP beta2,
    COMP weight_decay, COMP eps OPT_PARAMS) {
  SKIP_IF_FOUND_INF();
  MT_BUFS;
  MT_LOCATE(chunk);
  const COMP lr = LR_VALUE;
  // The bias corrections once per group: pow() is slow on CPU devices, and every work-item
  // would otherwise compute the same two.
  __local COMP bias[2];
  if (get_local_id(0) == 0) {
    const COMP step = (COMP)*MT_PTR(float, mt_r, ADAM_STEP_LIST);
    bias[0] = lr / ((COMP)1 - pow(beta1, step));
    bias[1] = sqrt((COMP)1 - pow(beta2, step));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const COMP step_size = bias[0], bc2_sqrt = bias[1];
  __global STORE_TYPE(T)* restrict const pp = MT_PTR(T, mt_r, 0);
  __global STORE_TYPE(T)* restrict const pg = MT_PTR(T, mt_r, 1);
  __global STORE_TYPE(T)* restrict const pm = MT_PTR(T, mt_r, 2);
  __global STORE_TYPE(T)* restrict const pv = MT_PTR(T, mt_r, 3);
#ifdef AMSGRAD
  __global STORE_TYPE(T)* restrict const pmax = MT_PTR(T, mt_r, 4);
#endif
  MT_FOR_EACH(ADAM_BODY);
}

#ifdef MOMENTUM
#ifdef NESTEROV
#define SGD_DIRECTION(g, buf) (g + momentum * buf)
#else
#define SGD_DIRECTION(g, buf) (buf)
#endif
#define SGD_MOMENTUM(g, i)                                                                         \
  const COMP buf = first_step ? g : momentum * (COMP)LOAD(T, pbuf, i) + ((COMP)1 - dampening) * g; \
  STORE(T, pbuf, i, CONVERT(T, buf));                                                              \
  g = SGD_DIRECTION(g, buf)
#else
#define SGD_MOMENTUM(g, i)
#endif

#define SGD_BODY(i)                     \
  do {                                  \
    COMP param = (COMP)LOAD(T, pp, i);  \
    LOAD_GRAD(grad, i);                 \
    MAYBE_NEGATE(grad);                 \
    grad += param * weight_decay;       \
    SGD_MOMENTUM(grad, i);              \
    param -= grad * lr;                 \
    STORE(T, pp, i, CONVERT(T, param)); \
  } while (0)

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void fused_sgd(
    MT_BUF_PARAMS, const mt_table tab, uint chunk, COMP lr_arg, COMP weight_decay, COMP momentum,
    COMP dampening, int first_step OPT_PARAMS) {
  SKIP_IF_FOUND_INF();
  MT_BUFS;
  MT_LOCATE(chunk);
  const COMP lr = LR_VALUE;
  __global STORE_TYPE(T)* restrict const pp = MT_PTR(T, mt_r, 0);
  __global STORE_TYPE(T)* restrict const pg = MT_PTR(T, mt_r, 1);
#ifdef MOMENTUM
  __global STORE_TYPE(T)* restrict const pbuf = MT_PTR(T, mt_r, 2);
#endif
  (void)momentum;
  (void)dampening;
  (void)first_step;
  MT_FOR_EACH(SGD_BODY);
}

#define ADAGRAD_BODY(i)                                  \
  do {                                                   \
    COMP param = (COMP)LOAD(T, pp, i);                   \
    LOAD_GRAD(grad, i);                                  \
    MAYBE_NEGATE(grad);                                  \
    grad += param * weight_decay;                        \
    const COMP sum = (COMP)LOAD(T, ps, i) + grad * grad; \
    STORE(T, ps, i, CONVERT(T, sum));                    \
    param -= clr * grad / (MT_SQRT(sum) + eps);          \
    STORE(T, pp, i, CONVERT(T, param));                  \
  } while (0)

__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void fused_adagrad(
    MT_BUF_PARAMS, const mt_table tab, uint chunk, COMP lr_arg, COMP lr_decay, COMP weight_decay,
    COMP eps OPT_PARAMS) {
  SKIP_IF_FOUND_INF();
  MT_BUFS;
  MT_LOCATE(chunk);
  const COMP lr = LR_VALUE;
  const COMP step = (COMP)*MT_PTR(float, mt_r, 3);
  const COMP clr = lr / ((COMP)1 + (step - (COMP)1) * lr_decay);
  __global STORE_TYPE(T)* restrict const pp = MT_PTR(T, mt_r, 0);
  __global STORE_TYPE(T)* restrict const pg = MT_PTR(T, mt_r, 1);
  __global STORE_TYPE(T)* restrict const ps = MT_PTR(T, mt_r, 2);
  MT_FOR_EACH(ADAGRAD_BODY);
}
#endif  // FUSED_KERNELS

// ---------------------------------------------------------------------------------------------
// cat_copy: torch.cat's copies in one launch (csrc/ops/Cat.cpp). Seen in memory order, the
// output is `outer` rows of `row_stride` elements, and input r (list 0, -DNLIST=1) is a slab of
// `outer` rows of block_r elements that starts at column col_r:
//   out[out_off + (i / block_r) * row_stride + col_r + i % block_r] = input_r[i]
// block_r and col_r are the row's two words (-DSCALARLIST). Elements move as integers of their
// size: -DT=uchar|short|int|long. Options: -DCAT_COPY -DNLIST=1 -DSCALARLIST + the geometry.
// Arguments: MT_BUF_PARAMS, mt_table tab, uint chunk, T* out, ulong out_off, ulong row_stride.
#ifdef CAT_COPY
__kernel __attribute__((reqd_work_group_size(LWS, 1, 1))) void cat_copy(
    MT_BUF_PARAMS, const mt_table tab, uint chunk, __global STORE_TYPE(T)* out, ulong out_off,
    ulong row_stride) {
  MT_BUFS;
  MT_LOCATE(chunk);
  __global const STORE_TYPE(T)* const src = MT_PTR(T, mt_r, 0);
  const uint block = MT_AT(mt_r, 3 + NLIST);
  __global STORE_TYPE(T)* const dst = out + out_off + MT_AT(mt_r, 4 + NLIST);
#define CAT_BODY(i) dst[(ulong)((i) / block) * row_stride + (i) % block] = src[i]
  MT_FOR_EACH(CAT_BODY);
#undef CAT_BODY
}
#endif  // CAT_COPY
