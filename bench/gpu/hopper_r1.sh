#!/usr/bin/env bash
# hopper_r1.sh: the first GPU check of the Hopper forward (fwd_hopper.cu), run from a
# devkit directory (bin/, lib/, env) as: OUT=<dir> bash hopper_r1.sh. Steps, most
# important first, each under its own timeout, logs in $OUT:
#   1. wgmma_check: TMA + wgmma SS/RS building blocks against a CPU matmul
#   2. the forward sweep on CUDA with POLYATTN_CUDA_KERNEL=hopper forced (cases the
#      kernel declines are SKIPPED with the reason)
#   3. SASS: HGMMA count and local-memory (LDL/STL) count in the module
#   4. polyattn bench, bf16, hd 64/128, hopper then ampere (same process each)
#   5. compute-sanitizer memcheck on a few small forced-hopper cases
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
step() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc ($((SECONDS - t0)) s)" | tee -a "$OUT/SUMMARY.txt"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
step wgmma-check 20 wgmma_check
tail -6 "$OUT/wgmma-check.txt"
step sweep-hopper 70 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper test_forward --verbose --jobs 16
grep -E "Synthesis|FAIL|\[----\]" "$OUT/sweep-hopper.txt" | head -30
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$CUOBJ" ]; then
  "$CUOBJ" --dump-sass lib/libpolyattn-cuda.so > "$OUT/sass.txt" 2>&1
  echo "sass: HGMMA $(grep -c HGMMA "$OUT/sass.txt"), LDL/STL in the hopper kernels: $(awk '/Function : .*hopper/{h=1} /Function : /&&!/hopper/{h=0} h&&/(LDL|STL)/' "$OUT/sass.txt" | wc -l)" | tee -a "$OUT/SUMMARY.txt"
  rm -f "$OUT/sass.txt"
else
  echo "sass: no cuobjdump on this machine" | tee -a "$OUT/SUMMARY.txt"
fi
step bench-hopper 25 env POLYATTN_CUDA_KERNEL=hopper polyattn bench --backend cuda --dims 64,128 --seqs 512,2048,8192,16384 --repeat 10
step bench-ampere 25 env POLYATTN_CUDA_KERNEL=ampere polyattn bench --backend cuda --dims 64,128 --seqs 512,2048,8192,16384 --repeat 10
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$SAN" ]; then
  step memcheck 20 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper POLYATTN_TEST_CASES=d64_s64_h4,varlen_empty,causal_sq113,block64_bcast,seqused_k_varlen,d128_s128 "$SAN" --tool memcheck test_forward --verbose --jobs 1
  grep -E "ERROR SUMMARY|Synthesis" "$OUT/memcheck.txt" | tail -3
fi
echo "== summary"; cat "$OUT/SUMMARY.txt"
for f in bench-hopper bench-ampere; do echo "== $f"; grep -vE '^\s*$' "$OUT/$f.txt" | head -30; done
