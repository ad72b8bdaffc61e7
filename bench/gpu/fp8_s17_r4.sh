#!/bin/bash
# Seventeenth session, R4 (issue 9, FP8): a persistent grid (PA_FP8_PERSIST, "-p": one
# block per SM walking every 132nd query tile; the next tile's Q loads once the last S of
# this one has landed, its first K/V after this tile's last transpose), after R3 put
# ~9-10k of a 142k-cycle block outside the loop's iterations. test_fp8 and sanitizers on
# the -p variants (every oracle case, causal and varlen included, through the persistent
# walk), speed against the defaults in one process, beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s17_r4.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s17_r4 test_fp8 attn_speed fp8_timeline fp8_timeline_ctl
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
P=pingpong-gs-k192-t
for v in "" $P-p pipe-gs-t-wg3-r-p serial-gs-k192-t-p; do pa_fp8_test "$v"; done
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 - $V=$P-p - $V=$P-p -
step speed-d64 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 - $V=pipe-gs-t-wg3-r-p - $V=pipe-gs-t-wg3-r-p -
step speed-d128-s2k 60 $AS --dtype fp8 --batch 8 --heads 16 --dim 128 --seq 2048 - $V=$P-p - $V=$P-p -
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal - $V=$P-p -
for f in speed-d128 speed-d64 speed-d128-s2k speed-d128-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
# 482 default (now 56/224 registers), 4578 its -p; hd64 2913 (-r), 7009 (-r-p)
for a in "128 482" "128 4578" "64 2913" "64 7009"; do
  n=ctl-${a// /-}
  step "$n" 60 fp8_timeline_ctl $a
  grep -E "^fp8_timeline" "$LOG/$n.log" | tee -a "$SUMMARY"
done
step timeline-128-482-8 60 fp8_timeline 128 482 8
grep -E "^fp8_timeline|one iteration|whole block|start to end|SM clock|beyond" "$LOG/timeline-128-482-8.log" | tee -a "$SUMMARY"
CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d128_sq17_sk1000_window,d64_varlen_seqused_nolse,d128_b2_gqa_s300_nolse
pa_fp8_sanitizers $CASES $P-p pipe-gs-t-wg3-r-p
step torch128 200 python3 bench/fp8_torch.py --dims 128 --seqlens 2048,8192,16384 --causal both --variants=-,$P-p,-
step torch64 200 python3 bench/fp8_torch.py --dims 64 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-gs-t-wg3-r-p,-
grep -hE "polyattn|sdpa-(flash|cudnn)" "$LOG/torch128.log" "$LOG/torch64.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
