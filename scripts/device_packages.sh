#!/usr/bin/env bash
# The package step of scripts/device_check.sh, run HERE (a Debian 12 machine with package
# access): downloads the Debian 12 .debs that a GPU machine without package access needs
# to build and run lrbench — HDF5, Open MPI, toml++, CLI11, nlohmann-json, fmt,
# Boost headers, GoogleTest (with its sources, for a pre-C++11-ABI LibTorch) and their
# runtime libraries — into $LRB_DEVICE_DEBS (build/device-debs/, ignored by git), with a
# SHA256SUMS file that device_check.sh verifies before unpacking. Idempotent: downloads
# only what is missing. Fails when the folder passes 60 MiB.
#
# Not included (the GPU machine brings them): the C library, libstdc++ and the compilers,
# CMake, Ninja, Python with a CUDA PyTorch (its LibTorch), the CUDA toolkit and driver.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${LRB_DEVICE_DEBS:-build/device-debs}
limit=$((60 * 1024 * 1024))

packages=(
  # headers and link-time files
  libhdf5-dev libaec-dev libopenmpi-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libfmt-dev libboost1.74-dev libgtest-dev libgmock-dev googletest libssl-dev zlib1g-dev
  # HDF5's runtime libraries (libcurl for its read-only S3 driver, and what curl needs)
  libhdf5-103-1 libsz2 libaec0 libcurl4 libnghttp2-14 libpsl5 librtmp1 libssh2-1 libbrotli1
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libkeyutils1 libldap-2.5-0 libsasl2-2
  libsasl2-modules-db libdb5.3 libidn2-0 libunistring2 libgnutls30 libhogweed6 libnettle8 libgmp10
  libp11-kit0 libtasn1-6 libffi8 libssl3 libzstd1
  # Open MPI 4.1 (mpirun for the two-GPU run) and its runtime libraries
  libopenmpi3 openmpi-bin openmpi-common libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1
  libhwloc15 libibverbs1 libnl-3-200 libnl-route-3-200 libpmix2 libmunge2 libpsm-infinipath1
  libpsm2-2 librdmacm1 libucx0 libnuma1 libatomic1 libudev1
  # the compiled C++ libraries (a C++11-ABI LibTorch links them as they are)
  libfmt9 libtomlplusplus3
)

mkdir -p "$dest"
cd "$dest"
missing=()
for p in "${packages[@]}"; do
  compgen -G "${p}_*_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "device_packages: downloading ${#missing[@]} package(s) into $dest"
  if ! apt-get download -q "${missing[@]}" >/dev/null 2>download.log; then
    # The package lists may be missing or stale on a fresh machine: refresh once, retry.
    apt-get update -qq
    apt-get download -q "${missing[@]}" >/dev/null 2>download.log || {
      echo "device_packages: apt-get download failed (see $dest/download.log):" >&2
      tail -5 download.log >&2
      exit 1
    }
  fi
fi
# Exactly the packages listed (an older version left by an earlier list goes).
for f in *.deb; do
  name=${f%%_*}
  keep=0
  for p in "${packages[@]}"; do [ "$p" = "$name" ] && keep=1; done
  [ "$keep" = 1 ] || { echo "device_packages: removing $f (no longer listed)"; rm -f "$f"; }
done
sha256sum -- *.deb >SHA256SUMS
bytes=$(cat -- *.deb | wc -c)
awk -v n="$(ls -- *.deb | wc -l)" -v b="$bytes" -v d="$PWD" 'BEGIN { printf "device_packages: %d packages, %.1f MiB in %s\n", n, b / 1048576, d }'
if [ "$bytes" -gt "$limit" ]; then
  echo "device_packages: the packages take more than 60 MiB" >&2
  exit 1
fi
