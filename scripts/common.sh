# Shared by serve.sh and test.sh: install what is missing, configure, build.
# Safe to run again: installs nothing that is present, rebuilds incrementally.
set -euo pipefail

CAPPLAN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CAPPLAN_BUILD="${CAPPLAN_BUILD:-$CAPPLAN_ROOT/build}"

# Debian 12 packages: toolchain, libraries, the end-to-end tests' peers, and
# rsvg-convert (librsvg2-bin), which renders the SVG plots in the CLI tests.
CAPPLAN_PACKAGES=(
  build-essential cmake pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libeigen3-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  python3 python3-grpcio python3-grpc-tools python3-protobuf python3-yaml grpc-proto prometheus
  librsvg2-bin
)

capplan_install_packages() {
  local missing=()
  for pkg in "${CAPPLAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  echo "capplan: installing ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

capplan_build() {
  cmake -S "$CAPPLAN_ROOT" -B "$CAPPLAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$CAPPLAN_BUILD" -j2 "$@"
}
