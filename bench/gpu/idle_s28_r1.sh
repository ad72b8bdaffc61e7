#!/bin/bash
# Twenty-eighth session, R1 (issue 9): the hd64 three-consumer grid kernel's partial query
# tiles. A 192-row tile whose rows end inside it (S2048: 128 rows in each head's last tile,
# S4096: 64) computed all three consumers' 64 rows; now a consumer warpgroup without a row
# in the sequence exits (the ring's release counts leave it out) and, where only the last
# tile of each head is partial, those tiles are the grid's last blocks, so that the last
# round of blocks is of the cheaper tiles. POLYATTN_CUDA_HOPPER_IDLE=0 gives the kernel as
# before, POLYATTN_CUDA_HOPPER_PARTIAL_LAST=0 the idle consumers without the order.
# Also: the twenty-seventh session's unrun check (window_s27_check.sh: the Ampere forward
# suite with the default rows, memcheck and racecheck on the hd64 window cases).
# Steps: correctness in parallel (forward suite by default, forced onto the three-consumer
# kernels and the two-consumer serial one, with and without the idle skip; sanitizers on
# cases with idle consumers), test_cuda, then timings alone: clock_probe's i2k/i4k/i8k in two
# rounds (sustained, beside cuDNN) and compare_torch at hd64 with the switch.
# As run: on bench/gpu/idle_s28_r1.patch (applies to 64bcceb: the skip and the order, both
# switchable); the committed code keeps the skip alone (decision 119), where the
# PARTIAL_LAST setting is no longer read (the "idle" and "pa" contenders then time the same).
# Run: source .devkit/env; OUT=dir bash bench/gpu/idle_s28_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup idle_s28_r1 python3 nvidia-smi test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
IDLE_CASES=d64_s64_h4,gqa_8_2,s1500_d64,varlen_causal_gqa,softcap5,s8400_d64
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-default 240 test_forward --jobs 4
step_bg sweep-wg3 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-k192 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-rel-wg3-k192 test_forward --filter 'forward/sweep' --jobs 4
step_bg sweep-serial 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial test_forward --filter 'forward/sweep' --jobs 4
step_wait
for tool in memcheck racecheck synccheck; do
  step_bg "$tool-wg3" 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 POLYATTN_TEST_CASES="$IDLE_CASES" \
    "$cs" --tool $tool --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
done
step_bg sweep-wg3-idle0 240 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3 POLYATTN_CUDA_HOPPER_IDLE=0 \
  test_forward --filter 'forward/sweep' --jobs 4
step_wait
unset POLYATTN_TEST_BACKENDS
# the twenty-seventh session's window check (bench/gpu/window_s27_check.sh)
pa_ampere_rows auto windows \
  'window_left16,window_right8,window_32_16_sq<sk,window_causal_left20,alibi_softcap_window_gqa,nm24_sk113_window' auto
step test-cuda 120 env POLYATTN_TEST_BACKENDS=cuda test_cuda --filter 'cuda/*'
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-cuda.log | tee -a "$SUMMARY"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/*check-wg3.log | sort | uniq -c | tee -a "$SUMMARY"
step probe 200 python3 bench/gpu/clock_probe.py --rounds 2 --cases i2k,i4k,i8k
step torch 200 python3 bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64 \
  --seqlens 2048,4096,8192 --variants "POLYATTN_CUDA_HOPPER_IDLE=0,1,0#2,1#2" --json "$LOG/torch.jsonl"
pa_gpu_pack_keep torch.log torch.jsonl probe.log
pa_gpu_finish
