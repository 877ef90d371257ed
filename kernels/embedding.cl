// embedding_dense_backward (csrc/ops/Embedding.cpp): grad_weight[v, :] is the sum of grad[j, :]
// over the positions j with indices[j] == v, in ascending j as the CPU adds them (each term times
// 1 / count(v) with scale_grad_by_freq), and zero for v == padding_idx or a v no index names.
// Deterministic, without atomics: the pairs (indices[j], j) are sorted stably by index (an LSD
// radix sort, one bit per pass), each row's run of positions is found, and one work-item per
// output element adds its run in order.
//
//   embedding_keys:  keys[j] = indices[j], or num_weights (sorted last, ignored) for padding_idx
//                    and indices outside [0, num_weights) (the CPU ignores those too); vals[j] = j
//   radix_count:     zeros[g] = how many keys of group g have bit `bit` clear
//   radix_split:     the stable split by that bit (keys with the bit clear first), ping-pong
//                    buffers; group g owns [g * chunk, min(n, (g + 1) * chunk)), global = G * LWS
//   embedding_runs:  start[v], end[v] = the run of row v in the sorted keys (both zeroed before)
//   embedding_sum:   out[v, d] = sum over k in [start[v], end[v]) of grad[vals[k], d] (* scale)
// And embedding_renorm_ (nn.Embedding's max_norm), at the end of this file.
//
// Every buffer argument is followed by its offset in elements (ulong).
// Build options: -DIDX_T=<long|int> (embedding_keys), -DLWS=<power of two> (radix_*),
// -DT=<float tag> (embedding_sum; accumulated in REG_TYPE(T)).

#if defined(IDX_T) && !defined(RENORM)
__kernel void embedding_keys(ulong n, __global const IDX_T* idx, ulong idx_off, long num_weights,
                             long padding_idx, __global uint* keys, ulong keys_off,
                             __global uint* vals, ulong vals_off) {
  const ulong j = get_global_id(0);
  if (j >= n) return;
  keys += keys_off;
  vals += vals_off;
  const long v = (long)idx[idx_off + j];
  keys[j] = (v < 0 || v >= num_weights || v == padding_idx) ? (uint)num_weights : (uint)v;
  vals[j] = (uint)j;
}
#endif

#if defined(LWS) && !defined(RENORM)
__kernel void radix_count(ulong n, ulong chunk, __global const uint* keys, ulong keys_off,
                          uint bit, __global uint* zeros, ulong zeros_off) {
  keys += keys_off;
  zeros += zeros_off;
  __local uint partial[LWS];
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  const ulong start = g * chunk;
  const ulong end = min(n, start + chunk);
  uint c = 0;
  for (ulong i = start + lid; i < end; i += LWS) c += ((keys[i] >> bit) & 1u) ? 0u : 1u;
  partial[lid] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) zeros[g] = partial[0];
}

