#!/bin/bash
# Fortieth session (issue 9): two candidates, named variants in a module built with
# bench/gpu/s40_wg3p.patch (the build CI ships otherwise): hd64's three-consumer kernel on
# the persistent walk with two Q buffers, the plain-only pass and the kept maximum,
# "serial-s3-rel-wg3-p-q2-km-pn" and its form with O through shared memory
# "serial-s3-rel-wg3-p-q2-os-km-pn" (ptxas: 64 / 68 bytes of spills, as the persistent
# default's). clock_probe's w3p* cases (hd64 S512-4096, causal 2048: the default, both
# candidates, cuDNN), then the sweep forced onto each candidate on 3 blocks and memcheck /
# racecheck / synccheck on the second over hd64 cases.
# Run in the fortieth session on an H100 (183 s; bench/results/2026-12-06s40-wg3p/): +0.7% at
# S2048 only, not kept (decision 130's last item); the patch applies to 1e2b61f and later.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s40_wg3p.sh   (~3 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V 2371612 / 2387996 (without / with OST), bf16 and fp16
pa_gpu_start s40_wg3p 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li64ELi(2371612|2387996)E' 4 test_forward
V=POLYATTN_CUDA_HOPPER_VARIANT
pa_probe w3p2k,w3p4k,w3p1k,w3p512,w3pc2k 2 240
export POLYATTN_TEST_BACKENDS=cuda
for v in serial-s3-rel-wg3-p-q2-km-pn serial-s3-rel-wg3-p-q2-os-km-pn; do
  step_bg "sweep-$v" 240 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 $V=$v \
    test_forward --verbose --filter 'forward/sweep' --jobs 3
done
pa_hopper_sanitizers_bg wg3p 240 s1000,s1500_d64,s1500_causal_d64,varlen_causal_gqa,causal_sq113_sk64_emptyrows,s2500_causal_softcap_d64 \
  $V=serial-s3-rel-wg3-p-q2-os-km-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
pa_gpu_pack_keep probe.log
pa_gpu_finish
