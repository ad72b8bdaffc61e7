#!/bin/bash
# Fortieth session (issue 9): decision 131's open half, hd64's FP8 default with LSE
# ("pipe-gs-t-wg3", no ROWSUM) on its "-pn" form, in a module built with
# bench/gpu/s40_fp8lse.patch (the build CI ships, with that form "full" and the default of
# plain hd64 problems with LSE). clock_probe's fpl64* cases (the FP8 forward with an LSE
# output: the default beside "pipe-gs-t-wg3" by name and cuDNN bf16), then test_fp8 by
# default (7/18 expected, decision 78; its oracle lines kept, to compare with the
# thirty-fourth session's), memcheck / racecheck / synccheck on the hd64 cases with LSE,
# and the 16-bit forward suite by default.
# Run in the fortieth session on an H100 (102 s; bench/results/2026-12-06s40-fp8lse/):
# +1.0-1.7%, adopted (the patch is in the tree since then; step rows expects 2 kernels). The
# run had its checks written out, gathered into lib.sh's pa_fp8_checks afterwards.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s40_fp8lse.sh   (~3 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# hd64 865 | PLAIN 8192 (9057) and | ROWSUM (11105)
pa_gpu_start s40_fp8lse 'pa_hopper_fp8_kernelILi64ELi(9057|11105)E' 2 test_forward test_fp8
pa_probe fpl64s8k,fpl64c8k,fpl64s4k 2 150
step test-fp8 90 test_fp8 --verbose --jobs 8
grep -hE "Synthesis" "$LOG/test-fp8.log" | tee -a "$SUMMARY"
grep -hE "vs oracle" "$LOG/test-fp8.log" | sort >"$LOG/fp8-oracle.txt"
pa_fp8_checks 150 d64_b2_gqa_s300_block,d64_causal_s1000_tensor,d64_varlen_seqused
pa_gpu_pack_keep probe.log fp8-oracle.txt
pa_gpu_finish
