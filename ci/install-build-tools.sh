#!/usr/bin/env bash
# Install the system packages needed to build torch-ocl from source, only where missing: a C++20
# compiler and Python's venv module. No OpenCL headers or library are needed to build (the
# library declares the OpenCL API itself, csrc/runtime/OpenCL.h, and loads OpenCL at run time).
#
#   ci/install-build-tools.sh          a C++ compiler and python3-venv, if missing
#   ci/install-build-tools.sh --lint   the same, plus clang-format and the Khronos OpenCL headers
#                                      (for `nox -s lint`: ci/check_opencl_decls.py compares
#                                      csrc/runtime/OpenCL.h with them)
#
# Debian/Ubuntu: apt-get. RHEL/AlmaLinux/Fedora: dnf/yum. Elsewhere it prints what to install.
# Packages are installed as root, or through sudo. Nothing is installed when all is present.
set -euo pipefail

want_lint=0
for arg in "$@"; do
  case "$arg" in
    --lint) want_lint=1 ;;
    -h | --help)
      sed -n '2,12p' "$0"
      exit 0
      ;;
    *)
      echo "install-build-tools.sh: unknown argument '$arg'" >&2
      exit 2
      ;;
  esac
done

have_cxx() { command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1; }
have_venv() { python3 -c 'import ensurepip, venv' >/dev/null 2>&1; }
have_clang_format() { [ -x /usr/bin/clang-format ] || command -v clang-format >/dev/null 2>&1; }
have_headers() { [ -f /usr/include/CL/cl.h ] || [ -f /usr/local/include/CL/cl.h ]; }

# Run a command as root: directly, or through sudo.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-build-tools: need root (or sudo) to run: $*" >&2
    return 1
  fi
}

case "$(uname -s)" in
  MINGW* | MSYS* | CYGWIN* | Darwin)
    # Windows: Visual Studio 2022 (C++20); macOS: Xcode's command line tools. Nothing to fetch.
    have_cxx || echo "install-build-tools: install a C++20 compiler (Windows: Visual Studio" \
      "2022; macOS: xcode-select --install)" >&2
    exit 0
    ;;
esac

missing_apt=()
missing_rpm=()
missing_desc=()
have_cxx || {
  missing_apt+=(g++)
  missing_rpm+=(gcc-c++)
  missing_desc+=("a C++20 compiler (g++ >= 10 or clang++)")
}
have_venv || {
  missing_apt+=(python3-venv)
  missing_desc+=("Python's venv/ensurepip module")
}
if [ "$want_lint" = 1 ]; then
  have_clang_format || {
    missing_apt+=(clang-format)
    missing_rpm+=(clang-tools-extra)
    missing_desc+=("clang-format")
  }
  have_headers || {
    missing_apt+=(opencl-c-headers)
    missing_rpm+=(opencl-headers)
    missing_desc+=("the Khronos OpenCL headers (lint compares csrc/runtime/OpenCL.h with them)")
  }
fi

if [ ${#missing_desc[@]} -eq 0 ]; then
  echo "install-build-tools: everything needed is present"
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  echo "install-build-tools: apt-get install ${missing_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "${missing_apt[@]}"
  exit 0
fi

rpm_tool=$(command -v dnf || command -v yum || true)
if [ -n "$rpm_tool" ] && [ ${#missing_rpm[@]} -gt 0 ]; then
  echo "install-build-tools: $rpm_tool install ${missing_rpm[*]}"
  as_root "$rpm_tool" install -y "${missing_rpm[@]}"
  exit 0
fi

{
  echo "install-build-tools: missing:"
  printf '  - %s\n' "${missing_desc[@]}"
  echo "This script installs them with apt-get or dnf/yum. Elsewhere, for example:"
  echo "  Arch:         pacman -S gcc clang"
} >&2
exit 1
