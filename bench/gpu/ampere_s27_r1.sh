#!/bin/bash
# Twenty-seventh session, R1 (issue 3): the Ampere kernel's rows on one block of 8 warps
# ("w8": m2k64 at hd128, m2k128t at hd64, with 256 query rows sharing each K/V tile;
# "w8j": the same with one barrier per tile; ampere_tune.cuh, tuning variants). The
# forward suite forced onto each, memcheck and racecheck on w8, the rows beside the
# default and SDPA in one process (bf16, S 2048-16384, each value of auto and w8 twice),
# sustained at the power cap (clock_probe.py w128, w64, wc128, w128s2k); and two
# measurements for issue 9: the hd64 multicast at an even query-tile count (m64e) and the
# SFU's exponential rates (ex2_s26.sh). Needs a build with
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON and build/bin/ex2_peak in the devkit.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s27_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s27_r1 python3 nvidia-smi polyattn test_forward ex2_peak
pa_gpu_state
STEP_TAIL=0
step ex2 60 env OUT="$LOG" bash bench/gpu/ex2_s26.sh
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere
V=POLYATTN_CUDA_AMPERE_VARIANT
for v in w8 w8j; do
  step_bg sweep-$v 240 env $V=$v test_forward --jobs 4 --filter 'forward/sweep'
done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
CASES=d64_s64_h4,dv32_d64,varlen_causal_gqa,s1500_causal_d64,causal_sq113_sk64_emptyrows,strided_gqa_causal,bhsd,nm24
for tool in memcheck racecheck; do
  step_bg $tool-w8 240 env $V=w8 POLYATTN_TEST_CASES=$CASES \
    "$SAN" --tool $tool --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
done
step_wait
unset POLYATTN_TEST_BACKENDS POLYATTN_CUDA_KERNEL
step torch 300 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 \
  --dims 64,128 --seqlens 2048,4096,8192,16384 --variants "$V=auto,w8,w8j,auto#2,w8#2" \
  --json "$LOG/torch.jsonl"
step probe 150 python3 bench/gpu/clock_probe.py --rounds 2 --cases w128,w64,wc128,w128s2k,m64e
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck-w8.log "$LOG"/racecheck-w8.log | sort | uniq -c | tee -a "$SUMMARY"
pa_gpu_pack_keep torch.log torch.jsonl probe.log ex2.txt
pa_gpu_finish
