#!/bin/bash
# Fifteenth session, R2 (issue 9): the P.V wait ordered after the softmax. R1's source
# pages showed ptxas scheduling `wgmma.wait_group 0` (the wait for P.V) above the
# softmax in the pipelined loops of both the FP8 and the bf16 kernel, so the softmax
# never ran under P.V. Variants (hopper_ptx.cuh pa_wgmma_wait_after / pa_wgmma_pin_store):
#   -pinp  the wait predicated on the row sums (a data dependency ptxas must respect)
#   -pins  a shared-memory store of the row sums before the wait
# Steps: the SASS order (scripts/sass_wait_order.py on the carried objects); speeds (fp8
# and bf16, one process per dtype and shape); test_fp8 and the bf16 forward sweep with
# the new variants; sanitizers on a few cases.
# (The -pinp and -pins variants were removed after this round: bench/RESULTS.md, decision
# 106. The script is kept as the record of what ran.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s15_r2.sh
gzip -d .devkit/lib/*.gz .devkit/obj/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s15_r2 test_fp8 attn_speed test_forward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
for o in .devkit/obj/*.o; do
  timeout 60 "$OBJ" -sass "$o" | python3 scripts/sass_wait_order.py --match 'kernel' >>"$LOG/sass-order.txt" 2>&1
done
cut -c1-160 "$LOG/sass-order.txt" | grep -v ": -$" | tee -a "$SUMMARY"
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
H=POLYATTN_CUDA_HOPPER_VARIANT
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
F8="$V=pipe $V=pipe-gs-k192 $V=pipe-gs-k192-pins $V=pingpong-gs-k192 $V=pipe-gs-k192-pinp $V=pipe-gs-k192"
step fp8-d128 120 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 $F8
step fp8-d64 120 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 $F8
step fp8-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal $V=pipe-gs-k192 $V=pipe-gs-k192-pins $V=pingpong-gs-k192
BF="- $H=pingpong-rel-os $H=pingpong-rel-os-pins -"
step bf16-d128 120 $AS --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 $BF
step bf16-d128-s4k 120 $AS --dtype bf16 --batch 4 --heads 16 --dim 128 --seq 4096 $BF
step bf16-d128-causal 120 $AS --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --causal $BF
step bf16-d64 60 $AS --dtype bf16 --batch 2 --heads 32 --dim 64 --seq 8192 - $H=pingpong-rel-os $H=pingpong-rel-os-pins -
for f in fp8-d128 fp8-d64 fp8-d128-causal bf16-d128 bf16-d128-s4k bf16-d128-causal bf16-d64; do
  echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130
done | tee -a "$SUMMARY"
pa_fp8_test pipe-gs-k192-pins
export POLYATTN_TEST_BACKENDS=cuda
step sweep-bf16-pins 300 env $H=pingpong-rel-os-pins test_forward --verbose --jobs 8
grep -hE "Synthesis" "$LOG/sweep-bf16-pins.log" | tee -a "$SUMMARY"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck synccheck; do
  step "$tool-fp8" 90 env $V=pipe-gs-k192-pins POLYATTN_TEST_CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block "$CS" --tool $tool test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool-fp8.log" | sed "s/^/$tool-fp8: /" | tee -a "$SUMMARY"
done
cut -c1-200 "$LOG/oracle-lines.txt" | tee -a "$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
