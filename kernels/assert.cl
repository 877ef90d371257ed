// assert_nonzero: torch._assert_async on the device. Records err_code in *err (if it is still 0)
// when the one element x[x_off] is zero; the host raises the error at its next wait
// (runtime/DeviceError.h), so the op itself does not wait. NaN is nonzero, as on the CPU.
//   Launch: global = { 1 }, local = { 1 }.
// Build options: -DT=<tag> (any tag of common.clh).

__kernel void assert_nonzero(__global const STORE_TYPE(T)* x, ulong x_off, __global int* err,
                             int err_code) {
  if (LOAD(T, x, x_off) == 0) atomic_cmpxchg(err, 0, err_code);
}
