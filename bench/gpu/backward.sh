#!/usr/bin/env bash
# backward.sh: the CUDA backward's checks (bwd_ampere.cu, the tensor-core kernel,
# and bwd_simple.cu, its fallback), run ON A MACHINE WITH AN NVIDIA GPU (sm_80+).
#
# Built elsewhere and carried over as a devkit (../shared/tools/devkit): on the build
# machine, from the repository root,
#
#   cmake --preset default && cmake --build --preset default
#   ../shared/tools/devkit build/bin/* build/lib/*.so*
#
# then on the GPU machine, from the repository root (with .devkit/ beside it):
#
#   source .devkit/env; bash bench/gpu/backward.sh [GROUP...]   # logs to $OUT
#
# Groups (default: all, in this order; each step has its own log and a failing step
# does not stop the others):
#   suite     the backward suite on CUDA: the default choice (Ampere for f16/bf16 at
#             head dims <= 128, simple otherwise), then POLYATTN_CUDA_KERNEL=ampere
#             (f32 and hd > 128 cases SKIPPED with the reason), then =simple; and
#             test_cuda's backward tests (graph capture, forced-kernel refusals)
#   det       deterministic = 1: the suite's determinism cases (8 runs each, Ampere
#             forced) and one hd128 case run 20 times (POLYATTN_TEST_REPEAT=20)
#   sanitize  compute-sanitizer memcheck and racecheck on a reduced backward sweep
#             with the Ampere kernel forced
#   volta     the Volta backward (bwd_volta.cu, m8n8k4) forced on this GPU: the suite
#             (bf16, f32 and hd > 128 cases SKIPPED with the reason), its determinism
#             cases, a 20-run repeat, memcheck and racecheck on a reduced sweep, and
#             one fp16 timing beside the Ampere kernel (emulated m8n8k4: says nothing
#             of Volta speed)
#   perf      polyattn run --backend cuda --backward --dtype bf16: B*S = 16384
#             tokens, hidden 2048 (Hq = 2048 / D), D 64 / 128, S 2048 / 8192,
#             causal and not; each also with the simple kernel at S = 2048 for the
#             ratio, and the tensor-core kernel's rows (POLYATTN_CUDA_BWD_VARIANT
#             w8, w8q, w4) at S = 8192
#   quick     about a minute: the suite with the default choice, memcheck on two
#             masked cases, the w8q row on the causal/window cases (what `auto`
#             needs before it runs w8q under masks at hd64), one hd128 S8192 timing
# Where one command may run 10 minutes at most, run the groups in separate commands
# (e.g. "suite", then "det sanitize", then "perf").
# Exit status: 0 only if every step passed. SUMMARY.txt lists them.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=bench/gpu/lib.sh
source bench/gpu/lib.sh
pa_gpu_setup backward polyattn test_backward test_cuda

group_suite() {
  nvidia-smi >"$LOG/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed (see $LOG/nvidia-smi.txt)"
  step suite-default 300 env POLYATTN_TEST_BACKENDS=cuda test_backward --verbose --jobs 8
  step suite-ampere 300 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
    test_backward --verbose --jobs 8
  # How many cases the forced Ampere kernel actually ran (the rest are SKIPPED with
  # the reason: f32, head dims > 128, 2:4, odd strides).
  grep -c "dq ok" "$LOG/suite-ampere.log" >"$LOG/suite-ampere.ran" || true
  step suite-simple 300 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=simple \
    test_backward --verbose --jobs 8
  step test-cuda-graph-backward 120 test_cuda --verbose --filter 'cuda/graph_capture_backward_bf16'
  step test-cuda-refusals 120 test_cuda --verbose --filter 'cuda/unsupported_is_refused'
}

group_det() {
  step det-suite 200 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
    test_backward --verbose --filter 'backward/deterministic' --jobs 4
  # One larger case, 20 runs in one process, every gradient byte compared with run 0.
  step det-20-runs 300 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
    POLYATTN_TEST_CASES=bw_det_d128 POLYATTN_TEST_REPEAT=20 \
    test_backward --verbose --filter 'backward/deterministic'
}

# compute-sanitizer's path, or nothing.
find_sanitizer() {
  command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer \
    /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1 || true
}

group_sanitize() {
  SAN=$(find_sanitizer)
  # Varlen with empty entries, seqused_k, block masks with partial tiles, GQA,
  # softcap + ALiBi + windows, hd 40/72 (bucket 128), causal with empty rows.
  CASES=bw_d40_dv72,bw_varlen_empty,bw_seqused_k,bw_block32x16,bw_mma_d64_block48x80,bw_mma_d128_softcap_alibi,bw_mma_d128_varlen,bw_causal_sq,bw_gqa_8_2
  if [ -z "$SAN" ]; then
    echo "compute-sanitizer: SKIPPED, not found on this machine (PATH, /usr/local/cuda*)" \
      | tee -a "$SUMMARY"
    FAILED=1
    return
  fi
  echo "compute-sanitizer: $SAN" | tee -a "$SUMMARY"
  SANOPTS=(--target-processes all --error-exitcode 99 --print-limit 20)
  RACE_CASES=bw_d40_dv72,bw_varlen_empty,bw_mma_d64_block48x80,bw_mma_d128_softcap_alibi
  for tool in memcheck racecheck; do
    cases=$CASES
    [ "$tool" = racecheck ] && cases=$RACE_CASES
    step "$tool-backward-ampere" 280 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
      POLYATTN_TEST_CASES="$cases" \
      "$SAN" --tool "$tool" "${SANOPTS[@]}" test_backward --filter 'backward/sweep' --jobs 8
    step "$tool-backward-det" 200 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
      POLYATTN_TEST_CASES=bw_det_d128 \
      "$SAN" --tool "$tool" "${SANOPTS[@]}" test_backward --filter 'backward/deterministic'
  done
}

