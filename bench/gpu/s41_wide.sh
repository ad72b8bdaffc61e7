#!/bin/bash
# Forty-first session (issue 9): the stream-K tail (decision 132) on wide key tiles, so that
# the persistent hd128 kernel can run past 4096 keys: "pingpong-rel-p-q2-os-k160-km1-pn-sk"
# (160-key tiles, both Q buffers, O through shared memory: 227 KiB) and
# "pingpong-rel-p-k176-km1-pn-sk" (176-key tiles, one Q buffer, O from registers), "full"
# in the module this runs (candidates: bench/gpu/s41_wide.patch, which applies to ca11089;
# not kept). In order of need:
#  1. a check that the module holds them (bf16 and fp16);
#  2. the sweep forced onto each on 3 blocks, in parallel;
#  3. clock_probe's sw* cases (two rounds, sustained): the default (the grid's 176-key
#     kernel above 4096 keys), both candidates, the 128-key persistent tail and cuDNN;
#  4. the Ampere kernel beside SDPA flash at 32 / 64 heads and at 33 / 66 (whole rounds of its
#     264 blocks: how much its part-full last round costs);
#  5. memcheck / racecheck / synccheck on each on 3 blocks over s2048_d128.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s41_wide.sh   (~5 min)
# Run in the forty-first session on an H100 (230 s; bench/results/2026-12-06s41-wide/).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V 6844554 = PA_HV_SHORT_BITS | PA_HV_K160 | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK,
# 6820362 = PINGPONG | RELEASE | PERSIST | K176 | KEEPM1 | PLAIN | SK
pa_gpu_start s41w 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li128ELi(6844554|6820362)E' 4 \
  test_forward
V=POLYATTN_CUDA_HOPPER_VARIANT
K160=pingpong-rel-p-q2-os-k160-km1-pn-sk
K176=pingpong-rel-p-k176-km1-pn-sk
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg k160-b3 $K160 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg k176-b3 $K176 POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
pa_check_summary
pa_probe sw128s4k,sw128s8k,sw128s16k,sw128h8k 2 360
# the Ampere kernel's last round: whole rounds of its 264 blocks (33 / 66 heads) against 32 / 64
step probe-ampere-h32 120 python3 -u bench/gpu/clock_probe.py --rounds 2 --cases ta128s8k,ta64s8k \
  --tokens 8192 --hidden 4096
step probe-ampere-h33 120 python3 -u bench/gpu/clock_probe.py --rounds 2 --cases ta128s8k,ta64s8k \
  --tokens 8192 --hidden 4224
grep -hE "^ta" "$LOG"/probe-ampere-h3*.log | tee -a "$SUMMARY" >/dev/null
pa_hopper_sanitizers_bg k160 200 s2048_d128 $V=$K160 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sanitizers_bg k176 200 s2048_d128 $V=$K176 POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
pa_check_summary
pa_gpu_pack_keep probe.log probe-ampere-h32.log probe-ampere-h33.log
pa_gpu_finish
