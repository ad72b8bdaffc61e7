#!/bin/bash
# Thirty-eighth session (issue 9): bench/gpu/s37.sh's question and the answer's check in
# one call (this session's device time allowed one). Two builds of the CUDA module:
#   .devkit/lib: the tuning build of e366ccd (the five bf16 variants of s37.sh);
#   .devkitDEF/: the build CI ships (sm_90, no tuning variants) with all three candidates
#     adopted (bench/gpu/adopt_s38.patch): the persistent defaults' and hd256's default's
#     plain-only score pass ("-pn", plain problems; the others run the forms without it)
#     and hd64's 192-key default peeled ("-km1-pl"), fp16 too; plus its test_cuda.
# First, alone on the GPU: clock_probe (two rounds, sustained at the power cap) on the
# tuning build: pl64* (192-key default beside "-pl", "-km", cuDNN), ke256* (hd256's
# default beside "-km1", "-km-pn", cuDNN), pn* (the persistent defaults beside "-pn" and
# cuDNN at S512-2048). Then the checks, in parallel: the forward sweep forced onto each of
# the five tuning variants (the persistent ones on 3 blocks); on the adopted build the
# suite by default, test_cuda, memcheck / racecheck / synccheck over cases that run each
# adopted kernel and cases that fall back from it; the three sanitizers on hd256's "-km1"
# (tuning build). ~9 min.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s38.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz .devkitDEF/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup s38 python3 nvidia-smi test_forward polyattn
pa_gpu_state
STEP_TAIL=0
pa_require_kernels 'pa_hopper_fwd_kernelI13__nv_bfloat16Li(64ELi1605656|256ELi540682|256ELi2375690|128ELi2650122|64ELi2846730)E' 5
DEF=$PWD/.devkitDEF
[ -f "$DEF/libpolyattn-cuda.so" ] && [ -x "$DEF/test_cuda" ] || { echo "no $DEF"; exit 2; }
md5sum .devkit/lib/libpolyattn-cuda.so "$DEF/libpolyattn-cuda.so" | tee -a "$SUMMARY"
POLYATTN_BACKEND_PATH=$DEF polyattn devices | grep -E "^cuda" | tee -a "$SUMMARY"
[ "$FAILED" = 0 ] || pa_gpu_finish
pa_probe pl64s8k,pl64c8k,pl64s16k,ke256s8k,ke256c8k,ke256s16k,pn128s512,pn128s2k,pn64s512,pn64s1k 2 300
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg k192-pl serial-rel-wg3-k192-km1-pl
pa_hopper_variant_sweep_bg d256-km1 pingpong-rel-os-km1
pa_hopper_variant_sweep_bg d256-pn pingpong-rel-os-km-pn
pa_hopper_variant_sweep_bg p-pn pingpong-rel-p-q2-os-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg lag-pn pingpong-rel-p-q2-os-lag-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
step_bg sweep-def 240 env POLYATTN_BACKEND_PATH="$DEF" test_forward --jobs 4
step_bg test-def-cuda 120 env POLYATTN_BACKEND_PATH="$DEF" "$DEF/test_cuda" --filter 'cuda/*'
# adopted kernels: s8400_d64 (192-key, peeled), s1500_d64 / s1500_causal_d64 (hd64
# persistent), s1000_causal_d128 / d128_s128_b2 (hd128 persistent), d256_s255 /
# s2048_causal_d256 (hd256); their fallbacks: softcap, ALiBi, a block list
HCASES=s8400_d64,s1500_d64,s1500_causal_d64,s1000_causal_d128,d128_s128_b2,d256_s255,s2048_causal_d256,s2500_causal_softcap_d64,d256_alibi_softcap_window,block128_hopper_list_empty_rows,causal_sq113_sk64_emptyrows
pa_hopper_sanitizers_bg def 240 "$HCASES" POLYATTN_BACKEND_PATH="$DEF"
pa_hopper_sanitizers_bg d256-km1 240 d256_s255,d256_varlen_causal_gqa,s2048_causal_d256 \
  $V=pingpong-rel-os-km1
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
pa_gpu_pack_keep probe.log
pa_gpu_finish
