#!/usr/bin/env bash
# Install the system packages needed to build torch-ocl from source: the Khronos OpenCL C headers
# (only headers: the library loads an OpenCL ICD loader at run time), and, only where missing, a C++
# compiler and Python's venv module.
#
#   ci/install-opencl-headers.sh           headers (+ g++ and python3-venv if missing)
#   ci/install-opencl-headers.sh --lint    the same, plus clang-format (for `nox -s lint`)
#
# Debian/Ubuntu: installs with apt-get (as root, or through sudo). Other systems: prints what to
# install and exits non-zero if something is missing. Nothing is installed when all is present.
# Headers elsewhere: set OPENCL_HEADERS_DIR to the directory holding CL/cl.h (CMakeLists.txt reads it).
set -euo pipefail

want_lint=0
for arg in "$@"; do
  case "$arg" in
    --lint) want_lint=1 ;;
    -h | --help)
      sed -n '2,11p' "$0"
      exit 0
      ;;
    *)
      echo "install-opencl-headers.sh: unknown argument '$arg'" >&2
      exit 2
      ;;
  esac
done

have_headers() {
  local dir
  for dir in ${OPENCL_HEADERS_DIR:+"$OPENCL_HEADERS_DIR"} /usr/include /usr/local/include; do
    [ -f "$dir/CL/cl.h" ] && return 0
  done
  return 1
}
have_cxx() { command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1; }
have_venv() { python3 -c 'import ensurepip, venv' >/dev/null 2>&1; }
have_clang_format() { [ -x /usr/bin/clang-format ] || command -v clang-format >/dev/null 2>&1; }

missing_apt=()
missing_desc=()
have_headers || {
  missing_apt+=(opencl-c-headers)
  missing_desc+=("OpenCL C headers (CL/cl.h)")
}
have_cxx || {
  missing_apt+=(g++)
  missing_desc+=("a C++20 compiler (g++ >= 10 or clang++)")
}
have_venv || {
  missing_apt+=(python3-venv)
  missing_desc+=("Python's venv/ensurepip module")
}
if [ "$want_lint" = 1 ]; then
  have_clang_format || {
    missing_apt+=(clang-format)
    missing_desc+=("clang-format")
  }
fi

if [ ${#missing_apt[@]} -eq 0 ]; then
  echo "install-opencl-headers: everything needed is present"
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "install-opencl-headers: need root (or sudo) to run: apt-get install ${missing_apt[*]}" >&2
      exit 1
    fi
  fi
  echo "install-opencl-headers: apt-get install ${missing_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing_apt[@]}"
  exit 0
fi

{
  echo "install-opencl-headers: missing:"
  printf '  - %s\n' "${missing_desc[@]}"
  echo "This script installs them only on Debian/Ubuntu (apt-get). Elsewhere, for example:"
  echo "  Fedora/RHEL:  dnf install opencl-headers gcc-c++ clang-tools-extra"
  echo "  Arch:         pacman -S opencl-headers gcc clang"
  echo "  macOS:        the OpenCL headers come with Xcode's command line tools (xcode-select --install)"
  echo "  Windows:      vcpkg install opencl  (or the Khronos OpenCL-SDK), with Visual Studio 2022"
  echo "Headers in another place: set OPENCL_HEADERS_DIR to the directory that holds CL/cl.h."
} >&2
exit 1
