// Inclusive scans along one dimension: cumsum, cumprod, logcumsumexp, cummax/cummin (values and
// the index of the element each value came from). The input is contiguous and viewed as
// (outer, n, inner); the scanned dimension has n elements and stride inner. Every op is
// combined with an associative and commutative COMBINE, so the order in which partial results
// meet does not matter (beyond floating-point rounding); cummax/cummin carry the position with
// the value and pick by (NaN first, then value, then the later position), which is what CPU
// torch's sequential rule (take x if x is NaN or x >= the running value) selects.
//
// Long dimensions are cut into C chunks of `chunk` elements (chunk is a multiple of TILE for
// the tile kernels), scanned in three passes:
//   1. reduce_*:    totals[o, c, i] = the combination of chunk c;
//   2. scan_totals: totals scanned in place along c (so totals[o, c, i] covers chunks 0..c);
//   3. scan_*:      each chunk scanned, starting from totals[o, c - 1, i] (`use_carry`).
// With C == 1 only pass 3 runs (use_carry = 0).
//
// Two geometries:
//   *_seq:  one work-item per (o, c, i), a sequential loop over its chunk (any inner; reads are
//           coalesced across work-items when inner > 1). global = outer * C * inner.
//   *_tile: inner == 1, one work-group of LWS work-items per (row, c), the chunk processed a
//           tile of TILE = LWS * E elements at a time: loaded into local memory, each work-item
//           scans E consecutive elements, a Hillis-Steele scan combines the work-items' totals.
//           global = rows * C * LWS, local = LWS.
//
// Build options (set by csrc/ops/Scan.cpp):
//   -DT=<tag>       element type of in and out (common.clh)
//   -DACC_T=<tag>   type of the running value and of the totals (float for half/bfloat16, long
//                   for integers; T itself for cummax/cummin)
//   -DOP_SUM | -DOP_PROD | -DOP_LOGADDEXP | -DOP_MAX | -DOP_MIN   (MAX/MIN write indices too)
//   -DLWS=<k> -DE=<k>   work-group size (power of two) and elements per work-item of a tile
// Arguments (offsets in elements):
//   scan_seq(ulong outer, ulong n, ulong inner, ulong chunk, in, ulong in_off, out, ulong out_off,
//            [long* out_idx, ulong idx_off,] totals, ulong totals_off, [long* totals_idx,
//            ulong totals_idx_off,] int use_carry)
//   reduce_seq(outer, n, inner, chunk, in, in_off, totals, totals_off [, totals_idx, off])
//   scan_totals(outer, C, inner, totals, totals_off [, totals_idx, off])
//   scan_tile / reduce_tile: as the _seq kernels with rows for outer and no inner argument.

#define ACC REG_TYPE(ACC_T)
#define IN_PTR __global const STORE_TYPE(T)*
#define OUT_PTR __global STORE_TYPE(T)*
#define TOT_PTR __global STORE_TYPE(ACC_T)*
#define TILE (LWS * E)

#if defined(OP_MAX) || defined(OP_MIN)
#define WITH_INDEX 1
#endif

// A running value: the value, and for cummax/cummin the position it came from (-1: none yet,
// the identity).
typedef struct {
  ACC v;
#ifdef WITH_INDEX
#if REG_BYTES(ACC_T) < 8
  // the bytes up to the index, as a field that every Item gets written: left as padding, they
  // were copied into local memory unwritten (Oclgrind's uninitialised-value report)
  uchar fill[8 - REG_BYTES(ACC_T)];
#endif
  long i;
#endif
} Item;

// (a macro: a helper taking Item* left LLVM's noalias.scope.decl, which Oclgrind 21.10 cannot run)
#if defined(WITH_INDEX) && REG_BYTES(ACC_T) < 8
#define CLEAR_FILL(r) \
  for (int k_ = 0; k_ < 8 - REG_BYTES(ACC_T); ++k_) (r).fill[k_] = 0
#else
#define CLEAR_FILL(r) (void)0
#endif

#define IS_NAN(x) ((x) != (x))

inline Item identity(void) {
  Item r;
  CLEAR_FILL(r);
#if defined(OP_SUM)
  r.v = (ACC)0;
#elif defined(OP_PROD)
  r.v = (ACC)1;
#elif defined(OP_LOGADDEXP)
  r.v = (ACC)(-INFINITY);
#else
  r.v = (ACC)0;
  r.i = -1;
#endif
  return r;
}

