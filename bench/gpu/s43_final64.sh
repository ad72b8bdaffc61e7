#!/bin/bash
# Forty-third session (issue 9): the final check of decision 134 at hd64, one call: the build
# CI ships with hd64's grid defaults on the row-sum vote too ("serial-s3-rel-wg3-km-pn-ks"
# from 1025 to 8191 keys, "serial-rel-wg3-k192-km1-ks" above; fp16 and bf16), hd128's as in
# s43_final.sh. In order:
#  1. a check that the module holds the four hd64 kernels;
#  2. clock_probe's kg* cases (two rounds, sustained at the power cap): the defaults beside
#     the forms without the row-sum vote by name and cuDNN;
#  3. in parallel: the forward suite by default; the sweep forced onto the Hopper kernels
#     on 3 blocks; memcheck / racecheck / synccheck by default over hd64 cases; then
#     test_cuda;
#  4. compare_torch on the default (bf16 and fp16, hd64, S 512-16384, causal and not).
# The module: the tree with hd64's two grid defaults on "-ks"; since 5a45cb9 the three-
# consumer one is, and bench/gpu/s43_d64_default.patch makes the 192-key one so too.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s43_final64.sh   (~5 min)
# Run in the forty-third session on an H100 (209 s; bench/results/2026-12-06s43-final64/);
# after it only the three-consumer form became hd64's default (decision 134).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s43g 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li64ELi(10747932|8945688)E' 4 \
  test_forward test_cuda
pa_probe "${PROBE_CASES:-kg64s2k,kg64s4k,kg64s8k,kg64s16k,kg64c8k,kg64h4k}" 2 200
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_final_bg s1500_d64,s8400_d64,s2500_causal_d64,s1500_causal_d64,s2500_causal_softcap_d64
step_wait
step test-cuda 150 test_cuda --verbose --filter 'cuda/*'
grep -hE ": ks_climb" "$LOG/test-cuda.log" | cut -c1-200 | tee -a "$SUMMARY"
unset POLYATTN_TEST_BACKENDS
pa_check_summary
step torch 100 python3 -u bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64 \
  --seqlens 512,1024,2048,4096,8192,16384 --json "$LOG/torch.jsonl"
grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep torch.log probe.log
pa_gpu_finish
