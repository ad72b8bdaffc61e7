#!/bin/bash
# Seventeenth session, R2 (issue 9, FP8): the row sums l by the tensor cores (PA_FP8_ROWSUM,
# "-r": V^T gets 8 rows of ones, P.V^T's extra columns are sum(P); the softmax loses its
# FADD per element). test_fp8 and the sanitizers on the -r variants, attn_speed against
# the defaults in one process, the timeline, beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s17_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s17_r2 test_fp8 attn_speed fp8_timeline fp8_timeline_ctl
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
P=pingpong-gs-k192-t
for v in "" $P-r pipe-gs-k192-t-r pipe-gs-t-wg3-r serial-gs-k192-t-r; do pa_fp8_test "$v"; done
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 - $V=$P-r $V=pipe-gs-k192-t-r - $V=$P-r $V=pipe-gs-k192-t-r -
step speed-d64 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 - $V=pipe-gs-t-wg3-r - $V=pipe-gs-t-wg3-r -
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal - $V=$P-r -
for f in speed-d128 speed-d64 speed-d128-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
# variant numbers: hd128 default 482, -r 2530, pipe -r 2529; hd64 default 865, -r 2913
for a in "128" "128 2530" "128 2529" "64" "64 2913"; do
  n=ctl-${a// /-}
  step "$n" 60 fp8_timeline_ctl $a
  grep -E "^fp8_timeline" "$LOG/$n.log" | tee -a "$SUMMARY"
done
for a in "128 2530" "64 2913"; do
  n=timeline-${a// /-}
  step "$n" 60 fp8_timeline $a
  grep -E "^fp8_timeline|softmax|pack|issue S|one iteration|V\^T slot|transpose" "$LOG/$n.log" | tee -a "$SUMMARY"
done
cuobjdump -sass .devkit/bin/fp8_timeline_ctl > "$LOG/sass.txt" 2>&1
awk '/Function :/ {fn=$3} /GMMA/ {for (i=1;i<=NF;i++) if ($i ~ /GMMA/) c[fn" "$i]++} /LDL|STL/ {l[fn]++} END {for (k in c) print c[k], k; for (k in l) print "local-memory", l[k], k}' \
  "$LOG/sass.txt" | grep -E 'Li(2530|2529|2913)E' | sed 's/_ZN.*kernelI//' | sort -k2 | tee -a "$SUMMARY"
CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d128_sq17_sk1000_window
pa_fp8_sanitizers $CASES $P-r pipe-gs-t-wg3-r
step torch128 200 python3 bench/fp8_torch.py --dims 128 --seqlens 2048,8192,16384 --causal both --variants=-,$P-r
step torch64 200 python3 bench/fp8_torch.py --dims 64 --seqlens 2048,8192,16384 --causal both --variants=-,pipe-gs-t-wg3-r
grep -hE "polyattn|sdpa-(flash|cudnn)" "$LOG/torch128.log" "$LOG/torch64.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
