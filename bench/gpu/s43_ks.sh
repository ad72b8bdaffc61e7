#!/bin/bash
# Forty-third session (issue 9): the kept maximum decided on the row sums (PA_HV_KSUM,
# decision 134), one call: the build CI ships (sm_90, no tuning variants) with the seven
# bf16 "-ks" probes of the Hopper defaults' kernels. In order:
#  1. a check that the module holds the seven probes (bf16);
#  2. clock_probe's ks* cases (two rounds, sustained at the power cap): each default beside
#     its probe by name and cuDNN;
#  3. in parallel: test_cuda's ks_climb tests (scores built to take the probes' slow steps:
#     the reference moved by powers of two, and overflowed exponentials recomputed by
#     mma.sync) and the rest of test_cuda; the forward sweep forced onto each probe (bf16
#     cases; fp16 ones run the default); compute-sanitizer memcheck / racecheck / synccheck
#     on the ks_climb tests.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s43_ks.sh   (~9 min)
# Run in the forty-third session on an H100 (441 s; bench/results/2026-12-06s43-ks/), with the
# sums of pa_tile_softmax_keep_sum in one chain (four since).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s43ks 'pa_hopper_fwd_kernelI13__nv_bfloat16Li(128ELi(8929802|11038730|15233034)|64ELi(10747932|8945688|11235338)|256ELi8667146)E' 7 \
  test_forward test_cuda
pa_probe "${PROBE_CASES:-ks128s8k,ks128s16k,ks128s4k,ks64s2k,ks64s4k,ks64s8k,ks256s8k,ks128s512,ks64s512,ks128c8k}" 2 300
export POLYATTN_TEST_BACKENDS=cuda
pa_cuda_checks 'cuda/ks_climb*'
for v in pingpong-rel-k176-os-km1-ks pingpong-rel-p-q2-os-km1-pn-sk-ks serial-s3-rel-wg3-km-pn-ks \
         serial-rel-wg3-k192-km1-ks; do
  step_bg "sweep-$v" 300 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=$v \
    POLYATTN_CUDA_HOPPER_BLOCKS=5 test_forward --verbose --filter 'forward/sweep' --jobs 2
done
step_wait
for v in pingpong-rel-p-q2-os-km1-pn-ks pingpong-rel-p-q2-os-lag-km1-pn-ks pingpong-rel-os-km-ks; do
  step_bg "sweep-$v" 300 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=$v \
    POLYATTN_CUDA_HOPPER_BLOCKS=3 test_forward --verbose --filter 'forward/sweep' --jobs 2
done
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
grep -hE "ks_climb|-ks: " "$LOG/test-cuda.log" | cut -c1-220 | tee -a "$SUMMARY"
pa_gpu_pack_keep probe.log
pa_gpu_finish
