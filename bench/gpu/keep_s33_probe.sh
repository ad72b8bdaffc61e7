#!/bin/bash
# Thirty-third session, call 1 (issues 3 and 9): sustained timings (clock_probe, two rounds)
# of every kept-maximum tuning variant against the default it would replace and the
# reference library, before any correctness run, so the default build can be made while
# the device is idle: kp* (keep_s31_r1: the Hopper grid kernels' "-km", cuDNN; the
# persistent kernels' "-sp" names run the default in this tree), ak* (Ampere rows, SDPA
# flash), kd256* (hd256's "pingpong-rel-os-km", cuDNN), fk* (FP8 "-r-km", cuDNN bf16).
# Needs a tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON).
# Run: source .devkit/env; OUT=dir bash bench/gpu/keep_s33_probe.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup keep_s33_probe python3 nvidia-smi
pa_gpu_state
STEP_TAIL=0
step probe 560 python3 -u bench/gpu/clock_probe.py --rounds 2 \
  --cases kp128s8k,kp128s16k,kp64s2k,kp64s4k,kp64s8k,kp64c8k,ak128s8k,ak128c8k,ak128s16k,ak128s2k,ak64s8k,ak64c8k,ak64s2k,kd256s8k,kd256c8k,kd256s2k,fk128s8k,fk128c8k,fk128s16k,fk128s2k,fk64s8k,fk64c8k
pa_gpu_pack_keep probe.log
pa_gpu_finish