#ifdef OP_LOGADDEXP
// log(exp(x) + exp(y)), with CPU torch's handling of infinities and NaN.
inline ACC log_add_exp(ACC x, ACC y) {
  const ACC lo = IS_NAN(y) ? y : fmin(x, y);
  const ACC hi = IS_NAN(y) ? y : fmax(x, y);
  if (IS_NAN(x)) return x;
  if (lo != hi || OCL_ISFINITE(lo)) return log1p(exp(lo - hi)) + hi;
  return x;  // both the same infinity
}
#endif

#ifdef WITH_INDEX
// Whether b is selected over a.
inline bool better(Item b, Item a) {
  if (a.i < 0) return true;
  if (b.i < 0) return false;
  const bool bn = IS_NAN(b.v), an = IS_NAN(a.v);
  if (bn || an) return bn && (!an || b.i > a.i);
#ifdef OP_MAX
  return b.v > a.v || (b.v == a.v && b.i > a.i);
#else
  return b.v < a.v || (b.v == a.v && b.i > a.i);
#endif
}
#endif

inline Item combine(Item a, Item b) {
#if defined(OP_SUM)
  a.v = a.v + b.v;
  return a;
#elif defined(OP_PROD)
  a.v = a.v * b.v;
  return a;
#elif defined(OP_LOGADDEXP)
  a.v = log_add_exp(a.v, b.v);
  return a;
#else
  return better(b, a) ? b : a;
#endif
}

inline Item load_item(IN_PTR in, ulong k, long pos) {
  Item r;
  CLEAR_FILL(r);
  r.v = (ACC)LOAD(T, in, k);
#ifdef WITH_INDEX
  r.i = pos;
#endif
  return r;
}

// Every kernel first moves its pointers to their offsets, so indices below start at 0.
#ifdef WITH_INDEX
#define LOAD_TOTAL(k) load_total(tot, tot_idx, k)
inline Item load_total(TOT_PTR tot, __global const long* tot_idx, ulong k) {
  Item r;
  CLEAR_FILL(r);
  r.v = LOAD(ACC_T, tot, k);
  r.i = tot_idx[k];
  return r;
}
#define STORE_TOTAL(k, it)        \
  do {                            \
    STORE(ACC_T, tot, k, (it).v); \
    tot_idx[k] = (it).i;          \
  } while (0)
#define STORE_OUT(k, it)                   \
  do {                                     \
    STORE(T, out, k, CONVERT(T, (it).v));  \
    out_idx[k] = (it).i;                   \
  } while (0)
#define IDX_PARAMS , __global long *out_idx, ulong idx_off
#define TOT_IDX_PARAMS , __global long *tot_idx, ulong tot_idx_off
#define MOVE_IDX out_idx += idx_off
#define MOVE_TOT_IDX tot_idx += tot_idx_off
#else
#define LOAD_TOTAL(k) load_total(tot, k)
inline Item load_total(TOT_PTR tot, ulong k) {
  Item r;
  r.v = LOAD(ACC_T, tot, k);
  return r;
}
#define STORE_TOTAL(k, it) STORE(ACC_T, tot, k, (it).v)
#define STORE_OUT(k, it) STORE(T, out, k, CONVERT(T, (it).v))
#define IDX_PARAMS
#define TOT_IDX_PARAMS
#define MOVE_IDX
#define MOVE_TOT_IDX
#endif

// ---- sequential geometry ----

__kernel void reduce_seq(ulong outer, ulong n, ulong inner, ulong chunk, IN_PTR in, ulong in_off,
                         TOT_PTR tot, ulong tot_off TOT_IDX_PARAMS) {
  in += in_off;
  tot += tot_off;
  MOVE_TOT_IDX;
  const ulong C = (n + chunk - 1) / chunk;
  const ulong gid = get_global_id(0);
  if (gid >= outer * C * inner) return;
  const ulong o = gid / (C * inner);
  const ulong rest = gid - o * C * inner;
  const ulong c = rest / inner;
  const ulong i = rest - c * inner;
  const ulong end = min(n, (c + 1) * chunk);
  Item acc = identity();
  for (ulong j = c * chunk; j < end; ++j)
    acc = combine(acc, load_item(in, (o * n + j) * inner + i, (long)j));
  STORE_TOTAL(gid, acc);
}

