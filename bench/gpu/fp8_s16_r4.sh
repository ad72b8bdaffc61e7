#!/bin/bash
# Sixteenth session, R4 (issue 9, FP8): part of the softmax's exponentials on the FMA
# pipe (frag_softmax.cuh pa_exp2_poly; variants "-x4" / "-x3" / "-x2": every 4th / 3rd /
# 2nd pair of a row's elements), after R2's timeline put a consumer's softmax at ~2000
# of a 192-key tile's ~3200 cycles with the special-function unit (MUFU.EX2 and the
# F2FP e4m3 packs) the busiest pipe. test_fp8 and sanitizers on the -x variants,
# attn_speed, the timeline of one, beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s16_r4.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s16_r4 test_fp8 attn_speed fp8_timeline
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
for v in pingpong-gs-k192-t-x4 pingpong-gs-k192-t-x3 pingpong-gs-k192-t-x2 pipe-gs-t-wg3-x4 pipe-gs-t-wg3-x3; do
  pa_fp8_test "$v"
done
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
P=pingpong-gs-k192-t
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 - $V=$P-x4 $V=$P-x3 $V=$P-x2 - $V=$P-x4 $V=$P-x3 $V=$P-x2
step speed-d64 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 - $V=pipe-gs-t-wg3-x4 $V=pipe-gs-t-wg3-x3 - $V=pipe-gs-t-wg3-x4 $V=pipe-gs-t-wg3-x3
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal - $V=$P-x4 $V=$P-x3 $V=$P-x2 -
for f in speed-d128 speed-d64 speed-d128-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
# variant numbers: -x4 4578, -x3 8674, -x2 12770 (hd128); pipe-gs-t-wg3-x3 9057
for a in "128 8674" "128 12770" "64 9057"; do
  n=timeline-${a// /-}
  step "$n" 60 fp8_timeline $a
  grep -E "^fp8_timeline|softmax|pack|one iteration" "$LOG/$n.log" | tee -a "$SUMMARY"
done
CASES=d64_sq1_sk255_mqa,d64_b2_gqa_s300_block,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d128_sq17_sk1000_window
pa_fp8_sanitizers $CASES $P-x3 pipe-gs-t-wg3-x3
step torch128 200 python3 bench/fp8_torch.py --dims 128 --seqlens 2048,8192,16384 --causal both --variants=-,$P-x4,$P-x3,$P-x2
step torch64 200 python3 bench/fp8_torch.py --dims 64 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-gs-t-wg3-x4,pipe-gs-t-wg3-x3
grep -hE "polyattn|sdpa-(flash|cudnn)" "$LOG/torch128.log" "$LOG/torch64.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
