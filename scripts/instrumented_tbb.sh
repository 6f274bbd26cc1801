#!/usr/bin/env bash
# Prints the directory of a oneTBB built under ThreadSanitizer, building it into build-tsan/ the
# first time. Debian's libtbb12 is not instrumented, and ThreadSanitizer cannot see a task handed
# from one thread to another inside it: every task body and every result read after a join comes
# out as a race. The source is the upstream tarball of the installed libtbb-dev's version, from
# Debian's archive, checked against the SHA-256 that Debian's source package (onetbb_*.dsc) lists.
set -euo pipefail
cd "$(dirname "$0")/.."
mirror=${ROOFTUNE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
declare -A sha256=(
  [2021.8.0]=7e9111b8bb59c8800bf6d0b06afe7b0891937443d2dae1ee1101c8e2ede6a7ef  # Debian 12
)

version=$(dpkg-query -W -f='${Version}' libtbb-dev)
upstream=${version%%-*}
if [[ -z "${sha256[$upstream]:-}" ]]; then
  echo "instrumented_tbb: no checksum for oneTBB $upstream (libtbb-dev $version): add the" \
       "SHA-256 of onetbb_$upstream.orig.tar.xz from Debian's onetbb_$version.dsc here" >&2
  exit 1
fi
root=build-tsan/onetbb-$upstream
lib=$(find "$root/build" -name libtbb.so.12 -print -quit 2>/dev/null || true)
if [[ -n "$lib" ]]; then
  dirname "$(realpath "$lib")"
  exit 0
fi

mkdir -p "$root"
tarball="$root/onetbb_$upstream.orig.tar.xz"
echo "instrumented_tbb: fetching oneTBB $upstream's source from $mirror" >&2
curl -fsS -o "$tarball" "$mirror/pool/main/o/onetbb/onetbb_$upstream.orig.tar.xz"
if ! echo "${sha256[$upstream]}  $tarball" | sha256sum --check --status; then
  echo "instrumented_tbb: $tarball does not match Debian's SHA-256; removed" >&2
  rm -f "$tarball"
  exit 1
fi
tar -xf "$tarball" -C "$root"
echo "instrumented_tbb: building oneTBB $upstream under ThreadSanitizer" >&2
CC=clang CXX=clang++ cmake -S "$root/oneTBB-$upstream" -B "$root/build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF \
  -DTBB_STRICT=OFF -DTBBMALLOC_BUILD=OFF >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target tbb >/dev/null
lib=$(find "$root/build" -name libtbb.so.12 -print -quit)
dirname "$(realpath "$lib")"
