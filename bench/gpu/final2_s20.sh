#!/bin/bash
# Twentieth session, the standard sweep beside PyTorch SDPA with the committed defaults
# (decision 111): compare_torch.py (bf16 and fp16, hd 64/128, S 512-16384, causal and
# not, flash and cuDNN in the same process; its do_bench timer, so the first timings of
# the process run at a higher clock: decision 110), the user-facing comparison; its
# rows in torch.log / torch.jsonl.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final2_s20.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final2_s20 python3 nvidia-smi
STEP_TAIL=0
pa_gpu_state
step torch 300 python3 bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64,128 \
  --json "$LOG/torch.jsonl"
pa_gpu_pack_keep torch.log torch.jsonl
pa_gpu_finish
