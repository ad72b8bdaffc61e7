#!/bin/bash
# Forty-second session (issue 9): the grid kernels' cut last round (decision 133, not
# adopted), one call: the build CI ships (sm_90, no tuning variants) with
# bench/gpu/s42_lr.patch applied to 095ee7a. In order:
#  1. a check that the module holds the three grid defaults (bf16): hd64's three-consumer
#     "-pn" (V 2359324), hd128's 176-key (V 541194), hd256's (V 278538);
#  2. clock_probe's lr* cases (two rounds, sustained at the power cap): the default beside
#     the cut off (POLYATTN_CUDA_HOPPER_LAST_ROUND=0) and cuDNN;
#  3. ncu's grid sizes of test_cuda's repeat_100_cut_bf16 (first launches only): 176 tiles
#     of 192 rows on 132 SMs, so 132 whole tiles and 44 x 3 pieces = 264 blocks;
#  4. in parallel: the forward suite by default; the sweep forced onto the Hopper kernels
#     with the cut forced (=3 / =2) on 5 / 3 "SMs" (POLYATTN_CUDA_HOPPER_BLOCKS), with
#     hd128's grid default by name (hd64: the two-consumer grid kernel) / hd64's
#     three-consumer one; memcheck / racecheck / synccheck on three cut cases;
#  5. test_cuda by default (repeat_100_cut_bf16: the cut by default, 100 runs
#     bit-identical); compare_torch on the default (bf16 and fp16, hd64 and hd128, S 2048 /
#     4096).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s42_lr.sh   (~7 min)
# Run once in the forty-second session on an H100 (293 s; bench/results/2026-12-06s42-lr/).
# The ncu step's grep for the summary missed ncu's "<...>(<unnamed>...) (264, 1, 1)" lines
# (they are in ncu-cut.log inside logs.tgz); mended below after the run.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s42lr 'pa_hopper_fwd_kernelI13__nv_bfloat16Li(64ELi2359324|128ELi541194|256ELi278538)E' 3 \
  test_forward test_cuda
pa_probe lr64s2k,lr64s4k,lr64h4k,lr128s8k,lr128s16k,lr256s2k,lr256s8k,lr256s16k 2 300
export POLYATTN_TEST_BACKENDS=cuda
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
step ncu-cut 120 "$NCU" --metrics gpu__time_duration.sum -k regex:pa_hopper_fwd_kernel \
  --launch-count 2 test_cuda --filter 'cuda/repeat_100_cut_bf16'
grep -E 'pa_hopper_fwd_kernel<[^>]*>\(.*\) \(' "$LOG/ncu-cut.log" | sed 's/, Context.*//' | tee -a "$SUMMARY"
A="POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_LAST_ROUND=3 POLYATTN_CUDA_HOPPER_BLOCKS=5 POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176-os-km1"
B="POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_LAST_ROUND=2 POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_CUDA_HOPPER_VARIANT=serial-s3-rel-wg3-km-pn"
step_bg sweep-default 300 test_forward --jobs 4
# shellcheck disable=SC2086
step_bg sweep-cut-a 300 env $A test_forward --verbose --filter 'forward/sweep' --jobs 2
# shellcheck disable=SC2086
step_bg sweep-cut-b 300 env $B test_forward --verbose --filter 'forward/sweep' --jobs 2
# shellcheck disable=SC2086
pa_hopper_sanitizers_bg cut 300 s2048_d128,d256_s700_h3,s1500_d64 $A
step_wait
pa_default_tail 64,128 200 200 --verbose
