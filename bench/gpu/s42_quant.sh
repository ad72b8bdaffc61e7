#!/bin/bash
# Forty-second session (issue 9): does hd64's three-consumer grid kernel lose its ratio to
# cuDNN at S2048 / S4096 to the part-filled last query tile of each head (192-row tiles:
# 2048 = 10 x 192 + 128, 4096 = 21 x 192 + 64, so one tile per head runs two consumers or
# one of three)? clock_probe's q64* cases (the default beside cuDNN, two rounds, sustained
# at the power cap) at those lengths and at 2304 / 4224 (whole tiles), each pair on about
# the same tokens. The build CI ships, the committed kernels (095ee7a's).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s42_quant.sh   (~3 min)
# Run once in the forty-second session on an H100 (58 s; bench/results/2026-12-06s42-quant/).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s42q 'pa_hopper_fwd_kernelI13__nv_bfloat16Li64ELi2359324E' 1 test_forward
step probe-a 200 python3 -u bench/gpu/clock_probe.py --rounds 2 --tokens 18432 --cases q64s2k,q64s2304
step probe-b 120 python3 -u bench/gpu/clock_probe.py --rounds 2 --tokens 16384 --cases q64s4k
step probe-c 120 python3 -u bench/gpu/clock_probe.py --rounds 2 --tokens 16896 --cases q64s4224
grep -hE "^q64" "$LOG"/probe-*.log | tee -a "$SUMMARY" >/dev/null
pa_gpu_pack_keep probe-a.log probe-b.log probe-c.log
pa_gpu_finish
