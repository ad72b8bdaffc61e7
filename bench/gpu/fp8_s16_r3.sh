#!/bin/bash
# Sixteenth session, R3 (issue 9, FP8): does a read of the SM clock between the softmax
# and the wait for P.V ("-p", PA_FP8_PIN) keep ptxas from hoisting that wait above the
# softmax, and is the kernel faster for it? (R2's stamped kernel ran faster than the
# library's.) The SASS order of the fp8 kernels (scripts/sass_wait_order.py), the
# timeline harness with and without stamps, attn_speed, test_fp8 and the sanitizers on
# the -p variants, and beside SDPA.
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s16_r3.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s16_r3 test_fp8 attn_speed fp8_timeline fp8_timeline_off
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
# variant numbers: pingpong-gs-k192-t 482 (-p 2530), pipe-gs-k192-t 481 (-p 2529),
# pipe-gs-t-wg3 865 (-p 2913)
for o in .devkit/lib/libpolyattn-cuda.so "$(command -v fp8_timeline)" "$(command -v fp8_timeline_off)"; do
  echo "== $(basename "$o")" >>"$LOG/sass-order.txt"
  timeout 120 "$OBJ" -sass "$o" | python3 scripts/sass_wait_order.py --match 'fp8_kernelILi(128|64)ELi(482|2530|481|2529|865|2913)E' >>"$LOG/sass-order.txt" 2>&1
done
cut -c1-200 "$LOG/sass-order.txt" | tee -a "$SUMMARY"
for a in "128" "128 2530" "128 2529" "64" "64 2913"; do
  for t in fp8_timeline_off fp8_timeline; do
    n=$t-${a// /-}
    step "$n" 60 $t $a
    grep -E "^fp8_timeline|softmax|wait: P.V|one iteration|pack" "$LOG/$n.log" | tee -a "$SUMMARY"
  done
done
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
for v in pingpong-gs-k192-t-p pipe-gs-t-wg3-p; do
  pa_fp8_test "$v"
done
CASES=d64_sq1_sk255_mqa,d64_b2_gqa_s300_block,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block,d128_sq17_sk1000_window
pa_fp8_sanitizers $CASES pingpong-gs-k192-t-p pipe-gs-t-wg3-p
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
step speed-d128 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 - $V=pingpong-gs-k192-t-p $V=pipe-gs-k192-t-p $V=pipe-gs-k192-t - $V=pingpong-gs-k192-t-p
step speed-d64 60 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 - $V=pipe-gs-t-wg3-p - $V=pipe-gs-t-wg3-p
step speed-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal - $V=pingpong-gs-k192-t-p - $V=pingpong-gs-k192-t-p
for f in speed-d128 speed-d64 speed-d128-causal; do echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130; done | tee -a "$SUMMARY"
step torch 300 python3 bench/fp8_torch.py --dims 128,64 --seqlens 2048,8192,16384 --causal both --variants=-,pingpong-gs-k192-t-p,pipe-gs-t-wg3-p
grep -E "polyattn|sdpa-(flash|cudnn)" "$LOG/torch.log" | cut -c1-110 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
