#!/bin/bash
# Twenty-third session, R1 (issue 3): the Ampere path's pingpong rows (m2k64p at hd128,
# m2k128p at hd64: two groups of four warps per block taking turns at the tensor
# cores, fwd_tile.cuh; mma_peak.cu's part 2 says one warp per scheduler can nearly fill the
# pipe). CLI timings, one process per line; the forward suite with the Ampere kernel
# forced onto each pingpong row; test_cuda forced (graph capture = eager, 100 repeats
# bit-identical); the pingpong rows beside the default and SDPA in one process
# (compare_torch --variants: the variable is read at each call since this session).
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s23_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s23_r1 polyattn test_forward test_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere
V=POLYATTN_CUDA_AMPERE_VARIANT
A="polyattn run --backend cuda --dtype bf16 --no-check --repeat 30"
for v in auto m2k64p; do
  timed t-$v-d128-s8192 env $V=$v $A --batch 2 --heads 16 --dim 128 --seq 8192
  timed t-$v-d128-s8192-causal env $V=$v $A --batch 2 --heads 16 --dim 128 --seq 8192 --causal
done
for v in auto m2k128p; do
  timed t-$v-d64-s8192 env $V=$v $A --batch 2 --heads 32 --dim 64 --seq 8192
  timed t-$v-d64-s8192-causal env $V=$v $A --batch 2 --heads 32 --dim 64 --seq 8192 --causal
done
for v in m2k64p m2k128p; do
  step sweep-$v 300 env $V=$v test_forward --verbose --jobs 8
done
step test-cuda-m2k64p 120 env $V=m2k64p test_cuda --verbose --filter 'cuda/*'
step torch 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 \
  --dims 64,128 --seqlens 2048,8192,16384 --variants "$V=auto,m2k64p,m2k128p,auto#2" \
  --json "$LOG/torch-ampere.jsonl"
grep -hE "^\[====\]|Synthesis" "$LOG"/sweep-*.log "$LOG"/test-cuda-*.log | sed 's/^/  /' | tee -a "$SUMMARY"
pa_gpu_pack_keep torch.log torch-ampere.jsonl
pa_gpu_finish
