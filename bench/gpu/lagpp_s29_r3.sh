#!/bin/bash
# Twenty-ninth session, R3 (issue 9, short sequences): the persistent pingpong kernel with
# consumer 1 one key tile behind consumer 0, held there by the turns (consumer 1 takes an
# empty first turn, consumer 0 an empty last one; four ring stages; hd64 only:
# "pingpong-rel-p-q2-os-lag"), so that at each query-tile boundary one more of the other
# consumer's turns runs on the tensor cores. Correctness first (forward suite forced onto
# it, also on 3 blocks; sanitizers), then timings alone (clock_probe, two rounds).
# Run: source .devkit/env; OUT=dir bash bench/gpu/lagpp_s29_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup lagpp_s29_r3 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES=d64_s64_h4,gqa_8_2,s1500_d64,s1500_causal_d64,varlen_causal_gqa,softcap5,causal_sq113_sk64_emptyrows
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-lagpp 150 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-lag test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-lagpp-b3 150 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-lag POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  test_forward --filter 'forward/sweep' --jobs 4
for tool in memcheck racecheck synccheck; do
  step_bg "$tool-lagpp" 150 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-lag POLYATTN_CUDA_HOPPER_BLOCKS=3 \
    POLYATTN_TEST_CASES="$CASES" "$cs" --tool $tool --error-exitcode 99 --print-limit 10 \
    test_forward --filter 'forward/sweep' --jobs 2
done
step_wait
unset POLYATTN_TEST_BACKENDS
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
for f in "$LOG"/*check-*.log; do
  echo "$(basename "$f" .log): $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$f" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
done | tee -a "$SUMMARY"
[ "$FAILED" = 0 ] && step probe 200 python3 bench/gpu/clock_probe.py --rounds 2 --cases n64s512,n64s1k,n64c2k
pa_gpu_pack_keep probe.log
pa_gpu_finish
