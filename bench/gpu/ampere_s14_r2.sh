#!/bin/bash
# Fourteenth session, R2 (issue 3): the Ampere path with whole-tile K/V copies
# (pa_tile_load_full, ampere_tile.cuh). The forward suite with the Ampere kernel
# forced, test_cuda forced (graph capture = eager, 100 repeats bit-identical),
# memcheck and racecheck on small cases that take both copy paths, timings, the
# standard sweep beside PyTorch SDPA (flash, cuDNN) with the Ampere kernel forced, and
# ncu's source page of the hd128 kernel (instruction mix against R1).
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s14_r2.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s14_r2 polyattn test_forward test_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda
A="polyattn run --backend cuda --dtype bf16 --no-check --repeat 30"
POLYATTN_CUDA_KERNEL=ampere timed t-d128-s8192 $A --batch 2 --heads 16 --dim 128 --seq 8192
POLYATTN_CUDA_KERNEL=ampere timed t-d128-s8192-causal $A --batch 2 --heads 16 --dim 128 --seq 8192 --causal
POLYATTN_CUDA_KERNEL=ampere timed t-d64-s8192 $A --batch 2 --heads 32 --dim 64 --seq 8192
POLYATTN_CUDA_KERNEL=ampere timed t-d64-s8192-causal $A --batch 2 --heads 32 --dim 64 --seq 8192 --causal
step sweep-ampere 300 env POLYATTN_CUDA_KERNEL=ampere test_forward --verbose --jobs 8
step test-cuda-ampere 120 env POLYATTN_CUDA_KERNEL=ampere test_cuda --verbose --filter 'cuda/*'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES=d128_s128_b2,s1000_causal_d128,d64_s64_h4,d72_sq17_sk255,dv32_d64,varlen_empty,varlen_causal_gqa,seqused_k,window_causal_left20,sq255_sk2048_window,varlen_window_alibi_bh,block16_per_head,strided_gqa_causal,bhsd,strided_varlen_causal
step memcheck-ampere 120 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=$CASES \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step racecheck-ampere 120 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=d128_s128_b2,s1000_causal_d128,d64_s64_h4,varlen_causal_gqa \
  "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step torch 240 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16,fp16 --dims 64,128 \
  --json "$LOG/torch-ampere.jsonl"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
step ampere-src 90 sh -c "POLYATTN_CUDA_KERNEL=ampere \"$NCU\" --clock-control none -k regex:pa_ampere_fwd --launch-skip 1 --launch-count 1 --section WarpStateStats --section SourceCounters --section InstructionStats --page source --csv --print-source sass polyattn run --backend cuda --dtype bf16 --no-check --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 2 > \"$LOG/ampere-src.csv\""
gzip -f "$LOG"/*.csv
grep -hE "^\[====\]|Synthesis" "$LOG"/sweep-ampere.log "$LOG"/test-cuda-ampere.log | sed 's/^/  /'
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck-ampere.log "$LOG"/racecheck-ampere.log | sort | uniq -c
grep -vE "^#" "$LOG/torch.log" | grep -E "^ *(bf16|fp16)|D=|TFLOP" | head -60
cp "$LOG/torch-ampere.jsonl" /tmp/keep.jsonl 2>/dev/null
pa_gpu_pack_logs
cp /tmp/keep.jsonl "$LOG/torch-ampere.jsonl" 2>/dev/null
pa_gpu_finish
