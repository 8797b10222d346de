#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12 packages. Idempotent:
# a second run only checks that the packages are present.
set -euo pipefail
pkgs=(cmake ninja-build g++ antlr4 default-jre-headless libantlr4-runtime-dev
      llvm-19-dev llvm-19-tools libprotobuf-dev protobuf-compiler libfmt-dev
      libgtest-dev libzstd-dev zlib1g-dev python3
      libopenmpi-dev openmpi-bin                       # sweeps across machines (docs/simulation.md)
      clang-19 libclang-rt-19-dev libfuzzer-19-dev)   # the sanitizer and fuzzer builds (docs/testing.md)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
