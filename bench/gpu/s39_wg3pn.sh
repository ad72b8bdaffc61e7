#!/bin/bash
# Thirty-ninth session (issue 9): the checks of the three-consumer hd64 grid kernel's
# plain-only score pass ("serial-s3-rel-wg3-km-pn", bench/gpu/s39_wg3pn.patch), which
# s39.sh timed +2.6-2.9% over the default at hd64 S2048 / S4096 on the same module: the
# forward sweep forced onto it (plain cases run it, the others its form without "-pn"),
# and memcheck / racecheck / synccheck on it over hd64 cases (plain: causal, varlen, GQA,
# fp16; fallbacks: softcap, ALiBi). ~2 min.
# Not run in the thirty-ninth session: the calls after s39.sh got no machine (two failed
# starts, two refusals), and then too little device time was left. The module is s39.sh's.
# The fortieth session adopted the patch (decision 130) and ran these checks, on the build
# with the variant as hd64's grid default, in bench/gpu/s40.sh instead.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s39_wg3pn.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup s39_wg3pn test_forward
STEP_TAIL=0
V=POLYATTN_CUDA_HOPPER_VARIANT
# the candidate (V 2359324 = PA_HV_WG3_S3_BITS | PA_HV_KEEPM | PA_HV_PLAIN), bf16 and fp16
pa_require_kernels 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li64ELi2359324E' 2
[ "$FAILED" = 0 ] || pa_gpu_finish
export POLYATTN_TEST_BACKENDS=cuda
step_bg sweep-wg3-pn 200 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3-km-pn \
  test_forward --verbose --filter 'forward/sweep' --jobs 6
pa_hopper_sanitizers_bg wg3-pn 200 s1000,s1500_d64,s1500_causal_d64,varlen_causal_gqa,s2500_causal_d64,causal_sq113_sk64_emptyrows,s2500_causal_softcap_d64,s8400_alibi_d64 \
  $V=serial-s3-rel-wg3-km-pn
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
pa_gpu_pack_logs
pa_gpu_finish
