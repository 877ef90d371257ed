"""List the OpenCL platforms and devices that pyopencl's ICD loader sees.

    python ci/opencl_platforms.py                     # print them
    python ci/opencl_platforms.py --require Oclgrind  # and fail unless one matches
    python ci/opencl_platforms.py --require-any       # and fail unless there is any device

--require takes a case-insensitive substring of "<platform name> <device name>", the same
matching TORCH_OCL_DEVICES uses, so it checks that a TORCH_OCL_DEVICES value selects something.
"""

import argparse
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--require", metavar="SUBSTRING", help="fail unless a device matches")
    parser.add_argument("--require-any", action="store_true", help="fail unless there is a device")
    args = parser.parse_args()

    try:
        import pyopencl as cl
    except ImportError:
        print("pyopencl is not installed (pip install 'pyopencl[pocl]')", file=sys.stderr)
        return 1

    try:
        platforms = cl.get_platforms()
    except cl.Error as exc:
        print(f"no OpenCL platform found: {exc}", file=sys.stderr)
        platforms = []

    matched = 0
    for platform in platforms:
        print(f"platform {platform.name!r} ({platform.version})")
        for device in platform.get_devices():
            kinds = [
                n for n in ("GPU", "ACCELERATOR", "CPU") if device.type & getattr(cl.device_type, n)
            ]
            kind = "|".join(kinds) + f" 0x{device.type:x}"
            label = f"{platform.name} {device.name}"
            hit = bool(args.require) and args.require.lower() in label.lower()
            matched += hit
            mark = "  <- matches" if hit else ""
            print(f"    device {device.name!r} [{kind}] {device.opencl_c_version}{mark}")

    if args.require_any and not any(p.get_devices() for p in platforms):
        print("no OpenCL device found", file=sys.stderr)
        return 1
    if args.require and not matched:
        print(f"no OpenCL device matches {args.require!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
