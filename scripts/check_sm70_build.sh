#!/usr/bin/env bash
# Builds the CUDA module for Volta (sm_70) with CUDA 11.8 and checks the result.
#
#   bash scripts/check_sm70_build.sh
#
# CUDA 13 (the default toolkit, /usr/local/cuda) has no sm_70 target; CUDA 11.8
# has. On a Debian 12 machine, as root, this script:
#   1. adds bookworm's non-free component in its own apt source file
#      (/etc/apt/sources.list.d/nonfree.list) when no source offers it yet;
#   2. downloads (apt-get download, not install) the CUDA 11.8 packages and
#      unpacks what nvcc needs into a CUDA-style prefix (bin/, nvvm/, include/,
#      lib64/; default /opt/cuda-11.8), so no nvcc lands in /usr/bin and
#      /usr/local/cuda stays the default; installs g++-11 (nvcc 11.8's newest
#      supported host compiler; the default gcc stays as it is);
#   3. configures a build of the CUDA module only (tests and bench off) with
#      POLYATTN_CUDA_ARCHS="70;80" and builds the polyattn-cuda target;
#   4. checks with cuobjdump that the module holds SASS for sm_70 and sm_80, that
#      the Volta kernels' sm_70 SASS uses HMMA.884 (mma.m8n8k4) and that the
#      Ampere kernels' sm_80 SASS uses HMMA.16816; prints per-kernel counts.
# Exits non-zero when any step or check fails. Not part of .ci/run (it downloads
# about 860 MB and takes several minutes on 2 cores); see README "Building for
# Volta (sm_70)".
#
# Environment: CUDA118_PREFIX (default /opt/cuda-11.8), CUDA118_DEBS (the .deb
# cache, default /opt/cuda-11.8-debs; reused when the files are there),
# BUILD_DIR (default /tmp/polyattn-sm70), JOBS (default 2), ARCHS (default
# "70;80"; e.g. "70;80;90").
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${CUDA118_PREFIX:-/opt/cuda-11.8}"
DEBS="${CUDA118_DEBS:-/opt/cuda-11.8-debs}"
BUILD="${BUILD_DIR:-/tmp/polyattn-sm70}"
JOBS="${JOBS:-2}"
ARCHS="${ARCHS:-70;80}" # must hold 70 and 80 (the checks below); 11.8 also has 90
VERSION="11.8.89~11.8.0-5~deb12u1"
# nvcc, cicc, ptxas, fatbinary, nvlink, cudafe++, cuobjdump, libdevice: the toolkit;
# headers, libcudart_static.a, libcudadevrt.a, stubs: the dev package; libcudart.so
# (CMake's FindCUDAToolkit looks for it even when linking statically).
PACKAGES=(nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0)
HOST_CXX=g++-11
NONFREE_LIST=/etc/apt/sources.list.d/nonfree.list

# Wait for another apt/dpkg run (up to 10 minutes) instead of failing on its lock.
APT=(apt-get -o DPkg::Lock::Timeout=600)

