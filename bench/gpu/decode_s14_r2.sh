#!/bin/bash
# Fourteenth session, decode R2 (issue 3; settings only, no rebuild): with the swizzled
# ring (R1), the grid shapes again, under graph replay: 2 warps (splits) per block (two
# blocks per SM, 256 blocks at 4k: the shape of cuDNN's and flash's split kernels),
# 16-key tiles with 4 warps per block (two blocks per SM), against the default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s14_r2.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s14_r2 polyattn
V="default:;w2:POLYATTN_CUDA_DECODE_WARPS=2;k16-w4:POLYATTN_CUDA_DECODE_VARIANT=k16,POLYATTN_CUDA_DECODE_WARPS=4;w3:POLYATTN_CUDA_DECODE_WARPS=3;default-again:"
step perf 150 python3 bench/gpu/decode_variants.py --timers graph --variants "$V" --json "$LOG/decode-shapes.jsonl"
grep -vh "^#" "$LOG/perf.log" | grep -E "^ +[0-9]" | cut -c1-110 | tee -a "$SUMMARY"
pa_gpu_finish
