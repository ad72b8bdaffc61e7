#!/bin/bash
# Fourteenth session, R4 (issue 3): the Ampere path's fused rows (m2k64f, m2k128f,
# m2jf: the softmax's exponentials computed per 16-key step of P.V, in one basic block
# with its mma; one barrier per tile). Forward suite forced onto the Ampere kernel with
# each; compare_torch with them as --variants (bf16, S >= 2048); ncu's source page of
# m2k64f (hd128 S8192) for the instruction mix and stalls.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s14_r4.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s14_r4 polyattn test_forward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda
for v in m2k64f m2k128f m2jf; do
  step sweep-$v 200 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_CUDA_AMPERE_VARIANT=$v test_forward --verbose --filter 'forward/sweep' --jobs 8
done
V=POLYATTN_CUDA_AMPERE_VARIANT
step torch128 200 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 --dims 128 \
  --seqlens 2048,8192,16384 --variants "$V=auto,m2k64f,auto#2,m2k64f#2" --json "$LOG/torch128.jsonl"
step torch64 200 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 --dims 64 \
  --seqlens 2048,8192,16384 --variants "$V=auto,m2jf,m2k128f,auto#2,m2jf#2" --json "$LOG/torch64.jsonl"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
step src-m2k64f 90 sh -c "POLYATTN_CUDA_KERNEL=ampere POLYATTN_CUDA_AMPERE_VARIANT=m2k64f \"$NCU\" --clock-control none -k regex:pa_ampere_fwd --launch-skip 1 --launch-count 1 --section WarpStateStats --section SourceCounters --section InstructionStats --page source --csv --print-source sass polyattn run --backend cuda --dtype bf16 --no-check --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 2 > \"$LOG/src-m2k64f.csv\""
gzip -f "$LOG"/*.csv
grep -hE "Synthesis" "$LOG"/sweep-*.log | sed 's/^/  /'
python3 bench/gpu/torch_summary.py "$LOG/torch128.jsonl" "$LOG/torch64.jsonl" | tee -a "$SUMMARY"
mkdir -p /tmp/keep && cp "$LOG"/*.jsonl /tmp/keep/
pa_gpu_pack_logs
cp /tmp/keep/*.jsonl "$LOG/"
pa_gpu_finish
