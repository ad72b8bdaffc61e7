#!/bin/bash
# Forty-third session (issue 9): the final check of decision 134, one call: the build CI
# ships (sm_90, no tuning variants) with hd128's Hopper defaults on the row-sum vote
# (PA_HV_KSUM: "pingpong-rel-k176-os-km1-ks" from 4097 keys, "pingpong-rel-p-q2-os-km1-pn-ks"
# and its stream-K form below; fp16 and bf16) and hd64's bf16 probes with the sums in four
# chains. In order:
#  1. a check that the module holds the six hd128 kernels and the three hd64 probes;
#  2. clock_probe's kf* cases (two rounds, sustained at the power cap): hd128's defaults
#     beside the forms without the row-sum vote by name and cuDNN; hd64's default beside
#     its probe and cuDNN;
#  3. in parallel: the forward suite by default; the sweep forced onto the Hopper kernels
#     on 3 blocks; memcheck / racecheck / synccheck by default over hd128 cases on 3
#     blocks; then test_cuda (the ks_climb tests among its cases);
#  4. compare_torch's standard sweep on the default (bf16 and fp16, hd64 and hd128, S
#     512-16384, causal and not).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s43_final.sh   (~8 min)
# Run in the forty-third session on an H100 (301 s; bench/results/2026-12-06s43-final/).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s43f 'pa_hopper_fwd_kernelI(13__nv_bfloat16Li(128ELi(8929802|11038730|15233034)|64ELi(10747932|8945688|11235338))|6__halfLi128ELi(8929802|11038730|15233034))E' 9 \
  test_forward test_cuda
pa_probe "${PROBE_CASES:-kf128s8k,kf128s16k,kf128s4k,kf128s2k,kf128s512,kf128c8k,kf128h4k,kf128h8k,kf64s2k,kf64s4k,kf64s8k,kf64s512}" 2 300
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_final_bg s2048_d128,s1000,s4352_d128,s1000_causal_d128,d128_s128_b2,varlen_causal_gqa
step_wait
step test-cuda 150 test_cuda --verbose --filter 'cuda/*'
grep -hE "ks_climb|-ks: |: ks_climb" "$LOG/test-cuda.log" | cut -c1-200 | tee -a "$SUMMARY"
unset POLYATTN_TEST_BACKENDS
pa_check_summary
step torch 150 python3 -u bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64,128 \
  --seqlens 512,1024,2048,4096,8192,16384 --json "$LOG/torch.jsonl"
grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep torch.log probe.log
pa_gpu_finish
