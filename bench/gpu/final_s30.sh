#!/bin/bash
# Thirtieth session, final check of the committed code in the build CI ships (no tuning
# variants; decision 121: hd64's persistent Hopper kernel with consumer 1 a pingpong turn
# behind, four stages, the default for both dtypes): the forward suite by default and
# forced onto the Hopper kernels on 3 blocks, test_cuda, the backward suite, test_fp8 (its
# LSE-only failures of decision 78 make that step exit 1), sanitizers on the hd64 defaults
# (3 blocks) over cases with keyless tiles; then alone: clock_probe (the persistent
# bounds: hd64 S2048 and causal S4096 on the lag kernel against the grid kernels that run
# there) and the standard sweep beside SDPA (bf16 and fp16, hd 64 and 128, S512 included).
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s30.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s30 python3 nvidia-smi test_forward test_cuda test_backward test_fp8
pa_gpu_state
STEP_TAIL=0
CASES=d64_s64_h4,s1500_causal_d64,varlen_empty,varlen_causal_gqa,varlen_block,block64_bcast_diag,block256x128_hopper_list_causal_gqa,causal_sq113_sk64_emptyrows,softcap5,alibi_softcap_window_gqa
export POLYATTN_TEST_BACKENDS=cuda
step_bg sweep-default 240 test_forward --jobs 4
step_bg sweep-hopper-b3 240 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  test_forward --verbose --filter 'forward/sweep' --jobs 4
step_bg test-fp8 120 test_fp8 --verbose --jobs 4
pa_hopper_sanitizers_bg lag 240 "$CASES" POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
step_bg backward 200 test_backward --jobs 4
step_bg test-cuda 120 test_cuda --filter 'cuda/*'
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
grep -hE "Synthesis" "$LOG/backward.log" | tee -a "$SUMMARY"
grep -hE "vs oracle" "$LOG/test-fp8.log" >"$LOG/fp8-oracle.txt"
step probe 120 python3 bench/gpu/clock_probe.py --rounds 2 --cases lgs2k,lgc4k
step torch 300 python3 bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64,128 \
  --seqlens 512,1024,2048,4096,8192,16384 --json "$LOG/torch.jsonl"
grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep probe.log torch.log torch.jsonl fp8-oracle.txt
pa_gpu_finish
