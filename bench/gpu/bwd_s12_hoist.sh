#!/bin/bash
# Twelfth session, round 5: the causal grouped order with the last pair's longest key
# blocks hoisted to the front (POLYATTN_CUDA_HOPPER_BWD_HOIST=n), against hd128 causal
# S16384's tail (the last pair's 256-tile block starting late). Suites with the hoist
# forced through the grouped order's test switch (groups of 3 and of 1), then
# compare_torch --backward on the causal rows, hoists 0 / 8 / 16 / 32 / 64 / 0.
# Needs bench/gpu/bwd_hoist_s12.patch applied (the hoist is not in the tree).
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_hoist.sh
# Logs: bench/results/2026-12-01s12-bwd/hoist/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_hoist test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
O=POLYATTN_CUDA_HOPPER_BWD_HOIST
step_bg bwd-g3-hoist2 120 $H POLYATTN_CUDA_HOPPER_BWD_GROUP=3 $O=2 test_backward --jobs 3
step_bg bwd-g1-hoist3 120 $H POLYATTN_CUDA_HOPPER_BWD_GROUP=1 $O=3 test_backward --jobs 3
step_bg bwd-default 120 test_backward --jobs 3
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
C="python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384 --causal 1"
step torch 150 $C --variants "$O=0,8,16,32,64,0#2" --json "$LOG/torch.jsonl"
python3 bench/gpu/torch_summary.py "$LOG/torch.jsonl" | tee -a "$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
