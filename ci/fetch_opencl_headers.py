"""Download the Khronos OpenCL C headers (CL/*.h) from a KhronosGroup/OpenCL-Headers release.

    python ci/fetch_opencl_headers.py [DEST]     DEST/CL/cl.h ...; default: $OPENCL_HEADERS_DIR

For systems without a package that has them: Windows (cibuildwheel's before-all, where bash may
not be Git's), and as the fallback of ci/install-opencl-headers.sh. CMakeLists.txt finds the headers
through OPENCL_HEADERS_DIR. Only headers: torch-ocl loads an OpenCL ICD loader at run time.

The archive is checked against a pinned SHA-256 (SHA256 below) before anything is extracted: a
download that differs fails. OPENCL_HEADERS_TAG picks another release, which then needs
OPENCL_HEADERS_SHA256 (the archive's SHA-256) as well; OPENCL_HEADERS_URL another archive of the
same layout (a mirror; the pinned hash still applies). Standard library only (Python 3.6+: it also
runs in manylinux containers).
"""

import hashlib
import io
import os
import pathlib
import sys
import tarfile
import urllib.request

TAG = os.environ.get("OPENCL_HEADERS_TAG", "v2024.10.24")
URL = "https://github.com/KhronosGroup/OpenCL-Headers/archive/refs/tags/{}.tar.gz"
# SHA-256 of URL.format(tag), per release tag.
SHA256 = {
    "v2024.10.24": "159f2a550592bae49859fee83d372acd152328fdf95c0dcd8b9409f8fad5db93",
}


def main() -> int:
    dest = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPENCL_HEADERS_DIR", "")
    if not dest or dest in ("-h", "--help"):
        print(__doc__)
        return 0 if dest else 2
    dest_dir = pathlib.Path(dest)
    if (dest_dir / "CL" / "cl.h").is_file():
        print(f"fetch_opencl_headers: {dest_dir} already holds CL/cl.h")
        return 0

    want = os.environ.get("OPENCL_HEADERS_SHA256", "").strip().lower() or SHA256.get(TAG, "")
    if not want:
        print(
            f"fetch_opencl_headers: no SHA-256 pinned for {TAG}: set OPENCL_HEADERS_SHA256",
            file=sys.stderr,
        )
        return 1
    url = os.environ.get("OPENCL_HEADERS_URL") or URL.format(TAG)
    print("fetch_opencl_headers: {} -> {}".format(url, dest_dir / "CL"))
    with urllib.request.urlopen(url, timeout=60) as response:
        archive = response.read()
    got = hashlib.sha256(archive).hexdigest()
    if got != want:
        print(
            f"fetch_opencl_headers: {url}: sha256 {got}, expected {want}: not extracted",
            file=sys.stderr,
        )
        return 1

    count = 0
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar.getmembers():
            parts = pathlib.PurePosixPath(member.name).parts
            # OpenCL-Headers-<version>/CL/<header>.h
            if len(parts) != 3 or parts[1] != "CL" or not member.isfile():
                continue
            if not parts[2].endswith(".h"):
                continue
            target = dest_dir / "CL" / parts[2]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
            count += 1
    if not (dest_dir / "CL" / "cl.h").is_file():
        print("fetch_opencl_headers: the archive had no CL/cl.h", file=sys.stderr)
        return 1
    print(f"fetch_opencl_headers: {count} headers ({TAG}, sha256 {got})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
