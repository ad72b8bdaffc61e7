#!/bin/bash
# Twenty-eighth session, R2 (issue 9): the committed idle-consumer skip (R1, without the
# partial-tiles-last order) and its FP8 form (the FP8 kernel's three-consumer hd64 tiles),
# and hd64 on a persistent three-consumer kernel ("serial-s3-rel-wg3-p-q2", a tuning
# variant: the serial schedule of the grid kernel with FlashAttention-3's persistent walk
# and two Q buffers) against the defaults. Correctness first, in parallel: the forward
# suite by default, forced onto the new variant (also on 3 blocks: many tiles per block),
# test_fp8 with the idle skip and without (its LSE-only failures of decision 78 make
# those steps exit 1; their oracle lines are compared), sanitizers on the new variant (3 blocks) and on
# the FP8 kernel; then timings alone (clock_probe, two rounds, sustained).
# As run: on the committed code plus bench/gpu/wg3p_s28_r2.patch (the variant, removed after
# R2: without the patch its name runs the default).
# (As run, the FP8 cases were named q2k/q4k, a name the twenty-fifth session's hd128 q2k
# already had: renamed fq2k/fq4k since.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/idle_s28_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup idle_s28_r2 python3 nvidia-smi test_forward test_cuda test_fp8
pa_gpu_state
STEP_TAIL=0
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES64=d64_s64_h4,gqa_8_2,s1500_d64,s1500_causal_d64,varlen_causal_gqa,softcap5,causal_sq113_sk64_emptyrows
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
P=serial-s3-rel-wg3-p-q2
CASES8=d64_b2_gqa_s300_block,d64_causal_s1000_tensor,d64_varlen_seqused
step_bg sweep-default 240 test_forward --jobs 4
step_bg sweep-wg3p 240 env POLYATTN_CUDA_KERNEL=hopper $V=$P test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-wg3p-b3 240 env POLYATTN_CUDA_KERNEL=hopper $V=$P POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  test_forward --filter 'forward/sweep' --jobs 4
step_bg test-fp8 120 test_fp8 --verbose --jobs 4
step_wait
for tool in memcheck racecheck synccheck; do
  step_bg "$tool-wg3p" 240 env POLYATTN_CUDA_KERNEL=hopper $V=$P POLYATTN_CUDA_HOPPER_BLOCKS=3 \
    POLYATTN_TEST_CASES="$CASES64" "$cs" --tool $tool --error-exitcode 99 --print-limit 10 \
    test_forward --filter 'forward/sweep' --jobs 2
  step_bg "$tool-fp8" 240 env POLYATTN_TEST_CASES="$CASES8" "$cs" --tool $tool --error-exitcode 99 \
    --print-limit 10 test_fp8 --jobs 1 --filter 'fp8/oracle*'
done
step_bg test-fp8-idle0 120 env POLYATTN_CUDA_HOPPER_IDLE=0 test_fp8 --verbose --jobs 4
step_wait
step test-cuda 120 test_cuda --filter 'cuda/*'
unset POLYATTN_TEST_BACKENDS
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-*.log | tee -a "$SUMMARY"
for f in "$LOG"/*check-*.log; do
  echo "$(basename "$f" .log): $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$f" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
done | tee -a "$SUMMARY"
grep -hE "vs oracle" "$LOG/test-fp8.log" | sed 's/^/idle: /' >"$LOG/fp8-oracle.txt"
grep -hE "vs oracle" "$LOG/test-fp8-idle0.log" | sed 's/^/idle0: /' >>"$LOG/fp8-oracle.txt"
step probe 300 python3 bench/gpu/clock_probe.py --rounds 2 --cases p512,p1k,p2k,p4k,pc2k,fq2k,fq4k
pa_gpu_pack_keep probe.log fp8-oracle.txt
pa_gpu_finish
