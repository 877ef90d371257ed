#!/usr/bin/env bash
# Install the system packages needed to build torch-ocl from source: the Khronos OpenCL C headers
# (only headers: the library loads an OpenCL ICD loader at run time), and, only where missing, a C++
# compiler and Python's venv module.
#
#   ci/install-opencl-headers.sh                 headers (+ g++ and python3-venv if missing)
#   ci/install-opencl-headers.sh --lint          the same, plus clang-format (for `nox -s lint`)
#   ci/install-opencl-headers.sh --headers-only  only the headers (cibuildwheel's before-all)
#
# Debian/Ubuntu: apt-get (opencl-c-headers). RHEL/AlmaLinux/Fedora, manylinux containers: dnf/yum
# (opencl-headers, from EPEL where the distribution lacks it). macOS: Homebrew (opencl-headers).
# Elsewhere, or when the package manager cannot provide them: the Khronos OpenCL-Headers release,
# fetched by ci/fetch_opencl_headers.py into $OPENCL_HEADERS_DIR (default /usr/local/include).
# Windows (Git Bash): that fetch, into $OPENCL_HEADERS_DIR, which must be set. Packages are
# installed as root, or through sudo. Nothing is installed when all is present. CMakeLists.txt
# finds headers in the usual prefixes and in $OPENCL_HEADERS_DIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
want_lint=0
headers_only=0
for arg in "$@"; do
  case "$arg" in
    --lint) want_lint=1 ;;
    --headers-only) headers_only=1 ;;
    -h | --help)
      sed -n '2,16p' "$0"
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
  for dir in ${OPENCL_HEADERS_DIR:+"$OPENCL_HEADERS_DIR"} /usr/include /usr/local/include \
    /opt/homebrew/include; do
    [ -f "$dir/CL/cl.h" ] && return 0
  done
  return 1
}
have_cxx() { command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1; }
have_venv() { python3 -c 'import ensurepip, venv' >/dev/null 2>&1; }
have_clang_format() { [ -x /usr/bin/clang-format ] || command -v clang-format >/dev/null 2>&1; }

# Run a command as root: directly, or through sudo.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-opencl-headers: need root (or sudo) to run: $*" >&2
    return 1
  fi
}

# The Khronos headers release, through ci/fetch_opencl_headers.py.
fetch_khronos() {
  local dest=${OPENCL_HEADERS_DIR:-/usr/local/include} py
  py=$(command -v python3 || command -v python || true)
  if [ -z "$py" ]; then
    echo "install-opencl-headers: no python to run ci/fetch_opencl_headers.py" >&2
    return 1
  fi
  if mkdir -p "$dest" 2>/dev/null && [ -w "$dest" ]; then
    "$py" "$here/fetch_opencl_headers.py" "$dest"
  else
    as_root "$py" "$here/fetch_opencl_headers.py" "$dest"
  fi
}

os=$(uname -s)
case "$os" in
  MINGW* | MSYS* | CYGWIN*)
    if have_headers; then
      echo "install-opencl-headers: OpenCL headers present"
      exit 0
    fi
    if [ -z "${OPENCL_HEADERS_DIR:-}" ]; then
      echo "install-opencl-headers: on Windows, set OPENCL_HEADERS_DIR (where CL/cl.h goes)" >&2
      exit 1
    fi
    fetch_khronos
    exit 0
    ;;
  Darwin)
    if have_headers; then
      echo "install-opencl-headers: OpenCL headers present"
      exit 0
    fi
    if command -v brew >/dev/null 2>&1 && brew install opencl-headers; then
      exit 0
    fi
    fetch_khronos
    exit 0
    ;;
esac

missing_apt=()
missing_rpm=()
missing_desc=()
have_headers || {
  missing_apt+=(opencl-c-headers)
  missing_rpm+=(opencl-headers)
  missing_desc+=("OpenCL C headers (CL/cl.h)")
}
if [ "$headers_only" = 0 ]; then
  have_cxx || {
    missing_apt+=(g++)
    missing_rpm+=(gcc-c++)
    missing_desc+=("a C++20 compiler (g++ >= 10 or clang++)")
  }
  have_venv || {
    missing_apt+=(python3-venv)
    missing_desc+=("Python's venv/ensurepip module")
  }
fi
if [ "$want_lint" = 1 ]; then
  have_clang_format || {
    missing_apt+=(clang-format)
    missing_rpm+=(clang-tools-extra)
    missing_desc+=("clang-format")
  }
fi

if [ ${#missing_desc[@]} -eq 0 ]; then
  echo "install-opencl-headers: everything needed is present"
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  echo "install-opencl-headers: apt-get install ${missing_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "${missing_apt[@]}"
  exit 0
fi

rpm_tool=$(command -v dnf || command -v yum || true)
if [ -n "$rpm_tool" ] && [ ${#missing_rpm[@]} -gt 0 ]; then
  echo "install-opencl-headers: $rpm_tool install ${missing_rpm[*]}"
  if ! as_root "$rpm_tool" install -y "${missing_rpm[@]}"; then
    # RHEL and AlmaLinux 8 (manylinux_2_28) have opencl-headers in EPEL only.
    echo "install-opencl-headers: retrying with EPEL"
    as_root "$rpm_tool" install -y epel-release || true
    as_root "$rpm_tool" install -y "${missing_rpm[@]}" || {
      have_headers || fetch_khronos
      have_headers || [ -f "${OPENCL_HEADERS_DIR:-/usr/local/include}/CL/cl.h" ]
    }
  fi
  exit 0
fi

if [ ${#missing_desc[@]} -eq 1 ] && ! have_headers; then
  # Only the headers are missing and there is no known package manager: fetch them.
  fetch_khronos && exit 0
fi

{
  echo "install-opencl-headers: missing:"
  printf '  - %s\n' "${missing_desc[@]}"
  echo "This script installs them with apt-get, dnf/yum or Homebrew. Elsewhere, for example:"
  echo "  Arch:         pacman -S opencl-headers gcc clang"
  echo "  Windows:      python ci/fetch_opencl_headers.py C:/opencl-headers, then set"
  echo "                OPENCL_HEADERS_DIR=C:/opencl-headers; Visual Studio 2022 for C++20"
  echo "Headers in another place: set OPENCL_HEADERS_DIR to the directory that holds CL/cl.h."
} >&2
exit 1
