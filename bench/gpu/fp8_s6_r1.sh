#!/usr/bin/env bash
# fp8_s6_r1.sh: sixth session, round 1 of issue 9 (FP8 forward on Hopper), helper
# queue (150 s). Run from the unpacked kit (bin/, lib/) as OUT=<dir> bash run.sh.
#   0. fp8_check: TMA swizzle image, S (SS), V^T (transposer), O (RS) against the CPU
#   1. test_fp8: the FP8 cases against the float64 oracle (+ the other kernels decline)
#   2. attn_speed: fp8 hd128/hd64 S8192, the variants (POLYATTN_CUDA_FP8_VARIANT), bf16 beside
#      it; test_fp8 on four cases with pingpong-e16
#   3. compute-sanitizer memcheck on two small fp8 cases
#   4. SASS: QGMMA in the fp8 kernels (cuobjdump)
#   5. ncu: one launch of pingpong-e16, hd128 S8192
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
S="$OUT/SUMMARY.txt"
# the kit's libraries are compressed (the transfer limit): xz for the CUDA module
for f in lib/*.xz; do [ -f "$f" ] && { xz -d "$f" 2>/dev/null || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; }; done
for f in lib/*.gz bin/*.gz; do [ -f "$f" ] && gzip -d "$f" && chmod +x "${f%.gz}"; done
[ -f ./env ] && source ./env
step() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc ($((SECONDS - t0)) s)" | tee -a "$S"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
step fp8_check 10 fp8_check
cat "$OUT/fp8_check.txt" | tee -a "$S"
step test_fp8 28 test_fp8 --verbose --jobs 8
grep -E "vs oracle|Synthesis|FAIL|fail|SKIP|forced|Assertion" "$OUT/test_fp8.txt" | head -40 | tee -a "$S"
V=POLYATTN_CUDA_FP8_VARIANT
AS="attn_speed --backend cuda --warm 0.25 --iters 40"
step speed-fp8-d128 11 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 \
  $V=serial $V=pipe $V=pingpong $V=serial-s3 $V=pingpong-s3 $V=serial-e16 $V=pipe-e16 $V=pingpong-e16 \
  $V=pingpong-s3-e16 $V=serial
step speed-fp8-d64 8 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 $V=serial $V=pipe $V=pingpong \
  $V=pingpong-e16 $V=serial-s3
step speed-fp8-d128-causal 6 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal $V=serial $V=pingpong-e16
step speed-bf16-d128 6 $AS --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 -
for f in "$OUT"/speed-*.txt; do echo "== $(basename "$f")"; grep -E "^(attn_speed|POLYATTN|-|variant)" "$f"; done | tee -a "$S"
step test_fp8-pingpong-e16 12 env $V=pingpong-e16 \
  POLYATTN_TEST_CASES=d128_b2_gqa_s300_tensor,d64_causal_s1000_tensor,d128_sq17_sk1000_window,d128_softcap_s256 \
  test_fp8 --verbose --jobs 4 --filter 'fp8/oracle*'
grep -E "vs oracle|Synthesis" "$OUT/test_fp8-pingpong-e16.txt" | tee -a "$S"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$CS" ]; then
  step memcheck 20 env POLYATTN_TEST_CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block \
    "$CS" --tool memcheck --error-exitcode 9 test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  grep -E "ERROR SUMMARY|Synthesis" "$OUT"/memcheck*.txt | tee -a "$S"
fi
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$OBJ" ]; then
  timeout 20 "$OBJ" -sass lib/libpolyattn-cuda.so 2>&1 | awk '
    /Function :/ {fn=$3; fp8=(fn ~ /fp8/)}
    fp8 && /QGMMA/ {q[fn]++} fp8 && /HGMMA/ {h[fn]++} fp8 && /(LDL|STL)/ {l[fn]++}
    END {for (f in q) printf "%s QGMMA %d HGMMA %d LDL/STL %d\n", f, q[f], h[f], l[f]}' \
    >"$OUT/sass-fp8.txt" 2>&1
  cat "$OUT/sass-fp8.txt" | tee -a "$S"
fi
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
if [ -n "$NCU" ]; then
  step ncu-d128 15 "$NCU" --clock-control none --kernel-name regex:fp8 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section InstructionStats \
    attn_speed --backend cuda --dtype fp8 --warm 0 --iters 1 --batch 2 --heads 16 --dim 128 --seq 8192 \
    $V=pingpong-e16
  grep -E "Duration|Throughput|Busy|Stall|Warp Cycles|Issued|Eligible|Bank|Pipe" "$OUT/ncu-d128.txt" | head -40 | tee -a "$S"
fi
