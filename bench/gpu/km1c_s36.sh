#!/bin/bash
# Thirty-sixth session (issue 9), on a tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON)
# with the persistent kernels' "-km1" defaults (decision 127): "-km1" (the kept maximum
# without the vote on a query tile's first key tile) on the grid kernels, whose default is
# "-km" (decision 124): kq* cases, sustained, two rounds, each the default, "-km" (the same
# kernel as the default: the noise between two runs of one kernel), "-km1" and cuDNN, at
# hd64 S2048 / S4096 (three consumers, 128 keys), S8192 and causal 8192 (192 keys), hd128
# S8192, S16384, causal 16384 (176 keys). Timings only: the forced sweeps follow in the
# final check if it is adopted.
# Run in the thirty-sixth session on an H100 (every step passed; bench/results/2026-12-05s36-km1/km1c/).
# Run: source .devkit/env; OUT=dir bash bench/gpu/km1c_s36.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup km1c_s36 python3 nvidia-smi
pa_gpu_state
STEP_TAIL=0
pa_probe kq64s2k,kq64s4k,kq64s8k,kq64c8k,kq128s8k,kq128s16k,kq128c16k
pa_gpu_pack_keep probe.log
pa_gpu_finish
