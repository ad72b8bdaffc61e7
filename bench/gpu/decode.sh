#!/usr/bin/env bash
# decode.sh: the CUDA split-KV decode kernel (backends/cuda/fwd_decode.cu), run ON A
# MACHINE WITH AN NVIDIA GPU, from the repository root, with the build's bin/ on PATH
# (or .devkit/ beside it, as for check_cuda.sh):
#
#   bash bench/gpu/decode.sh            # logs to $OUT, or ./decode-logs; < 3 minutes
#   bash bench/gpu/decode.sh tune       # only: Sk = 32768 at forced split counts
#
# Steps (each has its own log; a failing step does not stop the others):
#   sweep      the forward sweep's decode-shaped cases with POLYATTN_CUDA_KERNEL=decode
#              (cases the kernel does not take are SKIPPED, not failed), then again
#              with each split kernel forced (POLYATTN_CUDA_DECODE_PATH=scalar|mma),
#              and the 20-run bit-identity test of det_decode_split on both
#   racecheck  compute-sanitizer racecheck on two cases of the default choice
#   memcheck   compute-sanitizer memcheck on two small decode cases and one
#              polyattn run (skipped, loudly, when compute-sanitizer is absent)
#   perf       polyattn run --backend cuda --repeat 50, bf16, B=8, Hq=32, Hkv=8,
#              D=128, Sq=1, Sk = 4096, 32768, 131072 (the kernel the library picks,
#              then the fp32 split kernel forced);
#              achieved bandwidth = K+V bytes (2*B*Sk*Hkv*D*2) / median time.
#              Issue 3's target: >= 80% of the 4.2 TB/s copy bandwidth = 3.36 TB/s.
#              The time is host-measured around one synchronised call (launches
#              included), so the 4k row understates the kernel.
#   tune       (only when asked) Sk = 32768 with POLYATTN_CUDA_DECODE_SPLITS = 2..64 (0:
#              the split count the cost model of fwd_decode.cu picks).
# Exit status: 0 only if every step passed. SUMMARY.txt lists them.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=bench/gpu/lib.sh
source bench/gpu/lib.sh
STEP_WIDTH=28
STEP_TAIL=3
pa_gpu_setup decode polyattn test_forward

B=8 HQ=32 HKV=8 D=128
# perf_row N LOGNAME: the bandwidth line of one polyattn run log.
perf_row() {
  local ms
  ms=$(awk '$1 == "forward" { print $2; exit }' "$LOG/$2.log")
  [ -n "$ms" ] || return 0
  awk -v n="$1" -v ms="$ms" -v b=$B -v h=$HKV -v d=$D -v what="$2" 'BEGIN {
    bytes = 2 * b * n * h * d * 2; tbs = bytes / (ms * 1e-3) / 1e12;
    printf "%-16s %8d %10.1f %10.4f %8.3f %6.0f%%\n", what, n, bytes / 1e6, ms, tbs, 100 * tbs / 4.2 }'
}
PERF_HEAD=$(printf '%-16s %8s %10s %10s %8s %7s' run Sk "K+V MB" "median ms" "TB/s" "of 4.2")

if [ "${1:-}" = tune ]; then
  echo "$PERF_HEAD" | tee "$LOG/tune.txt"
  for S in model 2 4 8 16 32 64; do
    step "tune-$S" 60 env POLYATTN_CUDA_DECODE_SPLITS="${S/model/0}" \
      polyattn run --backend cuda --repeat 50 --no-check --dtype bf16 --batch $B --heads $HQ \
      --kv-heads $HKV --dim $D --seq-q 1 --seq-k 32768
    perf_row 32768 "tune-$S" | tee -a "$LOG/tune.txt"
  done
  cat "$SUMMARY" "$LOG/tune.txt"
  exit $FAILED
fi

# The sweep's cases with Sq <= 16 (substring match: "decode" alone names eight).
DECODE_CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse
# Three runs: the kernel's own choice (tensor cores where they can serve the case),
# each path forced (POLYATTN_CUDA_DECODE_PATH; cases mma cannot take are SKIPPED).
step sweep 150 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode \
  POLYATTN_TEST_CASES=$DECODE_CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
for path in scalar mma; do
  step sweep-$path 150 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode \
    POLYATTN_CUDA_DECODE_PATH=$path POLYATTN_TEST_CASES=$DECODE_CASES test_forward --verbose \
    --filter 'forward/sweep' --jobs 8
  step deterministic-$path 60 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode \
    POLYATTN_CUDA_DECODE_PATH=$path POLYATTN_TEST_CASES=det_decode_split test_forward --verbose \
    --filter 'forward/deterministic'
done
# how many ran and how many the kernel declined (the latter must be the non-decode ones)
for f in sweep sweep-scalar sweep-mma; do
  grep -hE "^\[====\]|SKIPPED" "$LOG/$f.log" | sort | uniq -c | sort -rn | head -n 12 \
    >"$LOG/$f-skips.txt"
done

SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer \
      /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1 || true)
if [ -z "$SAN" ]; then
  echo "memcheck: SKIPPED, compute-sanitizer not found (PATH, /usr/local/cuda*)" | tee -a "$SUMMARY"
else
  SANOPTS=(--tool memcheck --target-processes all --error-exitcode 99 --print-limit 20)
  step memcheck-sweep 90 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode \
    POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk3000_block,decode_sq2_sk1500,decode_s1_sk3000_g16 \
    "$SAN" "${SANOPTS[@]}" test_forward --filter 'forward/sweep' --jobs 4
  step racecheck-sweep 120 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode \
    POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500 \
    "$SAN" --tool racecheck --target-processes all --error-exitcode 99 --print-limit 20 \
    test_forward --filter 'forward/sweep' --jobs 4
  step memcheck-run 60 env POLYATTN_CUDA_KERNEL=decode "$SAN" "${SANOPTS[@]}" \
    polyattn run --backend cuda --repeat 1 --dtype bf16 --batch 2 --heads 8 --kv-heads 2 \
    --dim 128 --seq-q 1 --seq-k 3000
fi

echo "$PERF_HEAD" | tee "$LOG/perf.txt"
for N in 4096 32768 131072; do
  step "perf-sk$N" 120 polyattn run --backend cuda --repeat 50 --dtype bf16 --batch $B \
    --heads $HQ --kv-heads $HKV --dim $D --seq-q 1 --seq-k $N
  perf_row $N "perf-sk$N" | tee -a "$LOG/perf.txt"
  step "perf-scalar-sk$N" 120 env POLYATTN_CUDA_DECODE_PATH=scalar polyattn run --backend cuda \
    --repeat 50 --dtype bf16 --batch $B --heads $HQ --kv-heads $HKV --dim $D --seq-q 1 --seq-k $N
  perf_row $N "perf-scalar-sk$N" | tee -a "$LOG/perf.txt"
done

echo
echo "---- summary (logs in $LOG)"
cat "$SUMMARY"
cat "$LOG/perf.txt"
exit $FAILED
