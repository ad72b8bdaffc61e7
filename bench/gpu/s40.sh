#!/bin/bash
# Fortieth session (issue 9): the final check of decision 130, one call: the build CI
# ships (sm_90, no tuning variants) with hd64's grid default for plain problems on the
# three-consumer kernel's plain-only score pass, "serial-s3-rel-wg3-km-pn" (plain hd64
# problems above PA_HOPPER_PERSIST_SK_D64 keys and below the 192-key kernel's bounds; the
# others run "serial-s3-rel-wg3-km" as before). In order of need:
#  1. a check that the module holds the new kernels (bf16 and fp16);
#  2. clock_probe's wn* cases (two rounds, sustained at the power cap): the default beside
#     the form without "-pn" and cuDNN at S2048 / S4096 (bf16) and S4096 (fp16), the
#     persistent kernel at S2048, the new form by name at S1024 and S8192 (the bounds);
#  3. in parallel: the forward suite by default, the sweep forced onto the new form by
#     name, memcheck / racecheck / synccheck by default over hd64 cases it runs (plain,
#     causal, varlen GQA, empty rows) and cases that fall back (softcap, ALiBi);
#  4. test_cuda; compare_torch on the default (bf16 and fp16, hd 64, S 2048 / 4096).
# Run in the fortieth session on an H100 (208 s; bench/results/2026-12-06s40/); the run had
# the start written out, gathered into lib.sh's pa_gpu_start afterwards, and its end, gathered
# into pa_default_tail in the forty-first session; the commands unchanged.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s40.sh   (~4 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V 2359324 = PA_HV_WG3_S3_BITS | PA_HV_KEEPM | PA_HV_PLAIN, bf16 and fp16
pa_gpu_start s40 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li64ELi2359324E' 2 test_forward test_cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
pa_probe wn64s2k,wn64s4k,wn64h4k,wn64s1k,wn64s8k 2 240
export POLYATTN_TEST_BACKENDS=cuda
step_bg sweep-default 300 test_forward --jobs 4
step_bg sweep-wg3-pn 300 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3-km-pn \
  test_forward --verbose --filter 'forward/sweep' --jobs 3
pa_hopper_sanitizers_bg default 300 s1000,s1500_d64,s1500_causal_d64,varlen_causal_gqa,s2500_causal_d64,causal_sq113_sk64_emptyrows,s2500_causal_softcap_d64,s8400_alibi_d64
step_wait
pa_default_tail 64 120 100
