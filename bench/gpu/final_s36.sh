#!/bin/bash
# Thirty-sixth session, final check of the build CI ships (no tuning variants) with the
# kept maximum from a query tile's second key tile on ("-km1", decision 127) as the
# defaults of the persistent Hopper kernels (hd64's "pingpong-rel-p-q2-os-lag-km1", hd128's
# "pingpong-rel-p-q2-os-km1") and, in its second run, of the wide-tile grid kernels too
# (hd64's "serial-rel-wg3-k192-km1", hd128's "pingpong-rel-k176-os-km1"), both dtypes.
# In parallel: the forward suite by default and forced onto the Hopper kernels on 3
# blocks, test_cuda (graph capture, repeats bit-identical), and memcheck / racecheck /
# synccheck on the defaults over cases the persistent kernels run (hd64 and hd128, bf16
# and fp16, a block list, varlen, emptied rows) and, from the second run, cases the
# wide-tile grid kernels run (s8400_d64, s2500_causal_d64, s4352_d128). Then alone: the
# standard sweep beside SDPA (compare_torch: bf16 and fp16, hd 64 and 128, S 512-16384)
# and the persistent range sustained beside cuDNN (clock_probe ks* cases, two rounds;
# "pa" is the default, now "-km1"; from the second run three grid cases too). The Ampere,
# FP8, hd256 and backward kernels are unchanged (PTX identity:
# bench/results/2026-12-05s36-km1/ptx-identity.txt). First run: the persistent change
# alone (H100, every step passed; results final/), second: both (results final2/).
# (The second run named PROBE_CASES=ks64s8k,ks128s8k,ks128c16k: the persistent cases were
# timed in the first.)
# (The runs had the Hopper suites written out; gathered into lib.sh's pa_hopper_final_bg
# afterwards.)
# Run: source .devkit/env; OUT=dir [PROBE_CASES=...] bash bench/gpu/final_s36.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s36 python3 nvidia-smi test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
HCASES=s1500_d64,s1500_causal_d64,s2500_causal_softcap_d64,alibi_softcap_window_gqa,causal_sq113_sk64_emptyrows,s1000_causal_d128,s4352_d128,block128_hopper_list_empty_rows,varlen_causal_gqa,d128_s128_b2,s8400_d64,s2500_causal_d64
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_final_bg "$HCASES"
step_wait
step test-cuda 120 test_cuda --filter 'cuda/*'
unset POLYATTN_TEST_BACKENDS
pa_check_summary
step torch 200 python3 -u bench/compare_torch.py --no-efficient --dtypes bf16,fp16 --dims 64,128 \
  --seqlens 512,1024,2048,4096,8192,16384 --json "$LOG/torch.jsonl"
grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
pa_probe "${PROBE_CASES:-ks64s256,ks64s512,ks64s1k,ks64c1k,ks64c2k,ks128s512,ks128s1k,ks128s2k,ks128s4k,ks128c4k,ks64s8k,ks128s8k,ks128c16k}"
pa_gpu_pack_keep torch.log probe.log
pa_gpu_finish
