#!/bin/bash
# Fourteenth session, final run (issue 3): the committed code (R2's whole-tile copies,
# R3's rows not kept) built without the tuning rows. The forward suite with the
# default kernel choice and with the Ampere kernel forced; test_cuda (default; forced
# Ampere for its bf16 tests: graph capture = eager, 100 repeats bit-identical); the
# backward suite (its kernels include ampere_tile.cuh); memcheck and racecheck with
# the Ampere kernel forced; the standard sweep beside SDPA with the Ampere kernel
# forced; 2:4 against the Ampere kernel's dense time and BLOCK 64x64 at 25% (both on the
# Ampere kernel) against the default (Hopper) dense time; ncu source pages of the
# Hopper forward kernel (issue 9 diagnostics).
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s14_final.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s14_final polyattn test_forward test_cuda test_backward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda
step sweep-default 300 test_forward --verbose --jobs 8
step sweep-ampere 300 env POLYATTN_CUDA_KERNEL=ampere test_forward --verbose --jobs 8
step test-cuda 200 test_cuda --verbose
step test-cuda-ampere-bf16 200 env POLYATTN_CUDA_KERNEL=ampere test_cuda --verbose --filter 'cuda/*_bf16'
step backward 200 test_backward --verbose --jobs 8
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES=d128_s128_b2,s1000_causal_d128,d64_s64_h4,d72_sq17_sk255,dv32_d64,varlen_empty,varlen_causal_gqa,seqused_k,window_causal_left20,sq255_sk2048_window,varlen_window_alibi_bh,block16_per_head,strided_gqa_causal,bhsd,strided_varlen_causal
step memcheck-ampere 150 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=$CASES \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step racecheck-ampere 120 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=d128_s128_b2,s1000_causal_d128,d64_s64_h4,varlen_causal_gqa \
  "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step torch 240 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16,fp16 --dims 64,128 \
  --json "$LOG/torch-ampere.jsonl"
S="--backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 20 --no-check --vs-dense"
TIMED_LIMIT=60 timed nm24-vs-ampere polyattn run $S --vs-kernel ampere --sparsity 2:4
TIMED_LIMIT=60 timed block64-25-vs-default polyattn run $S --sparsity block --block 64 --density 0.25
# Diagnostics for issue 9 (no change to the Hopper kernels): ncu's source page of the
# default Hopper forward kernel at hd128 and hd64, S8192 bf16, as R1 did for the Ampere one.
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for d in 128 64; do
  step hopper-src-d$d 90 sh -c "\"$NCU\" --clock-control none -k regex:pa_hopper_fwd --launch-skip 1 --launch-count 1 --section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight --page source --csv --print-source sass polyattn run --backend cuda --dtype bf16 --no-check --batch 2 --heads $((2048 / d)) --dim $d --seq 8192 --repeat 2 > \"$LOG/hopper-src-d$d.csv\""
done
gzip -f "$LOG"/*.csv
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-cuda*.log "$LOG"/backward.log | sed 's/^/  /'
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck-ampere.log "$LOG"/racecheck-ampere.log
python3 bench/gpu/torch_summary.py "$LOG/torch-ampere.jsonl" | tee -a "$SUMMARY"
grep -E "geomean" "$LOG/torch.log" | tee -a "$SUMMARY"
mkdir -p /tmp/keep && cp "$LOG"/*.jsonl /tmp/keep/
pa_gpu_pack_logs
cp /tmp/keep/*.jsonl "$LOG/"
pa_gpu_finish
