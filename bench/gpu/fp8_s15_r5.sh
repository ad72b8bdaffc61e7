#!/bin/bash
# Fifteenth session, R5 (issue 9, FP8 hd128): three consumer warpgroups on 64-key tiles ("-k64-wg3": 192
# query rows per block, 512 threads, four warps per scheduler instead of three; at hd128
# the S and O registers leave room only for 64-key tiles), against the hd128 default
# (pingpong-gs-k192-t) and two consumers on 64-key tiles: test_fp8, sanitizers,
# attn_speed, and beside SDPA (bench/fp8_torch.py).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s15_r5.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s15_r5 test_fp8 attn_speed
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
for v in pipe-gs-t-k64-wg3; do
  pa_fp8_test "$v"
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck synccheck; do
  step "$tool" 90 env $V=pipe-gs-t-k64-wg3 POLYATTN_TEST_CASES=d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d128_sq17_sk1000_window,d128_seqused_k_b2 "$CS" --tool $tool test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool.log" | sed "s/^/$tool: /" | tee -a "$SUMMARY"
done
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
ALL="- $V=pipe-gs-t-k64-wg3 $V=pipe-gs-t-k64 $V=pipe-gs-k192-t -"
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 $ALL
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal $ALL
for f in speed-d128 speed-d128-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
step torch 200 python3 bench/fp8_torch.py --dims 128 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-gs-t-k64-wg3
grep -E "polyattn|sdpa-(flash|cudnn)" "$LOG/torch.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
