#!/usr/bin/env bash
# volta.sh: the forced Volta kernel (mma.sync m8n8k4, fwd_volta.cu) ON A MACHINE WITH
# AN NVIDIA GPU (sm_70 or newer; on sm_80+ the instruction is emulated, so the time
# says nothing about a V100). Built elsewhere and carried as a devkit, as
# check_cuda.sh describes; from the repository root:
#
#   bash bench/gpu/volta.sh        # logs to $OUT, or ./volta-logs; under 4 minutes
#
# Steps (each logged; a failing step does not stop the other):
#   sweep  the full forward sweep on CUDA with POLYATTN_CUDA_KERNEL=volta. f32 and
#          bf16 cases skip (the Volta kernel is fp16 only); so do 2:4 and AUTO_BLOCK
#          (not in the CUDA backend yet). Any OTHER skip of an f16 case is a failure
#          of this script: it means the Volta kernel declined something it should run.
#   run    polyattn run, f16, B=2 H=16 D=128 S=4096, 10 timed repeats, oracle check.
# Exit status: 0 only if both passed. SUMMARY.txt lists them.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=bench/gpu/lib.sh
source bench/gpu/lib.sh
STEP_WIDTH=24
pa_gpu_setup volta polyattn test_forward

nvidia-smi >"$LOG/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed (see $LOG/nvidia-smi.txt)"

step sweep 180 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=volta \
  test_forward --verbose --filter 'forward/sweep'

# Skips by reason. An f16 case may skip only for 2:4 or AUTO_BLOCK sparsity.
grep -o 'SKIPPED.*' "$LOG/sweep.log" | sed 's/^SKIPPED [^:]*: //' | sort | uniq -c | sort -rn \
  >"$LOG/sweep-skips.txt"
bad=$(grep 'SKIPPED [^ ]*/f16/' "$LOG/sweep.log" | grep -v -E 'sparsity is not implemented' || true)
if [ -n "$bad" ]; then
  echo "$bad" >"$LOG/sweep-bad-skips.txt"
  printf '%-24s %-48s\n' "sweep-f16-skips" "FAIL ($(wc -l <"$LOG/sweep-bad-skips.txt") f16 cases skipped)" \
    | tee -a "$SUMMARY"
  head -n 5 "$LOG/sweep-bad-skips.txt" | sed 's/^/    /'
  FAILED=1
else
  printf '%-24s %-48s\n' "sweep-f16-skips" "PASS (none unexpected)" | tee -a "$SUMMARY"
fi
echo "    skip reasons: $LOG/sweep-skips.txt"

step run 60 env POLYATTN_CUDA_KERNEL=volta polyattn run --backend cuda --dtype f16 --repeat 10 \
  --batch 2 --heads 16 --dim 128 --seq 4096

pa_gpu_finish
