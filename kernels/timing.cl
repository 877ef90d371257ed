// A command that does nothing, enqueued where a timing event is recorded (runtime/TimingMarker.h):
// in an in-order queue it runs after every earlier command, and unlike a marker its profiling
// timestamps are real on every implementation (Intel's CPU runtime reports 0 for markers).
__kernel void timing_marker(void) {}