__kernel void radix_split(ulong n, ulong chunk, uint groups, __global const uint* zeros,
                          ulong zeros_off, uint bit, __global const uint* keys_in, ulong ki_off,
                          __global const uint* vals_in, ulong vi_off, __global uint* keys_out,
                          ulong ko_off, __global uint* vals_out, ulong vo_off) {
  zeros += zeros_off;
  keys_in += ki_off;
  vals_in += vi_off;
  keys_out += ko_off;
  vals_out += vo_off;
  __local uint scan[2][LWS];
  __local uint before[LWS], total[LWS];
  const uint g = (uint)get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  // Zeros in the groups before this one, and in all groups.
  uint b = 0, t = 0;
  for (uint h = lid; h < groups; h += LWS) {
    const uint z = zeros[h];
    t += z;
    if (h < g) b += z;
  }
  before[lid] = b;
  total[lid] = t;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s) {
      before[lid] += before[lid + s];
      total[lid] += total[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ulong start = (ulong)g * chunk;
  const ulong end = min(n, start + chunk);
  ulong zero_pos = before[0];                            // next slot of a clear key
  ulong one_pos = (ulong)total[0] + (start - before[0]);  // next slot of a set key
  barrier(CLK_LOCAL_MEM_FENCE);
  for (ulong base = start; base < end; base += LWS) {
    const ulong i = base + lid;
    const bool live = i < end;
    const uint key = live ? keys_in[i] : 0u;
    const uint f = (live && !((key >> bit) & 1u)) ? 1u : 0u;
    int cur = 0;
    scan[0][lid] = f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < LWS; s <<= 1) {
      const uint v = scan[cur][lid] + (lid >= s ? scan[cur][lid - s] : 0u);
      scan[1 - cur][lid] = v;
      cur = 1 - cur;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const uint zeros_upto = scan[cur][lid];  // clear keys in this tile up to and including lid
    if (live) {
      const ulong pos = f ? zero_pos + zeros_upto - 1 : one_pos + (lid + 1 - zeros_upto) - 1;
      keys_out[pos] = key;
      vals_out[pos] = vals_in[i];
    }
    const ulong tile = min((ulong)LWS, end - base);
    const uint tile_zeros = scan[cur][LWS - 1];
    zero_pos += tile_zeros;
    one_pos += tile - tile_zeros;
    barrier(CLK_LOCAL_MEM_FENCE);  // the next tile overwrites scan[]
  }
}

__kernel void embedding_runs(ulong n, uint num_weights, __global const uint* keys,
                             ulong keys_off, __global uint* start, ulong start_off,
                             __global uint* end, ulong end_off) {
  const ulong k = get_global_id(0);
  if (k >= n) return;
  keys += keys_off;
  start += start_off;
  end += end_off;
  const uint key = keys[k];
  if (key >= num_weights) return;
  if (k == 0 || keys[k - 1] != key) start[key] = (uint)k;
  if (k + 1 == n || keys[k + 1] != key) end[key] = (uint)(k + 1);
}
#endif

#if defined(T) && !defined(RENORM)
__kernel void embedding_sum(ulong total, ulong dim, __global const uint* start, ulong start_off,
                            __global const uint* end, ulong end_off, __global const uint* vals,
                            ulong vals_off, __global const STORE_TYPE(T)* grad, ulong grad_off,
                            __global STORE_TYPE(T)* out, ulong out_off, int scale_by_freq) {
  const ulong g = get_global_id(0);
  if (g >= total) return;
  start += start_off;
  end += end_off;
  vals += vals_off;
  const ulong v = g / dim;
  const ulong d = g - v * dim;
  const uint s = start[v], e = end[v];
  REG_TYPE(T) acc = 0;
  if (scale_by_freq && e > s) {
    const REG_TYPE(T) scale = (REG_TYPE(T))1 / (REG_TYPE(T))(e - s);
    for (uint k = s; k < e; ++k) acc += scale * LOAD(T, grad, grad_off + (ulong)vals[k] * dim + d);
  } else {
    for (uint k = s; k < e; ++k) acc += LOAD(T, grad, grad_off + (ulong)vals[k] * dim + d);
  }
  STORE(T, out, out_off + g, acc);
}
#endif

// ---- embedding_renorm_ ----
// weight[v, :] *= max_norm / (norm + 1e-7) for every row v that the indices name and whose
// p-norm exceeds max_norm, each row once: work-group g takes index g, and the first group to
// claim row v (claimed[v], zeroed before, 0 -> 1) renormalises it; an index outside
// [0, num_weights) records err_code. Build options: -DRENORM -DT=<float tag> -DIDX_T=<long|int>
// -DLWS=<power of two>. p_kind: 1 (p = 1), 2 (p = 2), 3 (p = inf), 4 (p = 0: the count of
// non-zero elements), 0 (any other p, through pow). Global = n * LWS, local = LWS.
#ifdef RENORM
__kernel void embedding_renorm(ulong n, __global const IDX_T* idx, ulong idx_off,
                               long num_weights, __global int* claimed, ulong claimed_off,
                               __global STORE_TYPE(T)* w, ulong w_off, long row_stride,
                               long col_stride, ulong dim, REG_TYPE(T) max_norm,
                               REG_TYPE(T) norm_type, int p_kind, __global int* err,
                               int err_code) {
  __local REG_TYPE(T) partial[LWS];
  __local int mine;
  const ulong g = get_group_id(0);
  const uint lid = (uint)get_local_id(0);
  if (g >= n) return;  // uniform: whole groups only
  long v = 0;
  if (lid == 0) {
    v = (long)idx[idx_off + g];
    if (v < 0 || v >= num_weights) {
      atomic_cmpxchg(err, 0, err_code);
      mine = 0;
    } else {
      mine = atomic_cmpxchg(claimed + claimed_off + v, 0, 1) == 0;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!mine) return;  // uniform
  v = (long)idx[idx_off + g];
  const ulong row = w_off + (ulong)(v * row_stride);
  REG_TYPE(T) acc = 0;
  for (ulong d = lid; d < dim; d += LWS) {
    const REG_TYPE(T) a = fabs(LOAD(T, w, row + (ulong)((long)d * col_stride)));
    if (p_kind == 1) acc += a;
    else if (p_kind == 2) acc += a * a;
    else if (p_kind == 3) acc = fmax(acc, a);
    else if (p_kind == 4) acc += a != 0 ? 1 : 0;
    else acc += pow(a, norm_type);
  }
  partial[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = LWS / 2; s > 0; s >>= 1) {
    if (lid < s)
      partial[lid] = p_kind == 3 ? fmax(partial[lid], partial[lid + s])
                                 : partial[lid] + partial[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  REG_TYPE(T) norm = partial[0];
  if (p_kind == 2) norm = sqrt(norm);
  else if (p_kind == 0) norm = pow(norm, (REG_TYPE(T))1 / norm_type);
  if (!(norm > max_norm)) return;
  const REG_TYPE(T) scale = max_norm / (norm + (REG_TYPE(T))1e-7);
  for (ulong d = lid; d < dim; d += LWS) {
    const ulong at = row + (ulong)((long)d * col_stride);
    STORE(T, w, at, LOAD(T, w, at) * scale);
  }
}
#endif
