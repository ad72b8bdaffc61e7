#!/bin/bash
# Thirty-sixth session (issue 9), on the build CI ships with the persistent kernels'
# "-km1" defaults (decision 127): do the persistent kernels' bounds (PA_HOPPER_PERSIST_SK_*,
# 192-key grid above 2048 causal keys at hd64) still fall where the kernels cross? "-km1"
# made the persistent kernels 1-4% faster and the grid kernels' kept maximum (decision 124)
# the grid 1-4%: clock_probe's bd* cases, sustained, two rounds, the default on each side
# of a bound beside the other kernel (named by POLYATTN_CUDA_HOPPER_VARIANT) and cuDNN.
# Run in the thirty-sixth session on an H100 (every step passed; bench/results/2026-12-05s36-km1/bounds/).
# Run: source .devkit/env; OUT=dir bash bench/gpu/bounds_s36.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bounds_s36 python3 nvidia-smi
pa_gpu_state
STEP_TAIL=0
pa_probe bd64s2k,bd64s4k,bd64c4k,bd128s4k,bd128s8k,bd128c8k,bd128c16k
pa_gpu_pack_keep probe.log
pa_gpu_finish
