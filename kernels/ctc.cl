// The CTC loss (Graves et al. 2006) forward and backward (csrc/ops/Ctc.cpp).
//
// log_probs lp[t, b, c] (strides lp_s0..2), targets of batch item b at tg[tg_off[b] + k * tg_s]
// (padded or concatenated: the host computes the per-item offsets), lengths in meta[b] (input
// length), meta[N + b] (target length), meta[2N + b] (target offset). The extended target l'
// has 2L + 1 symbols: blank at even s, target[(s - 1) / 2] at odd s.
//
//   ctc_alpha: one work-group per batch item b; the items share s in [0, 2 * S_max + 1) and walk
//              t in order (a global-memory barrier between time steps: every row t reads row
//              t - 1 written by other items). log_alpha [N, T_max, 2 * S_max + 1] is -inf outside
//              the item's t < T_b, s < 2 L_b + 1; nll[b] = -log(alpha[T_b - 1, 2L] +
//              alpha[T_b - 1, 2L - 1]); T_b == 0 gives nll 0 for L == 0, +inf otherwise.
//   ctc_beta:  the same backwards in t, into log_beta (same layout).
//   ctc_grad:  one work-group per (t, b): grad[t, b, c] = (exp(lp) - exp(lcab[c] + nll - lp)) *
//              grad_out[b], where lcab[c] = log of the sum over s with l'[s] == c of
//              alpha[t, s] * beta[t, s] (collected in the gradient's own row, first as -inf, by
//              item 0 in s order, as the CPU adds them); 0 for t >= T_b, and 0 for the whole item
//              when zero_infinity and nll[b] is +inf.
//
// Every buffer argument is followed by its offset in elements (ulong).
// Build options: -DT=<float tag> -DTG_T=<long|int> -DLWS=<power of two>.

#define NEG_INF (-INFINITY)

inline long ctc_symbol(__global const TG_T* tg, long off, long stride, long s, long blank) {
  return (s & 1) ? (long)tg[off + ((s - 1) >> 1) * stride] : blank;
}

// log(exp(a) + exp(b) + exp(c)) as the CPU computes it (max subtracted; all -inf gives -inf)
inline REG_TYPE(T) ctc_lse3(REG_TYPE(T) a, REG_TYPE(T) b, REG_TYPE(T) c) {
  REG_TYPE(T) m = fmax(a, fmax(b, c));
  if (m == NEG_INF) m = 0;
  return log(exp(a - m) + exp(b - m) + exp(c - m)) + m;
}

