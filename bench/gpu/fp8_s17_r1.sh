#!/bin/bash
# Seventeenth session, R1 (issue 9, FP8): (a) the exponentials two per MUFU instruction in
# f16x2, fused with P's pack (PA_FP8_F16), on today's defaults (192-key tiles, tree
# maxima; the sixth session measured it only on 128-key tiles with the byte transposer);
# the SASS's MUFU forms; (b) the kernel without the V transpose's work (fp8_timeline
# built with PA_FP8_NO_TRANSPOSE: wrong results, the time a pre-transposed V would give).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s17_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s17_r1 test_fp8 attn_speed fp8_timeline fp8_timeline_ctl fp8_timeline_novt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
# SASS: per fp8 kernel of the timeline binary (all variants), MUFU forms and counts
cuobjdump -sass .devkit/bin/fp8_timeline_ctl > "$LOG/sass.txt" 2>&1
awk '/Function :/ {fn=$3} /MUFU/ {for (i=1;i<=NF;i++) if ($i ~ /^MUFU/) c[fn" "$i]++} END {for (k in c) print c[k], k}' \
  "$LOG/sass.txt" | grep -E 'Li(482|466|849|785)E' | sort -k2 | tee -a "$SUMMARY"
P=pingpong-gs-k192-t
F=pingpong-f16-s-k192-t
for v in $F pipe-f16-s-t-wg3; do pa_fp8_test "$v"; done
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 - $V=$F - $V=$F -
step speed-d64 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 - $V=pipe-f16-s-t-wg3 - $V=pipe-f16-s-t-wg3 -
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal - $V=$F -
for f in speed-d128 speed-d64 speed-d128-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
# variant numbers: default hd128 482, f16 466; hd64 default 865 (pipe-gs-t-wg3), f16 849
for a in "128" "128 466" "64" "64 849"; do
  for b in fp8_timeline_ctl fp8_timeline_novt; do
    n=$b-${a// /-}
    step "$n" 60 $b $a
    grep -E "^fp8_timeline" "$LOG/$n.log" | sed "s/^/$b: /" | tee -a "$SUMMARY"
  done
done
for a in "128 466" "64 849"; do
  n=timeline-${a// /-}
  step "$n" 60 fp8_timeline $a
  grep -E "^fp8_timeline|softmax|pack|one iteration" "$LOG/$n.log" | tee -a "$SUMMARY"
done
CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d128_sq17_sk1000_window
pa_fp8_sanitizers $CASES $F pipe-f16-s-t-wg3
step torch128 200 python3 bench/fp8_torch.py --dims 128 --seqlens 2048,8192,16384 --causal both --variants=-,$F
step torch64 200 python3 bench/fp8_torch.py --dims 64 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-f16-s-t-wg3
grep -hE "polyattn|sdpa-(flash|cudnn)" "$LOG/torch128.log" "$LOG/torch64.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
