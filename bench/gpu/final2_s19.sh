#!/bin/bash
# Nineteenth session, the check after R4 (decision 110's bounds: the persistent kernel
# takes hd128 problems up to 4096 keys and hd64 causal ones up to 4096; host side only,
# the kernels are final_s19.sh's): the forward suite (default choice), test_cuda, the
# backward suite; clock_probe.py (one round) at the lengths that changed kernel, against
# the kernel each ran before and cuDNN.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final2_s19.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final2_s19 python3 nvidia-smi test_forward test_cuda test_backward
STEP_TAIL=0
pa_cuda_suites
step probe 200 python3 bench/gpu/clock_probe.py --rounds 1 --cases g2048,g4096,g64c4k
pa_gpu_pack_keep probe.log
pa_gpu_finish
