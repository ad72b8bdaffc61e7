#!/bin/bash
# Fifteenth session, R4 (issue 9, FP8 hd64): three consumer warpgroups ("-wg3": 192
# query rows per block, 512 threads, four warps per scheduler instead of three) on
# 128-key tiles, against the hd64 default (pipe-gs-k192-t): test_fp8, sanitizers,
# attn_speed, and beside SDPA (bench/fp8_torch.py).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s15_r4.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s15_r4 test_fp8 attn_speed
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
for v in pipe-gs-t-wg3 serial-gs-t-wg3; do
  pa_fp8_test "$v"
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck synccheck; do
  step "$tool" 90 env $V=pipe-gs-t-wg3 POLYATTN_TEST_CASES=d64_sq1_sk255_mqa,d64_b2_gqa_s300_block,d64_causal_s1000_tensor,d64_varlen_seqused "$CS" --tool $tool test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool.log" | sed "s/^/$tool: /" | tee -a "$SUMMARY"
done
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
ALL="- $V=pipe-gs-t-wg3 $V=serial-gs-t-wg3 $V=pipe-gs-k192 -"
step speed-d64 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 $ALL
step speed-d64-causal 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 --causal $ALL
for f in speed-d64 speed-d64-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
step torch 200 python3 bench/fp8_torch.py --dims 64 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-gs-t-wg3
grep -E "polyattn|sdpa-(flash|cudnn)" "$LOG/torch.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
