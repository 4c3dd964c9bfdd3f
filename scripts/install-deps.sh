#!/usr/bin/env bash
# Installs the Debian packages btsim needs to build (no argument), to build
# and test (`--test`: also Prometheus, for promtool and a real server,
# Chromium, to render the HTML report, and Slurm with munge, for a sweep on
# a real batch system), to build and run the example application (`--app`:
# also Node.js and npm), or to fuzz (`--fuzz`: also clang 14 and its
# libFuzzer). Quick and quiet when everything is
# already installed; uses apt-get (as root, or via sudo).
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libprotobuf-dev protobuf-compiler
  libgrpc++-dev protobuf-compiler-grpc
  libre2-dev libspdlog-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev prometheus-cpp-dev libmimalloc-dev zlib1g-dev
)
if [[ "${1:-}" == "--test" ]]; then
  packages+=(prometheus chromium slurm-wlm munge)
elif [[ "${1:-}" == "--fuzz" ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
elif [[ "${1:-}" == "--app" ]]; then
  # Only when missing: a Node.js installed another way (e.g. with its own
  # npm) must not be replaced.
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "btsim: installing missing packages: ${missing[*]}"
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "btsim: packages installed"
