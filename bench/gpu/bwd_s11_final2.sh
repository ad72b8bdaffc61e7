#!/bin/bash
# Eleventh session: two more processes of compare_torch --backward on the committed
# build (the final check's process read hd128 2-4% below R4/R5 for the same kernels):
# bf16, hd 128/64, S 2048/8192/16384, causal and not, flash only.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_final2.sh
# Logs: bench/results/2026-12-01s11-bwd/final2/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_final2 polyattn
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
for i in 1 2; do
  step torch-bwd-$i 120 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 \
    --dims 128,64 --seqlens 2048,8192,16384 --json "$LOG/torch-bwd-$i.jsonl"
  grep -E "^bf16|geomean" "$LOG/torch-bwd-$i.log" | cut -c1-150 | tee -a "$SUMMARY"
done
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
