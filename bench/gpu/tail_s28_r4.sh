#!/bin/bash
# Twenty-eighth session, R4 (issue 9): the grid kernel's last partial round split along the
# keys (POLYATTN_CUDA_HOPPER_SPLIT_TAIL=k, a tuning setting; k:all splits every tile, for the
# tests). ncu (ncu_s28_tail.sh) put 4.4-4.6% of the SM-cycles idle at hd128 S8192/S16384:
# 2048 tiles are 15 rounds and 68 tiles on 132 SMs. Predicted (arithmetic on 16 rounds of
# ~111 us): k = 3 +1.3% (204 pieces: two rounds of a third, plus the merge launch), k = 2
# level (136 pieces: two rounds of a half), k = 5 ~+1.5% (340 pieces: three rounds of a
# fifth). Correctness first (the forward suite forced onto the Hopper grid kernels with
# every tile split, memcheck), then clock_probe's t8k / t16k (sustained, two rounds).
# As run: on bench/gpu/tail_s28_r4.patch (applies to 8605ba9). Not kept (sustained: k = 3 and
# 5 -0.1% to +0.7%, 0.7-1.6% more work per cycle at a 0-15 MHz lower clock; k = 2 -0.3% to -1.0%):
# without the patch POLYATTN_CUDA_HOPPER_SPLIT_TAIL is not read and every contender runs the default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/tail_s28_r4.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup tail_s28_r4 python3 nvidia-smi test_forward
STEP_TAIL=0
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper
V=POLYATTN_CUDA_HOPPER_VARIANT
T=POLYATTN_CUDA_HOPPER_SPLIT_TAIL
step_bg sweep-k176-3 150 env $V=pingpong-rel-k176-os $T=3:all test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-serial-2 150 env $V=serial $T=2:all test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-os-5 150 env $V=pingpong-rel-os $T=5:all test_forward --filter 'forward/sweep' --jobs 4
step_bg memcheck-split 150 env $V=pingpong-rel-k176-os $T=3:all \
  POLYATTN_TEST_CASES=d128_s128_b2,s2048_d128,causal_sq113_sk64_emptyrows,varlen_causal_gqa,s4352_d128 \
  "$cs" --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
step_wait
unset POLYATTN_TEST_BACKENDS POLYATTN_CUDA_KERNEL
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
grep -hE "ERROR SUMMARY" "$LOG"/memcheck-split.log | sort | uniq -c | tee -a "$SUMMARY"
step probe 150 python3 bench/gpu/clock_probe.py --rounds 2 --cases t8k,t16k
pa_gpu_pack_keep probe.log
pa_gpu_finish
