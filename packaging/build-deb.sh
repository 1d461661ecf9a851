#!/usr/bin/env bash
# Builds the Debian package: a Release build with the GUI of tessera, tessera-cli and
# tessera-runner, then `cpack -G DEB`. Prints the .deb's path and size.
# Usage: packaging/build-deb.sh [BUILD_DIR] [extra cmake args...]   (BUILD_DIR default: build-deb)
# Environment: TESSERA_JOBS (default: number of cores), TESSERA_BUILD_TYPE (default: Release).
# Needs the build dependencies (scripts/install-deps.sh) and dpkg-dev (dpkg-shlibdeps, for Depends).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-"$root/build-deb"}")
shift || true
jobs=${TESSERA_JOBS:-$(nproc)}
type=${TESSERA_BUILD_TYPE:-Release}

# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack installs the packaged targets without building
# everything else (tests, benchmarks).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DTESSERA_GUI=ON \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON "$@" >/dev/null
cmake --build "$build" -j "$jobs" --target tessera tessera-cli tessera-runner

out="$build/packages"
rm -f "$out"/tessera_*.deb
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
deb=$(ls "$out"/tessera_*.deb)
echo "package: $deb"
echo "size: $(du -h "$deb" | cut -f1) ($(stat -c %s "$deb") bytes)"
dpkg-deb --field "$deb" Depends | sed 's/^/depends: /'
