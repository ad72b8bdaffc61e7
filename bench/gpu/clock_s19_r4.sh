#!/bin/bash
# Nineteenth session, R4 (issue 9; measurement only, the committed build): where the
# default choice switches between the persistent kernel and the grid kernel (decision
# 89: Sk <= 1024, causal Sk <= 8192 at hd128 / 2048 at hd64), both timed sustained with
# the clock and power logged (clock_probe.py, two rounds), with the 176-key grid kernel
# (decision 110) where it applies, beside cuDNN.
# Run: source .devkit/env; OUT=dir bash bench/gpu/clock_s19_r4.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup clock_s19_r4 python3 nvidia-smi
STEP_TAIL=0
step probe 420 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases r4d128s2k,r4d128s4k,r4d128c8k,r4d128c4k,r4d64s2k,r4d64c8k,r4d64c4k
pa_gpu_pack_keep probe.log
pa_gpu_finish
