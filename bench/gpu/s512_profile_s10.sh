#!/bin/bash
# Tenth session, R6 (issue 9, S=512; measurement only): where the hd128 S512 time goes
# on the persistent kernel (pingpong-rel-p-q2-os, B32 Hq16 bf16, 2048 query tiles of
# four key tiles). ncu's summary metrics and the source page (warp-state samples per
# SASS instruction, for scripts/ncu_source_classes.py), and the same summary metrics
# for PyTorch's cuDNN SDPA kernel on the same shape.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s512_profile_s10.sh
# Logs: bench/results/2026-12-01s10-tile/s512/.
gzip -d .devkit/lib/*.gz 2>/dev/null # carried compressed (64 MiB)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup s512_profile_s10 polyattn
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 512 --batch 32 --repeat 1"
timed s512-time polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 512 --batch 32 --repeat 200
step ncu-metrics 60 "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M $P
step ncu-source 90 sh -c "\"$NCU\" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --section WarpStateStats --section SourceCounters --page source --csv --print-source sass $P > \"$LOG/ncu-src-s512.csv\""
gzip -f "$LOG/ncu-src-s512.csv"
cat > /tmp/cudnn512.py <<'PY'
import torch
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(32, 16, 512, 128, device='cuda', dtype=torch.bfloat16) for _ in range(3))
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(5):
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
PY
step ncu-cudnn 90 "$NCU" --clock-control none --launch-skip 3 --launch-count 1 --metrics $M python3 /tmp/cudnn512.py
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
