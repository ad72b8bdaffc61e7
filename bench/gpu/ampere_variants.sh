#!/usr/bin/env bash
# ampere_variants.sh: compare the Ampere forward kernel's tuning variants
# (backends/cuda/ampere_tune.cuh, POLYATTN_CUDA_AMPERE_VARIANT) ON A MACHINE WITH AN
# NVIDIA GPU. Same devkit setup as check_cuda.sh (build elsewhere, configured with
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON so the rows "auto" never runs are compiled;
# carry build/bin/* and build/lib/*.so, then from the repository root):
#
#   bash bench/gpu/ampere_variants.sh [VARIANT...]   # default: base m2 m2j
#
# Per variant: a reduced forward sweep on CUDA (correctness: hd 64 and 128 buckets,
# causal, windows, block masks, varlen, GQA, ALiBi/softcap, odd dims, f16/bf16),
# then polyattn run --repeat 30 at the sizes of the speed target. Logs in $OUT (or
# ./ampere-variants-logs); a table at the end (variant, config, ms, TFLOP/s, check).
# About 4-5 minutes for the three variants. Exit 0 only if every step passed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
if [ -f .devkit/env ]; then
  # shellcheck disable=SC1091
  source .devkit/env
fi
for tool in polyattn test_forward; do
  command -v "$tool" >/dev/null || { echo "ampere_variants: $tool not on PATH (source .devkit/env?)"; exit 2; }
done
LOG=${OUT:-$PWD/ampere-variants-logs}
mkdir -p "$LOG"
TABLE=$LOG/TABLE.txt

VARIANTS=("$@")
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(base m2 m2j)

# Substrings of tests/test_forward.c case names (POLYATTN_TEST_CASES).
CASES=d64_s64_h4,d128_s128_b2,d72_sq17_sk255,dv32_d64,s1000_causal_d128,s2048_d128,causal_sq113_sk64_emptyrows,window_32_16,alibi_softcap_window_gqa,block64_bcast_diag,block_dense1_sparse,block128x32_per_batch_causal,varlen_empty,varlen_causal_gqa,seqused_k,strided_gqa_causal,bhsd,auto_clustered_causal_gqa

# name|arguments of polyattn run
CONFIGS=(
  "d128_s8192|--dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192"
  "d128_s8192_causal|--dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --causal"
  "d64_s4096|--dtype bf16 --batch 4 --heads 32 --dim 64 --seq 4096"
  "d64_s4096_causal|--dtype bf16 --batch 4 --heads 32 --dim 64 --seq 4096 --causal"
  "d128_s2048_b8|--dtype bf16 --batch 8 --heads 16 --dim 128 --seq 2048"
)

FAILED=0
printf '%-6s %-20s %10s %12s  %s\n' variant config ms TFLOP/s check >"$TABLE"
for v in "${VARIANTS[@]}"; do
  export POLYATTN_CUDA_AMPERE_VARIANT=$v
  log=$LOG/sweep-$v.log
  echo "=== $v: sweep" | tee "$log"
  timeout 150 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=$CASES \
    test_forward --filter 'forward/sweep' >>"$log" 2>&1
  rc=$?
  res=PASS
  [ $rc -eq 0 ] || { res="FAIL(exit $rc)"; FAILED=1; }
  tail -n 2 "$log" | sed 's/^/    /'
  printf '%-6s %-20s %10s %12s  %s\n' "$v" sweep - - "$res" | tee -a "$TABLE"
  for cfg in "${CONFIGS[@]}"; do
    name=${cfg%%|*}
    args=${cfg#*|}
    log=$LOG/run-$v-$name.log
    # shellcheck disable=SC2086
    timeout 90 polyattn run --backend cuda --repeat 30 $args >"$log" 2>&1
    rc=$?
    line=$(grep -E '^forward ' "$log" | head -n 1)
    ms=$(awk '{print $2}' <<<"$line")
    rate=$(grep -oE '[0-9.]+ TFLOP/s' <<<"$line" | awk '{print $1}')
    if [ $rc -ne 0 ]; then
      res="FAIL(exit $rc)"
    elif grep -qx PASS "$log"; then
      res=PASS
    else
      res=FAIL
    fi
    [ "$res" = PASS ] || FAILED=1
    printf '%-6s %-20s %10s %12s  %s\n' "$v" "$name" "${ms:--}" "${rate:--}" "$res" | tee -a "$TABLE"
  done
done
unset POLYATTN_CUDA_AMPERE_VARIANT
echo
echo "=== summary ($TABLE)"
cat "$TABLE"
exit $FAILED
