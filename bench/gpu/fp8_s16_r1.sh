#!/bin/bash
# Sixteenth session, R1 (issue 9, FP8): the V transpose by ldmatrix.trans / stmatrix
# ("-l", pa_fp8_transpose_v_ldsm) against the hand-reduced byte transposer of the
# defaults: fp8_check (V^T bytes, both transposers, 128- and 64-byte V^T rows),
# test_fp8 and the sanitizers on the -l variants, attn_speed, ncu source pages, and
# beside SDPA (bench/fp8_torch.py).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s16_r1.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s16_r1 test_fp8 attn_speed fp8_check
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
step fp8_check 30 fp8_check
grep -h "fp8_check D=" "$LOG/fp8_check.log" | tee -a "$SUMMARY"
# pingpong-gs-k192-t-l runs hd128 at 192 keys (64-byte V^T rows) and hd64 at 192 keys;
# pipe-gs-t-wg3-l runs hd64 with three consumers and hd128 at 128 keys (128-byte rows)
for v in "" pingpong-gs-k192-t-l pipe-gs-t-wg3-l; do
  pa_fp8_test "$v"
done
CASES=d64_sq1_sk255_mqa,d64_b2_gqa_s300_block,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d128_sq17_sk1000_window
pa_fp8_sanitizers $CASES pingpong-gs-k192-t-l pipe-gs-t-wg3-l
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 - $V=pingpong-gs-k192-t-l $V=pipe-gs-k192-t-l $V=pipe-gs-t-wg3-l - $V=pingpong-gs-k192-t-l
step speed-d64 60 $AS --dtype fp8 --batch 4 --heads 32 --dim 64 --seq 8192 - $V=pipe-gs-t-wg3-l $V=pingpong-gs-k192-t-l - $V=pipe-gs-t-wg3-l
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal - $V=pingpong-gs-k192-t-l - $V=pingpong-gs-k192-t-l
for f in speed-d128 speed-d64 speed-d128-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for v in pingpong-gs-k192-t pingpong-gs-k192-t-l; do
  step "src-$v" 60 sh -c "$V=$v \"$NCU\" --clock-control none -k regex:fp8 --launch-count 1 --section WarpStateStats --section SourceCounters --page source --csv --print-source sass attn_speed --backend cuda --dtype fp8 --warm 0 --iters 1 --batch 2 --heads 16 --dim 128 --seq 8192 - > \"$LOG/src-$v.csv\""
  gzip -f "$LOG/src-$v.csv"
done
step torch 200 python3 bench/fp8_torch.py --dims 128,64 --seqlens 2048,8192,16384 --causal both --variants=-,pingpong-gs-k192-t-l,pipe-gs-t-wg3-l
grep -E "polyattn|sdpa-(flash|cudnn)" "$LOG/torch.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