__kernel void ctc_alpha(ulong batch, ulong t_max, ulong width, __global const STORE_TYPE(T)* lp,
                        ulong lp_off, long lp_s0, long lp_s1, long lp_s2, __global const TG_T* tg,
                        ulong tg_off, long tg_s, __global const long* meta, ulong meta_off,
                        long blank, __global STORE_TYPE(T)* la, ulong la_off,
                        __global STORE_TYPE(T)* nll, ulong nll_off) {
  const ulong b = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (b >= batch) return;
  meta += meta_off;
  const long T_b = meta[b], L = meta[batch + b], off = meta[2 * batch + b];
  const long S = 2 * L + 1;
  lp += lp_off + b * lp_s1;
  tg += tg_off;
  la += la_off + b * t_max * width;
  // -inf outside the item's lattice
  for (ulong t = 0; t < t_max; ++t)
    for (ulong s = lid; s < width; s += LWS)
      if ((long)t >= T_b || (long)s >= S) STORE(T, la, t * width + s, NEG_INF);
  if (T_b > 0) {
    for (long s = lid; s < S; s += LWS) {
      REG_TYPE(T) v = NEG_INF;
      if (s == 0)
        v = LOAD(T, lp, blank * lp_s2);
      else if (s == 1)
        v = LOAD(T, lp, ctc_symbol(tg, off, tg_s, 1, blank) * lp_s2);
      STORE(T, la, s, v);
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long t = 1; t < T_b; ++t) {
    for (long s = lid; s < S; s += LWS) {
      const long c = ctc_symbol(tg, off, tg_s, s, blank);
      const ulong prev = (ulong)(t - 1) * width;
      const REG_TYPE(T) a1 = LOAD(T, la, prev + s);
      const REG_TYPE(T) a2 = s > 0 ? LOAD(T, la, prev + s - 1) : NEG_INF;
      const REG_TYPE(T) a3 = (s > 1 && ctc_symbol(tg, off, tg_s, s - 2, blank) != c)
                                 ? LOAD(T, la, prev + s - 2)
                                 : NEG_INF;
      STORE(T, la, (ulong)t * width + s, ctc_lse3(a1, a2, a3) + LOAD(T, lp, t * lp_s0 + c * lp_s2));
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0) {
    REG_TYPE(T) r;
    if (T_b == 0) {
      r = L == 0 ? 0 : INFINITY;
    } else {
      const ulong last = (ulong)(T_b - 1) * width;
      const REG_TYPE(T) l1 = LOAD(T, la, last + 2 * L);
      const REG_TYPE(T) l2 = L > 0 ? LOAD(T, la, last + 2 * L - 1) : NEG_INF;
      r = -ctc_lse3(l1, l2, NEG_INF);
    }
    STORE(T, nll, nll_off + b, r);
  }
}

__kernel void ctc_beta(ulong batch, ulong t_max, ulong width, __global const STORE_TYPE(T)* lp,
                       ulong lp_off, long lp_s0, long lp_s1, long lp_s2, __global const TG_T* tg,
                       ulong tg_off, long tg_s, __global const long* meta, ulong meta_off,
                       long blank, __global STORE_TYPE(T)* lb, ulong lb_off) {
  const ulong b = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (b >= batch) return;
  meta += meta_off;
  const long T_b = meta[b], L = meta[batch + b], off = meta[2 * batch + b];
  const long S = 2 * L + 1;
  lp += lp_off + b * lp_s1;
  tg += tg_off;
  lb += lb_off + b * t_max * width;
  if (T_b > 0) {
    const long t = T_b - 1;
    for (long s = lid; s < S; s += LWS) {
      REG_TYPE(T) v = NEG_INF;
      if (s == 2 * L)
        v = LOAD(T, lp, t * lp_s0 + blank * lp_s2);
      else if (s == 2 * L - 1)
        v = LOAD(T, lp, t * lp_s0 + ctc_symbol(tg, off, tg_s, s, blank) * lp_s2);
      STORE(T, lb, (ulong)t * width + s, v);
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long t = T_b - 2; t >= 0; --t) {
    for (long s = lid; s < S; s += LWS) {
      const long c = ctc_symbol(tg, off, tg_s, s, blank);
      const ulong next = (ulong)(t + 1) * width;
      const REG_TYPE(T) b1 = LOAD(T, lb, next + s);
      const REG_TYPE(T) b2 = s < 2 * L ? LOAD(T, lb, next + s + 1) : NEG_INF;
      const REG_TYPE(T) b3 = (s < 2 * L - 1 && ctc_symbol(tg, off, tg_s, s + 2, blank) != c)
                                 ? LOAD(T, lb, next + s + 2)
                                 : NEG_INF;
      STORE(T, lb, (ulong)t * width + s, ctc_lse3(b1, b2, b3) + LOAD(T, lp, t * lp_s0 + c * lp_s2));
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// global = (LWS, T_max, N) in groups of (LWS, 1, 1); grad is contiguous [T_max, N, C]
__kernel void ctc_grad(ulong batch, ulong t_max, ulong width, ulong num_labels,
                       __global const STORE_TYPE(T)* lp, ulong lp_off, long lp_s0, long lp_s1,
                       long lp_s2, __global const TG_T* tg, ulong tg_off, long tg_s,
                       __global const long* meta, ulong meta_off, long blank,
                       __global const STORE_TYPE(T)* la, ulong la_off,
                       __global const STORE_TYPE(T)* lb, ulong lb_off,
                       __global const STORE_TYPE(T)* nll, ulong nll_off,
                       __global const STORE_TYPE(T)* gout, ulong gout_off, long gout_s,
                       int zero_infinity, __global STORE_TYPE(T)* grad, ulong grad_off) {
  const ulong t = get_group_id(1);
  const ulong b = get_group_id(2);
  const uint lid = (uint)get_local_id(0);
  meta += meta_off;
  const long T_b = meta[b], L = meta[batch + b], off = meta[2 * batch + b];
  grad += grad_off + (t * batch + b) * num_labels;
  const REG_TYPE(T) nl = LOAD(T, nll, nll_off + b);
  if ((long)t >= T_b || (zero_infinity && nl == INFINITY)) {
    for (ulong c = lid; c < num_labels; c += LWS) STORE(T, grad, c, 0);
    return;  // uniform
  }
  lp += lp_off + b * lp_s1 + t * lp_s0;
  tg += tg_off;
  la += la_off + (b * t_max + t) * width;
  lb += lb_off + (b * t_max + t) * width;
  for (ulong c = lid; c < num_labels; c += LWS) STORE(T, grad, c, NEG_INF);
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) {
    for (long s = 0; s < 2 * L + 1; ++s) {
      const long c = ctc_symbol(tg, off, tg_s, s, blank);
      const REG_TYPE(T) ab = LOAD(T, la, s) + LOAD(T, lb, s);
      const REG_TYPE(T) cur = LOAD(T, grad, c);
      REG_TYPE(T) r;
      if (cur == NEG_INF) {
        r = ab;
      } else {
        const REG_TYPE(T) m = fmax(cur, ab);
        r = log(exp(cur - m) + exp(ab - m)) + m;
      }
      STORE(T, grad, c, r);
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  const REG_TYPE(T) g = LOAD(T, gout, gout_off + b * gout_s);
  for (ulong c = lid; c < num_labels; c += LWS) {
    const REG_TYPE(T) x = LOAD(T, lp, c * lp_s2);
    STORE(T, grad, c, (exp(x) - exp(LOAD(T, grad, c) + nl - x)) * g);
  }
}
