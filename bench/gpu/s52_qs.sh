#!/bin/bash
# Fifty-second session (issue 9's S512): hd128's persistent kernel on one split Q buffer and
# three 128-key stages (PA_HV_QSPLIT, "-qs"), without and with consumer 1 a pingpong turn
# behind ("-lag"), decision 146. One call, on a module built with -DPA_CUDA_HOPPER_QS=1 in
# CMAKE_CUDA_FLAGS (both variants in both dtypes; -DPOLYATTN_CUDA_ARCHS=90 and xz, as in the
# fifty-first session, fit the carry; pa_gpu_start unpacks it):
#  1. a check that the module holds both, in bf16 and fp16, and a short sweep on "-qs-lag";
#     then the SASS loops and spill positions of the default and both (pa_sass_loops);
#  2. clock_probe's qs* cases (two rounds, sustained at the power cap): the default, both
#     variants by name and cuDNN, hd128 S512 / 1024 / 2048 / 4096, causal 2048, fp16 S512;
#  3. in parallel: the forward sweep forced onto each variant on 3 blocks (plain hd128 cases
#     run it, the rest the default), test_cuda (its ks_climb tests name both), and
#     memcheck / racecheck / synccheck on five hd128 cases with "-qs-lag" on 3 blocks.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s52_qs.sh   (~6 min)
# PROBE_CASES=a,b,... shortens step 2; NO_SAN=1 leaves the sanitizers out; PROBE_ONLY=1 stops
# after step 2.
# Bundle: git apply bench/gpu/s52_qs.patch, then scripts/gpu_devkit.sh --cuda-flags
# -DPA_CUDA_HOPPER_QS=1 (the same module also runs s43_stand.sh, whose kernels it holds).
# Run once, in the fifty-fourth session on an H100 with PROBE_ONLY=1 (no device machine started
# in the fifty-second and fifty-third): both variants slower, not kept (decision 146; results in
# bench/results/2026-12-08s54-qs/). The variants then left fwd_hopper.cu for s52_qs.patch,
# which applies to the commit that took them out and adds them back with test_cuda's names.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s52qs 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li128ELi(27791374|27856910)E' 4 \
  test_forward test_cuda
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
# a short run first: a variant that hangs or fails ends the call here
step smoke 60 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-s3-qs-lag-km1-pn-ks \
  POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=s2048_d128,varlen_empty_d128,d128_s128_b2 \
  test_forward --verbose --filter 'forward/sweep'
[ "$FAILED" = 0 ] || { pa_gpu_pack_keep smoke.log; pa_gpu_finish; }
# where ptxas's spills are (bf16 hd128: the default "-q2-os-km1-pn-ks", "-qs", "-qs-lag")
pa_sass_loops 'pa_hopper_fwd_kernelI13__nv_bfloat16Li128ELi(11038730|27791374|27856910)E'
pa_probe "${PROBE_CASES:-qss512,qss1k,qss2k,qss4k,qsc2k,qshs512}" 2 300
# PROBE_ONLY=1 ends the call here (a short device budget: the figures before the checks)
[ -z "${PROBE_ONLY:-}" ] || { pa_gpu_pack_keep probe.log; pa_gpu_finish; }
step_bg test-cuda 300 test_cuda --verbose --filter 'cuda/*' --jobs 1
for v in pingpong-rel-p-s3-qs-km1-pn-ks pingpong-rel-p-s3-qs-lag-km1-pn-ks; do
  pa_hopper_variant_sweep_bg "$v" "$v" POLYATTN_CUDA_HOPPER_BLOCKS=3
done
SAN_CASES=s2048_d128,d128_s128_b2,varlen_empty_d128,s4352_d128,s1000_causal_d128
[ -n "${NO_SAN:-}" ] || pa_hopper_sanitizers_bg qslag 300 "$SAN_CASES" \
  $V=pingpong-rel-p-s3-qs-lag-km1-pn-ks POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_ks_climb_tail
