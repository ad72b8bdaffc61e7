#!/bin/bash
# Nineteenth session, R1 (issues 3 and 9; measurement only): the SM clock and board
# power beside each timing (bench/gpu/clock_probe.py): polyattn's defaults, the hd128
# 176-key tile, the Ampere kernel forced, hd256's lazy O rescale and the FP8 forward,
# beside SDPA flash and cuDNN on the same tensors, sustained (back to back) and
# compare_torch's timer, two rounds. The probe log's line after the step header names
# the sampler (pynvml where it imports, else nvidia-smi); nvidia-smi -q before and after.
# R1 ran the first form of clock_probe.py (these cases its default; the FP8 contender
# then lacked POLYATTN_CUDA_FP8=1 and failed with UNSUPPORTED).
# Run: source .devkit/env; OUT=dir bash bench/gpu/clock_s19_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup clock_s19_r1 python3 nvidia-smi
STEP_TAIL=0
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE >"$LOG/gpu-q.txt" 2>&1
python3 -c 'import pynvml; print("pynvml", pynvml.__file__)' >"$LOG/pynvml.txt" 2>&1
step probe 420 python3 bench/gpu/clock_probe.py --rounds 2 --cases d128,d64,d256,d128s512
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE >"$LOG/gpu-q-after.txt" 2>&1
pa_gpu_finish
