#!/bin/bash
# Thirty-ninth session (issues 9 and 3): one call (machines were scarce) that times and
# checks one module: the build CI ships (sm_90, no tuning variants) with
#  - the persistent Hopper kernels' plain-only score pass ("-pn", PA_HV_PLAIN) as their
#    default for plain problems (decision 128: hd64 "pingpong-rel-p-q2-os-lag-km1-pn",
#    hd128 "pingpong-rel-p-q2-os-km1-pn", bf16 and fp16; the others run the forms without
#    it), measured by the thirty-eighth session on a tuning build;
#  - the Ampere kernel's plain-only score pass (the rows "auto" runs at hd64 / hd128
#    compiled a second time with L::plain, run for plain problems): a candidate, measured
#    slower here and not kept (decision 129; bench/gpu/ampere_plain_s39.patch);
#  - bench/gpu/s39_wg3pn.patch: one more named Hopper variant, "serial-s3-rel-wg3-km-pn"
#    (the three-consumer hd64 grid kernel's plain-only pass, "full" in this module only),
#    a candidate no default runs.
# In order of need, so that a cut-short call keeps the most:
#  1. a check that the module holds the new kernels;
#  2. clock_probe (two rounds, sustained at the power cap): ap* (the Ampere kernel's
#     default, now plain-only for plain problems, beside its rows with every path,
#     POLYATTN_CUDA_AMPERE_PLAIN=0, and SDPA flash), ad128s512 / ad64s512 / ad64c2k (the
#     persistent "-pn" defaults beside their forms without it, "old", and cuDNN);
#  3. in parallel: the forward suite by default, forced onto the Hopper kernels on 3
#     blocks, memcheck / racecheck / synccheck by default over cases the "-pn" kernels run
#     and cases that fall back from them (softcap, ALiBi, a block list);
#  4. in parallel: the sweep forced onto the Ampere kernel with LSE as the cases ask and
#     without, memcheck / racecheck on it over plain cases and fallbacks;
#  5. test_cuda; compare_torch's standard sweep (bf16 and fp16, hd 64 and 128, S
#     2048-16384) on the Ampere kernel;
#  6. with the time left (started before 430 s): clock_probe's pb* cases (the Hopper
#     kernels' bounds with "-pn": each case's default, the kernel across its bound, at
#     hd64 non-causal the candidate, cuDNN); before 520 s: compare_torch on the default
#     (bf16, hd 64 and 128, S 512 / 2048 / 8192).
# The module: 7d8d3d1's tree with bench/gpu/ampere_plain_s39.patch and
# bench/gpu/s39_wg3pn.patch applied, built as CI builds it (-DPOLYATTN_CUDA_ARCHS=90).
# Run on an H100 in the thirty-ninth session (494 s; bench/results/2026-12-06s39-final/).
# (The run had its start and Hopper suites written out; gathered into lib.sh's pa_gpu_start
# and pa_hopper_final_bg afterwards.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/s39.sh   (~8-9 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# hd128 "-pn" (V 2650122) and hd64 "-lag-km1-pn" (V 2846730), bf16 and fp16
pa_gpu_start s39 'pa_hopper_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi2650122|64ELi2846730)E' 4 \
  test_forward test_cuda
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
mv "$LOG/rows.log" "$LOG/rows-hopper.log"
# the Ampere plain kernels: <T, D, V, SP24 = false, PLAIN = true> of hd64 m2k128tj (7),
# hd128 m2k64-km (8) and m2k64-km-rs (11)
pa_require_kernels 'pa_ampere_fwd_kernelI(13__nv_bfloat16|6__half)Li(64ELi7|128ELi8|128ELi11)ELb0ELb1E' 6
[ "$FAILED" = 0 ] || pa_gpu_finish
pa_probe ap64s2k,ap64s8k,ap64c8k,ap128s2k,ap128s8k,ap128c8k,ap128h8k,ad128s512,ad64s512,ad64c2k 2 240
mv "$LOG/probe.log" "$LOG/probe-ap.log"
HCASES=s1000,s1500_d64,s1500_causal_d64,s1000_causal_d128,d128_s128_b2,varlen_causal_gqa,causal_sq113_sk64_emptyrows,s2500_causal_softcap_d64,alibi_softcap_window_gqa,block128_hopper_list_empty_rows,s4352_d128,s8400_d64
ACASES=s1000,s1500_causal_d64,seqused_k_varlen_gqa,causal_sq113_sk64_emptyrows,s1000_causal_d128,s4352_d128,d128_s128_b2,varlen_causal_gqa,s2500_causal_softcap_d64,varlen_block,alibi_softcap_window_gqa
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_final_bg "$HCASES"
step_wait
step_bg sweep-ampere 240 env POLYATTN_CUDA_KERNEL=ampere test_forward --verbose --filter 'forward/sweep' --jobs 5
step_bg sweep-ampere-nolse 240 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_NO_LSE=1 \
  test_forward --verbose --filter 'forward/sweep' --jobs 5
for tool in memcheck racecheck; do
  step_bg "$tool-ampere" 240 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES="$ACASES" \
    "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 2
done
step_wait
step test-cuda 120 test_cuda --filter 'cuda/*'
unset POLYATTN_TEST_BACKENDS
pa_check_summary
step torch-ampere 100 python3 -u bench/compare_torch.py --env-kernel ampere --no-efficient --no-cudnn \
  --dtypes bf16,fp16 --dims 64,128 --seqlens 2048,4096,8192,16384 --json "$LOG/torch-ampere.jsonl"
grep -E "geomean|correctness" "$LOG/torch-ampere.log" | tee -a "$SUMMARY"
if [ "$SECONDS" -lt 430 ]; then
  pa_probe pb64s2k,pb64s4k,pb64c4k,pb128s4k,pb128s8k,pb128c8k,pb128c16k 2 $((585 - SECONDS))
fi
if [ "$SECONDS" -lt 520 ]; then
  step torch 60 python3 -u bench/compare_torch.py --no-efficient --dtypes bf16 --dims 64,128 \
    --seqlens 512,2048,8192 --json "$LOG/torch.jsonl"
  grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
fi
pa_gpu_pack_keep torch-ampere.log probe-ap.log probe.log torch.log 2>/dev/null
pa_gpu_finish
