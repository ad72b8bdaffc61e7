#!/bin/bash
# Fourteenth session, R3 (issue 3): the Ampere path's tile rows after R2's whole-tile
# copies, built with POLYATTN_CUDA_TUNING_VARIANTS=ON. New rows: m2k64t (hd128, tree
# row maximum), m2k64l (and O rescaled only when a row's maximum moved), m2k128l and
# m2jl (hd64, the same two changes); old rows timed again: m2k64j (one barrier per
# tile), hd64 m2 / m2j / m2k128. Forward suite forced onto the Ampere kernel with each
# new row; then compare_torch with the rows as --variants, bf16, S >= 2048.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s14_r3.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s14_r3 polyattn test_forward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda
for v in m2k64l m2k128l m2jl; do
  step sweep-$v 200 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_CUDA_AMPERE_VARIANT=$v test_forward --verbose --filter 'forward/sweep' --jobs 8
done
V=POLYATTN_CUDA_AMPERE_VARIANT
step torch128 200 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 --dims 128 \
  --seqlens 2048,8192,16384 --variants "$V=auto,m2k64t,m2k64l,m2k64j,auto#2" --json "$LOG/torch128.jsonl"
step torch64 200 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 --dims 64 \
  --seqlens 2048,8192,16384 --variants "$V=auto,m2k128l,m2jl,m2j,m2k128,m2,auto#2" --json "$LOG/torch64.jsonl"
grep -hE "Synthesis" "$LOG"/sweep-*.log | sed 's/^/  /'
python3 bench/gpu/torch_summary.py "$LOG/torch128.jsonl" "$LOG/torch64.jsonl" | tee -a "$SUMMARY"
mkdir -p /tmp/keep && cp "$LOG"/*.jsonl /tmp/keep/
pa_gpu_pack_logs
cp /tmp/keep/*.jsonl "$LOG/"
pa_gpu_finish