log() { echo "check_sm70: $*" >&2; }
die() { log "FAILED: $*"; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Step 1: bookworm non-free, in a file of its own.
add_nonfree() {
  # (no `| grep -q` under pipefail: grep's early exit would fail the pipeline)
  if [[ "$(apt-cache policy nvidia-cuda-toolkit 2>/dev/null)" == *"Candidate: $VERSION"* ]]; then
    return
  fi
  if [ ! -f "$NONFREE_LIST" ]; then
    log "adding bookworm non-free in $NONFREE_LIST"
    as_root tee "$NONFREE_LIST" >/dev/null <<'EOF'
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm non-free non-free-firmware
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates non-free
EOF
  fi
  as_root "${APT[@]}" update -q
  [[ "$(apt-cache policy nvidia-cuda-toolkit)" == *"Candidate: $VERSION"* ]] ||
    die "apt offers no nvidia-cuda-toolkit $VERSION (is this Debian 12?)"
}

# Step 2a: the .debs, downloaded once into $DEBS.
download_debs() {
  mkdir -p "$DEBS"
  local p missing=()
  for p in "${PACKAGES[@]}"; do
    compgen -G "$DEBS/${p}_*_amd64.deb" >/dev/null || missing+=("$p=$VERSION")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    log "debs cached in $DEBS"
    return
  fi
  add_nonfree
  log "downloading ${missing[*]} into $DEBS"
  (cd "$DEBS" && apt-get download -q "${missing[@]}")
}

deb_of() {
  local f
  for f in "$DEBS/$1"_*_amd64.deb; do echo "$f"; return; done
}

# Step 2b: unpack into a CUDA-style prefix. Debian's nvcc looks for its tools
# through absolute paths (/etc/nvcc.profile, /usr/lib/nvidia-cuda-toolkit); here
# it gets NVIDIA's layout and a profile relative to its own directory instead.
unpack_toolkit() {
  if [ -x "$PREFIX/bin/nvcc" ] && [[ "$("$PREFIX/bin/nvcc" --version)" == *"release 11.8"* ]]; then
    log "toolkit already unpacked in $PREFIX"
    return
  fi
  local stage="$PREFIX.stage"
  rm -rf "$stage" "$PREFIX"
  mkdir -p "$stage"
  dpkg-deb --fsys-tarfile "$(deb_of nvidia-cuda-toolkit)" | tar -x -C "$stage" \
    ./usr/bin ./usr/lib/nvidia-cuda-toolkit/bin ./usr/lib/nvidia-cuda-toolkit/libdevice
  # The dev package is 2.8 GB unpacked, mostly static maths libraries: take the
  # headers, the runtime and the driver stub only.
  dpkg-deb --fsys-tarfile "$(deb_of nvidia-cuda-dev)" | tar -x -C "$stage" --wildcards \
    './usr/include/*' './usr/lib/x86_64-linux-gnu/libcudart*' \
    './usr/lib/x86_64-linux-gnu/libcudadevrt.a' './usr/lib/x86_64-linux-gnu/libculibos.a' \
    './usr/lib/x86_64-linux-gnu/stubs/libcuda.so'
  dpkg-deb --fsys-tarfile "$(deb_of libcudart11.0)" | tar -x -C "$stage"

  local u="$stage/usr" t="$stage/usr/lib/nvidia-cuda-toolkit" l="$stage/usr/lib/x86_64-linux-gnu"
  mkdir -p "$PREFIX"/{bin,nvvm/bin,nvvm/libdevice,lib64/stubs}
  mv "$t/bin/nvcc" "$t/bin/crt" "$PREFIX/bin/"
  local b
  for b in ptxas fatbinary nvlink cudafe++ bin2c cuobjdump nvdisasm nvprune cu++filt; do
    mv "$u/bin/$b" "$PREFIX/bin/"
  done
  mv "$t/bin/cicc" "$PREFIX/nvvm/bin/"
  mv "$t/libdevice/libdevice.10.bc" "$PREFIX/nvvm/libdevice/"
  mv "$u/include" "$PREFIX/include"
  mv "$l"/libcudart* "$l/libcudadevrt.a" "$l/libculibos.a" "$PREFIX/lib64/"
  mv "$l/stubs/libcuda.so" "$PREFIX/lib64/stubs/"
  # NVIDIA's nvcc.profile, paths relative to nvcc's directory.
  cat >"$PREFIX/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
  rm -rf "$stage"
  "$PREFIX/bin/nvcc" --version | tail -n 2
}

install_host_compiler() {
  command -v "$HOST_CXX" >/dev/null 2>&1 && return
  log "installing $HOST_CXX (nvcc 11.8 accepts gcc up to 11; the default gcc is unchanged)"
  as_root "${APT[@]}" update -q
  as_root env DEBIAN_FRONTEND=noninteractive "${APT[@]}" install -y -q --no-install-recommends "$HOST_CXX"
}

# Step 3: the CUDA module only.
build_module() {
  log "configuring $BUILD (POLYATTN_CUDA_ARCHS=$ARCHS, nvcc $PREFIX/bin/nvcc, host $HOST_CXX)"
  rm -rf "$BUILD"
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DPOLYATTN_CUDA=ON -DPOLYATTN_CUDA_ARCHS="$ARCHS" \
    -DCMAKE_CUDA_COMPILER="$PREFIX/bin/nvcc" -DCMAKE_CUDA_HOST_COMPILER="$(command -v "$HOST_CXX")" \
    -DCUDAToolkit_ROOT="$PREFIX" \
    -DPOLYATTN_BUILD_TESTS=OFF -DPOLYATTN_BUILD_BENCH=OFF
  grep -q "^CMAKE_CUDA_COMPILER_VERSION:.*11\.8\|CMAKE_CUDA_COMPILER_VERSION \"11\.8" \
    "$BUILD"/CMakeFiles/*/CMakeCUDACompiler.cmake || die "CMake did not take nvcc 11.8"
  local t0=$SECONDS
  cmake --build "$BUILD" --target polyattn-cuda --parallel "$JOBS"
  log "polyattn-cuda built in $((SECONDS - t0))s"
}

# Step 4: what the module holds.
# Prints "<kernel> <count>" for each kernel of $1 (cuobjdump -sass output) that
# uses instruction prefix $2.
hmma_per_kernel() {
  awk -v insn="$2" '
    /Function : / { fn = $3 }
    index($0, insn) { n[fn]++ }
    END { for (f in n) print f, n[f] }' "$1" | sort
}

check_module() {
  local lib="$BUILD/lib/libpolyattn-cuda.so" cuobjdump="$PREFIX/bin/cuobjdump"
  [ -f "$lib" ] || die "no $lib"
  log "ELF (SASS) images in $lib:"
  "$cuobjdump" --list-elf "$lib" | tee "$BUILD/list-elf.txt"
  "$cuobjdump" --list-ptx "$lib" | tee "$BUILD/list-ptx.txt"
  python3 "$ROOT/.ci/fatbin_archs.py" "$lib" --expect "${ARCHS//;/,}" || die "missing SASS"

  local arch insn file kernel_re failed=0
  for arch in 70 80; do
    file="$BUILD/sass_sm_$arch.txt"
    "$cuobjdump" -sass -arch "sm_$arch" "$lib" >"$file"
    grep -q "arch = sm_$arch" "$file" || die "cuobjdump found no sm_$arch SASS"
  done
  # kernel family, architecture, instruction it must use
  local checks=("pa_volta_fwd_kernel 70 HMMA.884" "pa_volta_bwd_kernel 70 HMMA.884"
                "pa_ampere_fwd_kernel 80 HMMA.16816" "pa_ampere_bwd_kernel 80 HMMA.16816")
  local line family count
  for line in "${checks[@]}"; do
    read -r family arch insn <<<"$line"
    file="$BUILD/sass_sm_$arch.txt"
    log "sm_$arch: $insn per kernel"
    hmma_per_kernel "$file" "$insn" | tee "$BUILD/count_${insn}_sm_$arch.txt"
    # every instantiation of the family (one per head-dim bucket / dtype) must use it
    local kernels
    kernels=$(grep "Function : " "$file" | awk '{print $3}' | grep -c "$family" || true)
    count=$(awk -v f="$family" 'index($1, f) && $2 > 0' "$BUILD/count_${insn}_sm_$arch.txt" | wc -l)
    if [ "$kernels" -eq 0 ] || [ "$count" -ne "$kernels" ]; then
      log "sm_$arch: $count of $kernels $family kernels use $insn"
      failed=1
    else
      log "sm_$arch: all $kernels $family kernels use $insn"
    fi
  done
  [ "$failed" -eq 0 ] || die "instruction check"
  # Volta SASS must exist for the simple and decode kernels too (any GPU of cc 7.0).
  for kernel_re in simple_forward_kernel decode_split_kernel decode_merge_kernel; do
    grep -q "Function : .*$kernel_re" "$BUILD/sass_sm_70.txt" ||
      die "no sm_70 SASS for $kernel_re"
  done
}

main() {
  local t0=$SECONDS
  local a
  for a in 70 80; do
    [[ ";$ARCHS;" == *";$a;"* ]] || die "ARCHS=$ARCHS must include $a"
  done
  [ -f /etc/debian_version ] || die "needs Debian 12 (apt-get download of non-free CUDA 11.8)"
  download_debs
  unpack_toolkit
  install_host_compiler
  build_module
  check_module
  log "OK: module for $ARCHS built with CUDA 11.8 and checked in $((SECONDS - t0))s"
}

main "$@"
