#!/usr/bin/env bash
# Checks the HIP module's code objects: one per target it was built for, and the
# matrix instructions each target must (or must not) contain.
#
#   bash scripts/check_hip_isa.sh build-hip/lib/libpolyattn-hip.so "gfx90a;gfx908;gfx1030"
#
# Lists the module's offload bundles with roc-obj-ls (Debian's hipcc package),
# cuts each code object out with dd, disassembles it with llvm-objdump for its own
# target, and counts instructions. Expectations per target (backends/hip/mfma.cuh):
#   gfx908           v_mfma_f32_32x32x8f16 (the MFMA kernel's fp16 path)
#   gfx90a, gfx94x   v_mfma_f32_32x32x8f16 and v_mfma_f32_32x32x8bf16_1k
#   anything else    no v_mfma at all (no matrix cores: the kernel compiles to a trap)
# Exits non-zero when a target has no code object or breaks its expectation.
set -euo pipefail

lib=${1:?usage: check_hip_isa.sh MODULE.so "gfx90a;gfx908;..."}
archs=${2:?usage: check_hip_isa.sh MODULE.so "gfx90a;gfx908;..."}
objdump=$(command -v llvm-objdump-15 || command -v llvm-objdump || true)
[ -n "$objdump" ] || { echo "no llvm-objdump (Debian: llvm-15, a dependency of hipcc)"; exit 1; }
command -v roc-obj-ls >/dev/null || { echo "no roc-obj-ls (Debian: hipcc)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
listing=$(roc-obj-ls "$lib")
fail=0
IFS=';' read -r -a want <<<"$archs"
for arch in "${want[@]}"; do
  # one line per compilation unit: "N  hipv4-amdgcn-amd-amdhsa--gfx90a  file://...#offset=O&size=S"
  mapfile -t uris < <(awk -v t="hipv4-amdgcn-amd-amdhsa--$arch" '$2 == t {print $3}' <<<"$listing")
  if [ "${#uris[@]}" -eq 0 ]; then
    echo "$arch: no code object in $lib"
    fail=1
    continue
  fi
  asm="$tmp/$arch.s"
  : >"$asm"
  n_co=0
  for uri in "${uris[@]}"; do
    off=$(sed -n 's/.*#offset=\([0-9]*\)&size=.*/\1/p' <<<"$uri")
    size=$(sed -n 's/.*&size=\([0-9]*\)$/\1/p' <<<"$uri")
    co="$tmp/$arch.$n_co.co"
    dd if="$lib" of="$co" bs=4096 skip=$((off / 4096)) count=$(((size + 4095) / 4096)) status=none
    [ $((off % 4096)) -eq 0 ] || { echo "$arch: code object at unaligned offset $off"; exit 1; }
    truncate -s "$size" "$co"
    "$objdump" -d --mcpu="$arch" "$co" >>"$asm"
    n_co=$((n_co + 1))
  done
  n_mfma=$(grep -c 'v_mfma' "$asm" || true)
  n_f16=$(grep -c 'v_mfma_f32_32x32x8f16' "$asm" || true)
  n_bf16=$(grep -c 'v_mfma_f32_32x32x8bf16_1k' "$asm" || true)
  echo "$arch: ${#uris[@]} code objects, $(grep -c '^[[:space:]]*[sv]_' "$asm" || true) instructions," \
       "$n_mfma v_mfma ($n_f16 x 32x32x8f16, $n_bf16 x 32x32x8bf16_1k)"
  case "$arch" in
    gfx908)
      [ "$n_f16" -gt 0 ] || { echo "$arch: expected v_mfma_f32_32x32x8f16"; fail=1; } ;;
    gfx90a | gfx940 | gfx941 | gfx942)
      [ "$n_f16" -gt 0 ] || { echo "$arch: expected v_mfma_f32_32x32x8f16"; fail=1; }
      [ "$n_bf16" -gt 0 ] || { echo "$arch: expected v_mfma_f32_32x32x8bf16_1k"; fail=1; } ;;
    *)
      [ "$n_mfma" -eq 0 ] || { echo "$arch: has no matrix cores, yet v_mfma was emitted"; fail=1; } ;;
  esac
done
exit "$fail"
