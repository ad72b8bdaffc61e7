#!/bin/bash
# Twenty-second session, decision 114: the FP8 forward's, the Hopper backward's and the
# decode kernel's tuning-only variants compiled only with POLYATTN_CUDA_TUNING_VARIANTS.
# The default build's suites on the H200 (forward, test_cuda, backward, test_fp8, the
# decode sweep), a forced name of an uncompiled variant running the default, and one
# timing of each default beside its earlier figures.
# Run: source .devkit/env; OUT=dir bash bench/gpu/gate_s22.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup gate_s22 nvidia-smi polyattn test_forward test_cuda test_backward test_fp8
pa_gpu_state
pa_cuda_suites
pa_fp8_test ""
pa_fp8_test serial
pa_fp8_test pipe # a tuning variant, not compiled: runs the default
export POLYATTN_TEST_BACKENDS=cuda
step bwd-ksplit 120 env POLYATTN_CUDA_HOPPER_BWD_VARIANT=ksplit POLYATTN_CUDA_HOPPER_BWD_DQ=bulk \
  test_backward --verbose --jobs 8 --filter 'backward/sweep*'
pa_decode_sweeps
step decode-k16 120 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_VARIANT=k16 \
  POLYATTN_TEST_CASES="$PA_DECODE_CASES" test_forward --verbose --filter 'forward/sweep' --jobs 8
grep -hE "Synthesis" "$LOG"/bwd-ksplit.log "$LOG"/decode-k16.log | tee -a "$SUMMARY"
unset POLYATTN_TEST_BACKENDS
A="polyattn run --backend cuda --no-check --repeat 20"
timed fp8-d128-s8192 env POLYATTN_CUDA_FP8=1 $A --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192
timed fp8-d64-s8192 env POLYATTN_CUDA_FP8=1 $A --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192
timed bwd-d128-s8192 $A --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --backward
timed bwd-d64-s8192 $A --dtype bf16 --batch 2 --heads 32 --dim 64 --seq 8192 --backward
timed decode-32k $A --dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 32768
pa_gpu_pack_logs
pa_gpu_finish
