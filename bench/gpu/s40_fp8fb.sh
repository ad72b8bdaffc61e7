#!/bin/bash
# Fortieth session (issue 9, decision 131): test_fp8 with its case d64_softcap_gqa_s300_nolse
# (hd64 with softcap, without LSE: the default falls back from "pipe-gs-t-wg3-r-pn" to the
# form with the general score path), by default and under memcheck / racecheck / synccheck.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s40_fp8fb.sh   (~1 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s40_fp8fb 'pa_hopper_fp8_kernelILi64ELi(9057|11105)E' 2 test_forward test_fp8
step test-fp8 90 test_fp8 --verbose --jobs 8
grep -hE "Synthesis" "$LOG/test-fp8.log" | tee -a "$SUMMARY"
grep -hE "vs oracle" "$LOG/test-fp8.log" | sort >"$LOG/fp8-oracle.txt"
grep -hE "d64_softcap_gqa" "$LOG/test-fp8.log" | tee -a "$SUMMARY"
pa_fp8_checks 150 d64_softcap_gqa_s300_nolse
pa_gpu_pack_keep fp8-oracle.txt
pa_gpu_finish
