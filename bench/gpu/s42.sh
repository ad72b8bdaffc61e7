#!/bin/bash
# Forty-second session (issue 9): the split (decision 133, not adopted), one call: the build
# CI ships (sm_90, no tuning variants) with bench/gpu/s42_split.patch applied to 095ee7a:
# hd128's and hd256's grid defaults handing their last rounds to the persistent stream-K
# kernel from 8192 keys. In order:
#  1. a check that the module holds both tail kernels (bf16 and fp16): hd128's
#     "pingpong-rel-p-q2-os-km1-pn-sk" (V 6844426) and hd256's "pingpong-rel-p-os-km-pn-sk"
#     (V 6574090);
#  2. clock_probe's sp* cases (two rounds, sustained at the power cap): the default beside
#     the split off (POLYATTN_CUDA_HOPPER_SPLIT=0) and cuDNN at hd128 S8192 / S16384 and
#     hd256 S8192 / S16384 (bf16; fp16 at S8192); hd256 S2048 / S4096 with the split forced
#     on (=1);
#  3. ncu's list of the kernels two cases launch with the split forced on 5 blocks (the
#     grid kernel, then the tail kernel);
#  4. in parallel: the forward suite by default; the sweep forced onto the split (=1, the
#     hd128 grid default by name, so hd128 and hd256 uniform plain cases split) on 5 and on
#     7 blocks; memcheck / racecheck / synccheck on three split cases on 5 blocks;
#  5. test_cuda by default (repeat_100_split_bf16 forces the split on 8 blocks);
#     compare_torch on the default (bf16 and fp16, hd128 and hd256, S 2048 / 4096).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s42.sh   (~8 min)
# Run twice in the forty-second session on H100s (332 s, 311 s; bench/results/2026-12-06s42-
# split/r1, r2): r1 with an earlier form of the patch (the grid launched whole, its last blocks
# exiting at once; the tail an ordinary launch), r2 with the patch as saved (a linear grid,
# the tail a programmatic dependent launch).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s42 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi6844426|256ELi6574090)E' 4 \
  test_forward test_cuda
pa_probe sp128s8k,sp128s16k,sp128h8k,sp256s8k,sp256s16k,sp256h8k,sp256s2k,sp256s4k 2 300
export POLYATTN_TEST_BACKENDS=cuda
SPLIT="POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_SPLIT=1 POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os-km1"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
# shellcheck disable=SC2086
step ncu-split 120 env $SPLIT POLYATTN_CUDA_HOPPER_BLOCKS=5 POLYATTN_TEST_CASES=s2048_d128,d256_s700_h3 \
  "$NCU" --metrics gpu__time_duration.sum -k regex:pa_hopper_fwd_kernel \
  test_forward --filter 'forward/sweep' --jobs 1
grep -oE 'pa_hopper_fwd_kernel<[^>]*>' "$LOG/ncu-split.log" | sort | uniq -c | tee -a "$SUMMARY"
step_bg sweep-default 300 test_forward --jobs 4
# shellcheck disable=SC2086
step_bg sweep-split-b5 300 env $SPLIT POLYATTN_CUDA_HOPPER_BLOCKS=5 \
  test_forward --verbose --filter 'forward/sweep' --jobs 2
# shellcheck disable=SC2086
step_bg sweep-split-b7 300 env $SPLIT POLYATTN_CUDA_HOPPER_BLOCKS=7 \
  test_forward --verbose --filter 'forward/sweep' --jobs 2
# shellcheck disable=SC2086
pa_hopper_sanitizers_bg split 300 s2048_d128,d256_s700_h3,s1000 $SPLIT POLYATTN_CUDA_HOPPER_BLOCKS=5
step_wait
pa_default_tail 128,256 200 200 --verbose
