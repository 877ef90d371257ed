// GradScaler's scale update (torch._amp_update_scale_), one work-item:
//   found_inf != 0: scale *= backoff, tracker = 0
//   otherwise:      tracker + 1 == interval ? (scale *= growth if the result is finite;
//                   tracker = 0) : tracker += 1
// The products are computed in AMP_T (double where the device has it, as the CPU computes
// them) and rounded to float.
// Options: -DAMP_T=<double|float>.
// Arguments: scale (float), tracker (int), found_inf (float), each (buffer, element offset), then
//   AMP_T growth, AMP_T backoff, int interval. Launch: global = local = 1.

__kernel void amp_update_scale(__global float* scale, ulong scale_off, __global int* tracker,
                               ulong tracker_off, __global const float* found, ulong found_off,
                               AMP_T growth, AMP_T backoff, int interval) {
  const float s = scale[scale_off];
  if (found[found_off] != 0.0f) {
    scale[scale_off] = (float)((AMP_T)s * backoff);
    tracker[tracker_off] = 0;
    return;
  }
  const int successful = tracker[tracker_off] + 1;
  if (successful == interval) {
    const float grown = (float)((AMP_T)s * growth);
    if (OCL_ISFINITE(grown)) scale[scale_off] = grown;
    tracker[tracker_off] = 0;
  } else {
    tracker[tracker_off] = successful;
  }
}