group_volta() {
  local V=(env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=volta)
  step suite-volta 300 "${V[@]}" test_backward --verbose --jobs 8
  grep -c "dq ok" "$LOG/suite-volta.log" >"$LOG/suite-volta.ran" || true
  step det-volta 200 "${V[@]}" test_backward --verbose --filter 'backward/deterministic' --jobs 4
  step det-20-runs-volta 200 "${V[@]}" POLYATTN_TEST_CASES=bw_det_varlen POLYATTN_TEST_REPEAT=20 \
    test_backward --verbose --filter 'backward/deterministic'
  SAN=$(find_sanitizer)
  if [ -n "$SAN" ]; then
    local cases=bw_d40_dv72,bw_varlen_empty,bw_seqused_k,bw_block32x16,bw_mma_d64_block48x80,bw_mma_d128_softcap_alibi,bw_gqa_8_2
    for tool in memcheck racecheck; do
      step "$tool-backward-volta" 280 "${V[@]}" POLYATTN_TEST_CASES="$cases" \
        "$SAN" --tool "$tool" --target-processes all --error-exitcode 99 --print-limit 20 \
        test_backward --filter 'backward/sweep' --jobs 8
    done
  else
    echo "compute-sanitizer: SKIPPED, not found on this machine" | tee -a "$SUMMARY"
    FAILED=1
  fi
  for k in volta ampere; do
    step "perf-f16-d128-s2048-$k" 120 env POLYATTN_CUDA_KERNEL=$k polyattn run --backend cuda \
      --backward --dtype f16 --repeat 5 --batch 8 --heads 16 --dim 128 --seq 2048
  done
}

group_perf() {
  for d in 64 128; do
    heads=$((2048 / d))
    for s in 2048 8192; do
      batch=$((16384 / s))
      for causal in "" "--causal"; do
        name="perf-d$d-s$s${causal:+-causal}"
        # shellcheck disable=SC2086 # one word per option
        step "$name" 180 polyattn run --backend cuda --backward --dtype bf16 --repeat 20 \
          --batch $batch --heads $heads --dim $d --seq $s $causal
        if [ "$s" = 2048 ]; then
          # shellcheck disable=SC2086
          step "$name-simple" 180 env POLYATTN_CUDA_KERNEL=simple polyattn run --backend cuda \
            --backward --dtype bf16 --repeat 3 --batch $batch --heads $heads --dim $d --seq $s $causal
        fi
      done
    done
  done
  for d in 64 128; do
    for v in w8 w8q w4; do
      for causal in "" "--causal"; do
        # shellcheck disable=SC2086
        step "perf-d$d-s8192${causal:+-causal}-$v" 120 env POLYATTN_CUDA_BWD_VARIANT=$v \
          polyattn run --backend cuda --backward --dtype bf16 --repeat 10 --no-check \
          --batch 2 --heads $((2048 / d)) --dim $d --seq 8192 $causal
      done
    done
  done
  grep -h "^=== perf\|backward" "$LOG"/perf-*.log >"$LOG/perf-summary.txt" 2>/dev/null || true
}

group_quick() {
  step quick-suite 120 env POLYATTN_TEST_BACKENDS=cuda test_backward --verbose --jobs 12
  SAN=$(find_sanitizer)
  if [ -n "$SAN" ]; then
    step quick-memcheck 120 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
      POLYATTN_TEST_CASES=bw_mma_d64_block48x80,bw_mma_d128_softcap_alibi \
      "$SAN" --tool memcheck --target-processes all --error-exitcode 99 --print-limit 20 \
      test_backward --filter 'backward/sweep' --jobs 4
  else
    echo "compute-sanitizer: SKIPPED, not found on this machine" | tee -a "$SUMMARY"
    FAILED=1
  fi
  step quick-w8q-banded 90 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
    POLYATTN_CUDA_BWD_VARIANT=w8q POLYATTN_TEST_CASES=causal,window \
    test_backward --verbose --filter 'backward/sweep' --jobs 12
  step quick-perf-d128-s8192 60 polyattn run --backend cuda --backward --dtype bf16 --repeat 10 \
    --no-check --batch 2 --heads 16 --dim 128 --seq 8192
}

GROUPS_TO_RUN=("$@")
[ ${#GROUPS_TO_RUN[@]} -gt 0 ] || GROUPS_TO_RUN=(suite det sanitize volta perf)
for g in "${GROUPS_TO_RUN[@]}"; do
  case $g in
    suite | det | sanitize | volta | perf | quick) "group_$g" ;;
    *) echo "backward.sh: unknown group '$g' (suite, det, sanitize, volta, perf, quick)"; exit 2 ;;
  esac
done

pa_gpu_finish