__kernel void scan_totals(ulong outer, ulong C, ulong inner, TOT_PTR tot,
                          ulong tot_off TOT_IDX_PARAMS) {
  tot += tot_off;
  MOVE_TOT_IDX;
  const ulong gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const ulong o = gid / inner;
  const ulong i = gid - o * inner;
  Item acc = identity();
  for (ulong c = 0; c < C; ++c) {
    const ulong k = (o * C + c) * inner + i;
    acc = combine(acc, LOAD_TOTAL(k));
    STORE_TOTAL(k, acc);
  }
}

__kernel void scan_seq(ulong outer, ulong n, ulong inner, ulong chunk, IN_PTR in, ulong in_off,
                       OUT_PTR out, ulong out_off IDX_PARAMS, TOT_PTR tot,
                       ulong tot_off TOT_IDX_PARAMS, int use_carry) {
  in += in_off;
  out += out_off;
  MOVE_IDX;
  tot += tot_off;
  MOVE_TOT_IDX;
  const ulong C = (n + chunk - 1) / chunk;
  const ulong gid = get_global_id(0);
  if (gid >= outer * C * inner) return;
  const ulong o = gid / (C * inner);
  const ulong rest = gid - o * C * inner;
  const ulong c = rest / inner;
  const ulong i = rest - c * inner;
  const ulong end = min(n, (c + 1) * chunk);
  Item acc = identity();
  if (use_carry && c > 0) acc = LOAD_TOTAL(gid - inner);
  for (ulong j = c * chunk; j < end; ++j) {
    const ulong k = (o * n + j) * inner + i;
    acc = combine(acc, load_item(in, k, (long)j));
    STORE_OUT(k, acc);
  }
}

// ---- tile geometry (inner == 1) ----

__kernel void reduce_tile(ulong rows, ulong n, ulong chunk, IN_PTR in, ulong in_off, TOT_PTR tot,
                          ulong tot_off TOT_IDX_PARAMS) {
  __local Item part[LWS];
  in += in_off;
  tot += tot_off;
  MOVE_TOT_IDX;
  const ulong C = (n + chunk - 1) / chunk;
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const ulong row = g / C;
  const ulong c = g - row * C;
  const ulong end = min(n, (c + 1) * chunk);
  Item acc = identity();
  for (ulong j = c * chunk + lid; j < end; j += LWS)
    acc = combine(acc, load_item(in, row * n + j, (long)j));
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) part[lid] = combine(part[lid], part[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) STORE_TOTAL(g, part[0]);
}

__kernel void scan_tile(ulong rows, ulong n, ulong chunk, IN_PTR in, ulong in_off, OUT_PTR out,
                        ulong out_off IDX_PARAMS, TOT_PTR tot, ulong tot_off TOT_IDX_PARAMS,
                        int use_carry) {
  __local Item vals[TILE];
  __local Item part[LWS];
  in += in_off;
  out += out_off;
  MOVE_IDX;
  tot += tot_off;
  MOVE_TOT_IDX;
  const ulong C = (n + chunk - 1) / chunk;
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const ulong row = g / C;
  const ulong c = g - row * C;
  const ulong end = min(n, (c + 1) * chunk);
  Item carry = identity();
  if (use_carry && c > 0) carry = LOAD_TOTAL(g - 1);
  for (ulong base = c * chunk; base < end; base += TILE) {
    // Load the tile, coalesced; positions past the end hold the identity.
    for (uint e = 0; e < E; ++e) {
      const uint k = e * LWS + lid;
      const ulong j = base + k;
      vals[k] = j < end ? load_item(in, row * n + j, (long)j) : identity();
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Each work-item scans its E consecutive elements.
    Item s = identity();
    for (uint e = 0; e < E; ++e) {
      const uint k = lid * E + e;
      s = combine(s, vals[k]);
      vals[k] = s;
    }
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Inclusive scan of the work-items' totals.
    for (uint off = 1; off < LWS; off <<= 1) {
      const Item t = lid >= off ? part[lid - off] : identity();
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid >= off) part[lid] = combine(t, part[lid]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const Item pre = lid > 0 ? combine(carry, part[lid - 1]) : carry;
    for (uint e = 0; e < E; ++e) {
      const uint k = lid * E + e;
      vals[k] = combine(pre, vals[k]);
    }
    carry = combine(carry, part[LWS - 1]);
    barrier(CLK_LOCAL_MEM_FENCE);
    // Store, coalesced.
    for (uint e = 0; e < E; ++e) {
      const uint k = e * LWS + lid;
      const ulong j = base + k;
      if (j < end) STORE_OUT(row * n + j, vals[k]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // the next tile overwrites vals[] and part[]
  }
}
