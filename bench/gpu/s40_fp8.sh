#!/bin/bash
# Fortieth session (issue 9): the FP8 kernel's plain-only score pass (PA_FP8_PLAIN, "-pn":
# the softcap / ALiBi / scale <= 0 path compiled out, as decision 128 did for the 16-bit
# persistent kernels) as the defaults' form for plain problems, in the build CI ships
# (sm_90, no tuning variants): hd128 "pingpong-gs-k192-t(-r)-pn", hd64
# "pipe-gs-t-wg3(-r)-pn"; problems that are not plain run the forms without it. One call:
#  1. a check that the module holds the four new kernels;
#  2. clock_probe's fpn* cases (two rounds, sustained at the power cap; without LSE, so
#     the "-r" forms): the default beside the form without "-pn" by name and cuDNN;
#  3. test_fp8 by default (7/18 expected: the 11 LSE-only failures of decision 78), and
#     on the old forms by name over the cases each ran before (hd128 / hd64, with LSE /
#     without); their oracle lines compared case by case with the default's (the plain
#     cases should match to the last digit: the same arithmetic);
#  4. in parallel: memcheck / racecheck / synccheck by default on five FP8 cases (plain
#     ones on the new kernels at both head dims, with and without LSE; softcap on the
#     fallback), and the 16-bit forward suite by default (pa_hopper_plain moved to
#     hopper_tma.h).
# Run in the fortieth session on an H100 (137 s; bench/results/2026-12-06s40-fp8/): hd64
# without LSE gained 1.3-2.1%, hd128 lost 0.5-1.0%, so only hd64's "-r-pn" form ships
# (decision 131); in later trees the other "-pn" names are tuning variants, which without
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON run the defaults, and step rows expects 1 kernel.
# (The run had the start and the checks written out, gathered into lib.sh's pa_gpu_start
# and pa_fp8_checks afterwards.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/s40_fp8.sh   (~3 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# V: hd128 482 | PLAIN 8192 (| ROWSUM 2048), hd64 865 | PLAIN (| ROWSUM)
pa_gpu_start s40_fp8 'pa_hopper_fp8_kernelILi(128ELi(8674|10722)|64ELi(9057|11105))E' 4 test_forward test_fp8
pa_probe fpn128s8k,fpn128s16k,fpn128c8k,fpn128s2k,fpn64s8k,fpn64c8k 2 200
# test_fp8 exits 1 on its LSE cases (decision 78): the synthesis lines are the result
step test-default 90 test_fp8 --verbose --jobs 8
D128=d128_b2_gqa_s300_tensor,d128_causal_sq200_sk333_block,d128_s1024_nodescale,d128_sq17_sk1000_window,d128_softcap_s256,d128_sq1000_sk113_causal,d128_varlen_causal_gqa_block,d128_seqused_k_b2
D64=d64_b2_gqa_s300_block,d64_causal_s1000_tensor,d64_sq1_sk255_mqa,d64_varlen_seqused
D128N=d128_b2_gqa_s300_nolse,d128_varlen_causal_gqa_nolse,d128_softcap_s256_nolse
D64N=d64_causal_s1000_nolse,d64_varlen_seqused_nolse
for x in "pingpong-gs-k192-t:$D128" "pipe-gs-t-wg3:$D64" "pingpong-gs-k192-t-r:$D128N" "pipe-gs-t-wg3-r:$D64N"; do
  step "test-${x%%:*}" 90 env POLYATTN_CUDA_FP8_VARIANT="${x%%:*}" POLYATTN_TEST_CASES="${x#*:}" \
    test_fp8 --verbose --jobs 8
done
grep -hE "Synthesis" "$LOG"/test-*.log | tee -a "$SUMMARY"
oracle() { grep -hE "vs oracle" "$@" | sed -E 's/^\[----\] //' | sort; }
oracle "$LOG/test-default.log" >"$LOG/oracle-default.txt"
oracle "$LOG"/test-p*.log >"$LOG/oracle-old.txt"
echo "oracle lines: $(wc -l <"$LOG/oracle-default.txt") by default, $(wc -l <"$LOG/oracle-old.txt") on the old forms," \
  "$(diff "$LOG/oracle-default.txt" "$LOG/oracle-old.txt" | grep -c '^<') differ" | tee -a "$SUMMARY"
diff "$LOG/oracle-default.txt" "$LOG/oracle-old.txt" | head -20 | tee -a "$SUMMARY"
pa_fp8_checks 200 d128_b2_gqa_s300_tensor,d128_b2_gqa_s300_nolse,d64_causal_s1000_tensor,d64_varlen_seqused_nolse,d128_softcap_s256
pa_gpu_pack_keep probe.log oracle-default.txt oracle-old.txt
pa_gpu_finish
