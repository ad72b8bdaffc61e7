#!/usr/bin/env bash
# fp8_s6_r1.sh: sixth session, round 1 of issue 9 (FP8 forward on Hopper), helper
# queue (150 s). Run from the unpacked kit (bin/, lib/) as OUT=<dir> bash run.sh.
#   1. test_fp8: the FP8 cases against the float64 oracle (+ the other kernels decline)
#   2. attn_speed: fp8 hd128/hd64 S8192 (serial and pipe schedules), bf16 beside it
#   3. compute-sanitizer memcheck on two small fp8 cases
#   4. SASS: QGMMA in the fp8 kernels (cuobjdump)
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
S="$OUT/SUMMARY.txt"
[ -f lib/libpolyattn-cuda.so.gz ] && gzip -d lib/*.gz
step() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc ($((SECONDS - t0)) s)" | tee -a "$S"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
step test_fp8 50 test_fp8 --verbose --jobs 4
grep -E "vs oracle|Synthesis|FAIL|fail|SKIP|forced|Assertion" "$OUT/test_fp8.txt" | head -40 | tee -a "$S"
V=POLYATTN_CUDA_FP8_VARIANT
AS="attn_speed --backend cuda --warm 0.3 --iters 50"
step speed-fp8-d128 15 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 $V=serial $V=pipe $V=serial
step speed-fp8-d64 12 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 $V=serial $V=pipe
step speed-fp8-d128-causal 12 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal $V=serial $V=pipe
step speed-bf16-d128 12 $AS --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 -
for f in "$OUT"/speed-*.txt; do echo "== $(basename "$f")"; grep -E "^(attn_speed|POLYATTN|-)" "$f"; done | tee -a "$S"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$CS" ]; then
  step memcheck 35 env POLYATTN_TEST_CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block \
    "$CS" --tool memcheck --error-exitcode 9 test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  step memcheck-pipe 25 env $V=pipe POLYATTN_TEST_CASES=d128_causal_sq200_sk333_block \
    "$CS" --tool memcheck --error-exitcode 9 test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  grep -E "ERROR SUMMARY|Synthesis" "$OUT"/memcheck*.txt | tee -a "$S"
fi
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$OBJ" ]; then
  timeout 25 "$OBJ" -sass lib/libpolyattn-cuda.so 2>&1 | awk '
    /Function :/ {fn=$3; fp8=(fn ~ /fp8/)}
    fp8 && /QGMMA/ {q[fn]++} fp8 && /HGMMA/ {h[fn]++} fp8 && /(LDL|STL)/ {l[fn]++}
    END {for (f in q) printf "%s QGMMA %d HGMMA %d LDL/STL %d\n", f, q[f], h[f], l[f]}' \
    >"$OUT/sass-fp8.txt" 2>&1
  cat "$OUT/sass-fp8.txt" | tee -a "$S"
fi
