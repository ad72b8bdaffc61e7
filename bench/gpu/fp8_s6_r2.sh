#!/usr/bin/env bash
# fp8_s6_r2.sh: sixth session, round 2 of issue 9 (FP8 forward on Hopper), helper queue
# (150 s). Run from the unpacked kit (bin/, lib/, bench/, bindings/) as OUT=<dir> bash run.sh.
#   0. fp8_check (building blocks; the A-layout probe)
#   1. attn_speed: the variants at hd128/hd64 S8192 (fp8), in one process each
#   2. test_fp8 on the default (pipe) and on the fastest variant of step 1 if another
#   3. bench/fp8_torch.py: fp8 beside polyattn bf16 and SDPA bf16 (flash, cuDNN), same process
#   4. compute-sanitizer memcheck (default), 5. SASS of the fp8 cubin (QGMMA, LDL/STL)
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
S="$OUT/SUMMARY.txt"
for f in lib/*.xz bin/*.xz; do [ -f "$f" ] && { xz -d "$f" 2>/dev/null || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; }; chmod +x "${f%.xz}" 2>/dev/null; done
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
step fp8_check 6 fp8_check
cat "$OUT/fp8_check.txt" | tee -a "$S"
V=POLYATTN_CUDA_FP8_VARIANT
AS="attn_speed --backend cuda --warm 0.25 --iters 40"
step speed-fp8-d128 10 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 \
  $V=pipe $V=serial $V=pingpong $V=pipe-f16 $V=pingpong-f16 $V=serial-f16 $V=pipe
step speed-fp8-d64 6 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 $V=pipe $V=pipe-f16 $V=pingpong-f16
for f in "$OUT"/speed-*.txt; do echo "== $(basename "$f")"; grep -E "^(attn_speed B|POLYATTN|-|variant)" "$f"; done | tee -a "$S"
BEST=$(grep -E "^POLYATTN" "$OUT/speed-fp8-d128.txt" | sort -k3 -g -r | head -n 1 | sed 's/^POLYATTN_CUDA_FP8_VARIANT=\([^ ]*\).*/\1/')
echo "fastest at hd128: ${BEST:-?}" | tee -a "$S"
step test_fp8 25 test_fp8 --verbose --jobs 8
grep -E "vs oracle|Synthesis|FAIL|Assertion|forced" "$OUT/test_fp8.txt" | head -30 | tee -a "$S"
if [ -n "$BEST" ] && [ "$BEST" != pipe ]; then
  step "test_fp8-$BEST" 18 env $V=$BEST test_fp8 --verbose --jobs 8 --filter 'fp8/oracle*'
  grep -E "vs oracle|Synthesis|FAIL" "$OUT/test_fp8-$BEST.txt" | head -20 | tee -a "$S"
fi
export POLYATTN_LIB=$PWD/lib/libpolyattn.so.0
step torch 35 python3 bench/fp8_torch.py --dims 128,64 --seqlens 8192 --causal both \
  --variants "pipe,pipe-f16,pingpong-f16"
grep -vE "^\s*$" "$OUT/torch.txt" | tail -40 | tee -a "$S"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$CS" ]; then
  step memcheck 18 env POLYATTN_TEST_CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block \
    "$CS" --tool memcheck --error-exitcode 9 test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  grep -E "ERROR SUMMARY|Synthesis" "$OUT"/memcheck*.txt | tee -a "$S"
fi
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$OBJ" ]; then
  mkdir -p /tmp/fp8-cubins && (cd /tmp/fp8-cubins && timeout 10 "$OBJ" -xelf all "$OLDPWD/lib/libpolyattn-cuda.so" >/dev/null 2>&1)
  for c in $(grep -l pa_hopper_fp8_kernel /tmp/fp8-cubins/*.cubin 2>/dev/null); do
    [ -f "$c" ] || continue
    timeout 8 "$OBJ" -sass "$c" 2>/dev/null | awk -v f="$(basename "$c")" '
      /Function :/ {fn=$3; fp8=(fn ~ /fp8/)}
      fp8 && /QGMMA/ {q[fn]++} fp8 && /HGMMA/ {h[fn]++} fp8 && /(LDL|STL)/ {l[fn]++}
      END {for (x in q) printf "%s %s QGMMA %d HGMMA %d LDL/STL %d\n", f, x, q[x], h[x], l[x]}'
  done >"$OUT/sass-fp8.txt" 2>&1
  wc -l <"$OUT/sass-fp8.txt" | sed 's/^/sass: fp8 kernels with QGMMA: /' | tee -a "$S"
  head -30 "$OUT/sass-fp8.txt" | tee -a "$S"
fi
