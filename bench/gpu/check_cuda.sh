#!/usr/bin/env bash
# check_cuda.sh: the CUDA backend's checks, run ON A MACHINE WITH AN NVIDIA GPU.
#
# Built elsewhere and carried over as a devkit (../shared/tools/devkit): on the build
# machine, from the repository root,
#
#   cmake --preset default && cmake --build --preset default
#   ../shared/tools/devkit build/bin/* build/lib/*.so
#
# then on the GPU machine, from the repository root (with .devkit/ beside it):
#
#   bash bench/gpu/check_cuda.sh [GROUP...]   # logs to $OUT, or ./check-cuda-logs
#
# Groups (default: all of them, in this order; each step has its own log and a
# failing step does not stop the others):
#   devices   nvidia-smi, polyattn devices: the cuda backend must be usable
#   sweep     the forward sweep on CUDA with the default kernel choice (Ampere for
#             f16/bf16 on sm_80+, simple for f32), then POLYATTN_CUDA_KERNEL=simple
#   cuda      test_cuda (graph capture, wrapped pointers, overrides, 100x bit
#             identity); the backward suite on CUDA (simple backward kernel)
#   sanitize  compute-sanitizer memcheck and racecheck on a reduced sweep and on
#             small runs of the polyattn command (a loud failure if it is absent)
#   perf      polyattn run --backend cuda at a few sizes (time and oracle check)
# Where one command may run 10 minutes at most, run the groups in two or three
# commands (e.g. "devices sweep cuda", then "sanitize", then "perf").
# Exit status: 0 only if every step passed. SUMMARY.txt lists them.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=bench/gpu/lib.sh
source bench/gpu/lib.sh
pa_gpu_setup check-cuda polyattn test_forward test_backward test_cuda

group_devices() {
  nvidia-smi >"$LOG/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed (see $LOG/nvidia-smi.txt)"
  step devices 60 bash -c 'polyattn devices && polyattn devices | grep -Eq "^cuda +yes +yes"'
}

group_sweep() {
  step sweep-default 280 env POLYATTN_TEST_BACKENDS=cuda test_forward --verbose
  step sweep-simple 280 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=simple \
    test_forward --verbose
}

group_cuda() {
  step test-cuda-module 60 test_cuda --verbose --filter 'cuda_module/*'
  step test-cuda 240 test_cuda --verbose --filter 'cuda/*'
  # The backward (simple fp32 kernel, bwd_simple.cu): the whole suite — sweep against
  # the oracle, finite differences, deterministic bit identity (2:4 runs on the simple
  # kernel; AUTO_BLOCK's backward is UNSUPPORTED by design: it takes the mask as BLOCK).
  step backward 280 env POLYATTN_TEST_BACKENDS=cuda test_backward --verbose --jobs 8
}

group_sanitize() {
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer \
        /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1 || true)
  # Small cases covering varlen, seqused_k, empty rows/keys, odd strides, windows,
  # ALiBi, softcap, GQA, block masks and Dv != D.
  SMALL_CASES=d32_s17,varlen_empty,varlen_causal_gqa,varlen_block,bhsd_varlen,seqused_k_varlen,seqlen_k_0,seqlen_q_0,window_0_0,strided_odd_dv,block16_per_head,alibi_softcap_window_gqa,dv128_d32
  RACE_CASES=d32_s17,varlen_empty,block16_per_head,strided_odd_dv
  SMALL_RUNS=(
    "--seq 128 --heads 2 --kv-heads 1 --dim 64 --dtype f16 --causal"
    "--seq-q 77 --seq-k 300 --heads 4 --kv-heads 2 --dim 40 --dim-v 72 --alibi --softcap 20 --window 32,8 --dtype bf16"
    "--seq 200 --heads 2 --dim 256 --dtype f32"
    "--seq 256 --heads 2 --dim 128 --dtype bf16 --sparsity block --density 0.5 --block 32"
  )
  if [ -z "$SAN" ]; then
    echo "compute-sanitizer: SKIPPED, not found on this machine (PATH, /usr/local/cuda*)" \
      | tee -a "$SUMMARY"
    FAILED=1
  else
    echo "compute-sanitizer: $SAN" | tee -a "$SUMMARY"
    SANOPTS=(--target-processes all --error-exitcode 99 --print-limit 20)
    for tool in memcheck racecheck; do
      cases=$SMALL_CASES
      [ $tool = racecheck ] && cases=$RACE_CASES
      for kernel in default simple; do
        step "$tool-sweep-$kernel" 150 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=$cases \
          $([ $kernel = simple ] && echo POLYATTN_CUDA_KERNEL=simple) \
          "$SAN" --tool $tool "${SANOPTS[@]}" test_forward --filter 'forward/sweep' --jobs 8
      done
      step "$tool-backward" 200 env POLYATTN_TEST_BACKENDS=cuda \
        POLYATTN_TEST_CASES=bw_d40_dv72,bw_varlen_empty,bw_seqused_k,bw_block32x16,bw_strided_odd,bw_alibi_bh_softcap \
        "$SAN" --tool $tool "${SANOPTS[@]}" test_backward --filter 'backward/sweep' --jobs 8
      i=0
      for args in "${SMALL_RUNS[@]}"; do
        i=$((i + 1))
        # shellcheck disable=SC2086 # one word per option
        step "$tool-run$i" 60 "$SAN" --tool $tool "${SANOPTS[@]}" \
          polyattn run --backend cuda --repeat 1 $args
      done
    done
  fi
}

group_perf() {
  PERF_RUNS=(
    "--dtype bf16 --batch 4 --heads 16 --dim 128 --seq 4096"
    "--dtype bf16 --batch 4 --heads 16 --dim 128 --seq 4096 --causal"
    "--dtype f16 --batch 8 --heads 32 --dim 64 --seq 2048"
    "--dtype bf16 --batch 1 --heads 16 --dim 256 --seq 8192 --causal"
    "--dtype f32 --batch 2 --heads 8 --dim 128 --seq 2048"
    "--dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 32768"
  )
  i=0
  for args in "${PERF_RUNS[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    step "run$i" 120 polyattn run --backend cuda --repeat 20 $args
    # the simple kernel on the same bf16/f16 problem, for the ratio
    case $args in *f32*) ;; *)
      # shellcheck disable=SC2086
      step "run$i-simple" 120 env POLYATTN_CUDA_KERNEL=simple polyattn run --backend cuda --repeat 5 $args ;;
    esac
  done
}

GROUPS_TO_RUN=("$@")
[ ${#GROUPS_TO_RUN[@]} -gt 0 ] || GROUPS_TO_RUN=(devices sweep cuda sanitize perf)
for g in "${GROUPS_TO_RUN[@]}"; do
  case $g in
    devices | sweep | cuda | sanitize | perf) "group_$g" ;;
    *) echo "check_cuda: unknown group '$g' (devices, sweep, cuda, sanitize, perf)"; exit 2 ;;
  esac
done

pa_gpu_finish
