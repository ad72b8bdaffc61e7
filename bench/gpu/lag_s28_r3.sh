#!/bin/bash
# Twenty-eighth session, R3 (issue 9): R1 put every head's partial last tile (hd64, 192-row
# tiles, S2048/S4096) at the grid's end and lost 1.3% to the idle skip alone at S2048 (the
# early heads' K/V left L2); here only the last n heads' partial tiles go last
# (POLYATTN_CUDA_HOPPER_LAG=n, n = 16, 32, 64: 8-32 MB of K/V at S2048). Predicted
# (a list-scheduling model of the grid, partial tiles at 0.72-0.83 of a full one): +0.8% at
# S2048, +1.3% at S4096 for any n >= 24. Correctness: the forward suite forced onto the
# three-consumer kernel with n = 1 and with n = every head; memcheck on the lagged order.
# As run: on bench/gpu/lag_s28_r3.patch (applies to 80cb928); measured −0.1% to +1.2% at S2048 and
# +0.4-0.5% at S4096 (under the prediction, within about twice the rounds' spread), not
# kept: without the patch POLYATTN_CUDA_HOPPER_LAG is not read and every contender runs the default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/lag_s28_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup lag_s28_r3 python3 nvidia-smi test_forward
STEP_TAIL=0
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-lag1 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 POLYATTN_CUDA_HOPPER_LAG=1 \
  test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-lagall 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 POLYATTN_CUDA_HOPPER_LAG=100000 \
  test_forward --filter 'forward/sweep' --jobs 4
step_bg memcheck-lag 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 POLYATTN_CUDA_HOPPER_LAG=1 \
  POLYATTN_TEST_CASES=s1500_d64,s8400_d64,d64_s64_h4 "$cs" --tool memcheck --error-exitcode 99 \
  --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
step_wait
unset POLYATTN_TEST_BACKENDS
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
grep -hE "ERROR SUMMARY" "$LOG"/memcheck-lag.log | sort | uniq -c | tee -a "$SUMMARY"
step probe 200 python3 bench/gpu/clock_probe.py --rounds 2 --cases l2k,l4k
pa_gpu_pack_keep probe.log
pa_gpu_finish
