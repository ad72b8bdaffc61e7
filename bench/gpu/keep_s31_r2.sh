#!/bin/bash
# Thirty-first session, R2 (issue 9), written after R1 and NOT run in that session (no
# device was lent after R1): the kept maximum ("-km", PA_HV_KEEPM; R1 measured it +3.6-4.1%
# on hd128's 176-key grid kernel, +0.7-2% on hd64's grid kernels, mixed on the persistent
# ones) and "-km1" (PA_HV_KEEPM1: the same without the vote on a query tile's first key
# tile, where every m is -inf). Correctness in parallel: the forward suite by default,
# forced onto each "-km1" (the persistent ones on 3 blocks), sanitizers on the grid kernels'
# "-km" (the candidates for their default; R1 ran them only on the persistent kernel) over
# cases those kernels run (ALiBi over 8400 keys moves the maximum on many tiles); then
# clock_probe (two rounds, sustained): default, "-km", "-km1" and cuDNN on each kernel.
# Needs a tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON).
# Run: source .devkit/env; OUT=dir bash bench/gpu/keep_s31_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup keep_s31_r2 python3 nvidia-smi test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
V=POLYATTN_CUDA_HOPPER_VARIANT
GRID=s1500_d64,s8400_d64,s4352_d128,s2500_causal_d64,s8400_alibi_d64,s1500_causal_d64
export POLYATTN_TEST_BACKENDS=cuda
step_bg sweep-default 300 test_forward --jobs 2
pa_hopper_variant_sweep_bg lag-km1 pingpong-rel-p-q2-os-lag-km1 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg p-km1 pingpong-rel-p-q2-os-km1 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg k176-km1 pingpong-rel-k176-os-km1
pa_hopper_variant_sweep_bg k192-km1 serial-rel-wg3-k192-km1
pa_hopper_variant_sweep_bg wg3-km1 serial-s3-rel-wg3-km1
for v in pingpong-rel-k176-os-km serial-s3-rel-wg3-km serial-rel-wg3-k192-km; do
  pa_hopper_sanitizer step_bg "memcheck-$v" 300 2 memcheck "$GRID" $V=$v
  pa_hopper_sanitizer step_bg "racecheck-$v" 300 2 racecheck "$GRID" $V=$v
done
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
[ "$FAILED" = 0 ] && step probe 420 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases kq128s8k,kq128s16k,kq128c16k,kq64s4k,kq64s8k,kq64c8k,kq64s512,kq64s1k,kq64c2k,kq128s512,kq128s1k
pa_gpu_pack_keep probe.log
pa_gpu_finish
