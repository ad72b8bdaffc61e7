#!/usr/bin/env bash
# The device round's bundle: an sm_90-only build of the library, its CUDA module and the
# named test programs, packed by this workplace's devkit tool into .devkit (git-ignored)
# and compressed so that it and the tracked tree fit the `run` tool's 64 MiB carry.
#
#   scripts/gpu_devkit.sh [--build DIR] [--cuda-flags FLAGS] [PROGRAM...]
#
# DIR: the build directory (default build-90), configured with POLYATTN_CUDA_ARCHS=90 and
# CMAKE_CUDA_FLAGS=FLAGS (e.g. -DPA_CUDA_HOPPER_QS=1 with bench/gpu/s52_qs.patch applied, for
# the fifty-second session's split-Q variants; a directory configured before keeps its flags
# unless this names them).
# PROGRAMs: targets whose executables go in (default test_forward test_cuda).
# The module is xz-compressed (about 35 MB to 15 MB) and the devkit's largest libraries
# gzip-compressed; bench/gpu/lib.sh's pa_devkit_unpack (which pa_gpu_start calls) undoes
# both on the device. Takes ~7 minutes on two cores, most of it fwd_hopper.cu.
# DEVKIT names the devkit tool (default ../shared/tools/devkit).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=build-90
flags=
progs=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --cuda-flags) flags=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) progs+=("$1"); shift ;;
  esac
done
[ ${#progs[@]} -gt 0 ] || progs=(test_forward test_cuda)
devkit=${DEVKIT:-../shared/tools/devkit}
[ -x "$devkit" ] || { echo "gpu_devkit: no devkit tool at $devkit (set DEVKIT)" >&2; exit 1; }

cfg=(-DPOLYATTN_CUDA_ARCHS=90 -DCMAKE_BUILD_TYPE=Release)
[ -z "$flags" ] || cfg+=("-DCMAKE_CUDA_FLAGS=$flags")
# a directory configured before keeps its settings; configuring it again finds what was
# installed since (Criterion)
[ -f "$build/CMakeCache.txt" ] && [ -z "$flags" ] && cfg=()
cmake -B "$build" "${cfg[@]}" >/dev/null
# a program CMake did not configure (the test suites need Criterion) stops the script here,
# not after the module's minutes of compiling
targets=$(cmake --build "$build" --target help)
for p in "${progs[@]}"; do
  grep -Eq "^(\.\.\. )?$p(:| |$)" <<<"$targets" || {
    echo "gpu_devkit: $build has no target $p (test programs need libcriterion-dev;" \
      "install it and rerun)" >&2
    exit 1
  }
done
cmake --build "$build" -j "$(nproc)" --target polyattn polyattn-cuda "${progs[@]}"

bins=()
for p in "${progs[@]}"; do bins+=("$build/bin/$p"); done
"$devkit" "${bins[@]}" "$build/lib/libpolyattn.so" "$build/lib/libpolyattn-cuda.so"

python3 - .devkit/lib/libpolyattn-cuda.so <<'EOF'
import lzma, os, sys
path = sys.argv[1]
with open(path, 'rb') as f, lzma.open(path + '.xz', 'wb', preset=6) as g:
    g.write(f.read())
os.remove(path)
EOF
for f in .devkit/lib/libcrypto.so.* .devkit/lib/libgit2.so.*; do
  if [ -f "$f" ]; then gzip -f "$f"; fi
done

kit=$(du -sb .devkit | cut -f1)
tree=$(git ls-files -z | python3 -c 'import os, sys
print(sum(os.path.getsize(p) for p in sys.stdin.read().split("\0") if os.path.isfile(p)))')
echo "gpu_devkit: .devkit $((kit >> 20)) MiB + tracked tree $((tree >> 20)) MiB" \
  "(run's carry limit: 64 MiB)"
[ $((kit + tree)) -lt $((64 << 20)) ] || { echo "gpu_devkit: too large to carry" >&2; exit 1; }
