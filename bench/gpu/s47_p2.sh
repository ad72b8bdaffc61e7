#!/bin/bash
# Forty-seventh session (issue 9): hd128's FP8 default without LSE with P packed into a
# second register set ("pingpong-gs-k192-t-r-p2", PA_FP8_P2: the loop unrolled by two, P of
# tile n packed while P.V of tile n - 1 still reads the other set, then the wait for that
# P.V), after s47_ncu.sh found 9% of a consumer warp's loop in the P.V wait that ptxas puts
# above the exponentials. One call on a module whose "-r-p2" is compiled by default:
#  1. a check that the module holds the kernel;
#  2. clock_probe's p2* cases (two rounds, sustained): the default beside "-r-p2";
#  3. test_fp8 forced onto "-r-p2" over the no-LSE hd128 cases; their oracle lines against
#     the default's (the same arithmetic: they should match to the last digit);
#  4. memcheck / racecheck / synccheck on two of them;
#  5. the phase timelines of the default (2530) and "-r-p2" (35298).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s47_p2.sh   (~2 min)
# Run in the forty-seventh session on an H100 (77 s; bench/results/2026-12-07s47-p2/), on a
# module whose "-r-p2" was compiled by default; in the committed tree it is a tuning variant
# (decision 139), and step rows finds none without -DPOLYATTN_CUDA_TUNING_VARIANTS=ON. In
# step 3 POLYATTN_TEST_CASES matches by substring, so d128_softcap_s256 (with LSE) runs too:
# by default on the LSE form (its LSE 3.4e-3, decision 78), forced on the ROWSUM form (2.0e-2,
# decision 108); both runs count it as their one failure. The stamped timeline of "-r-p2"
# is not its kernel's: the stamps cost it registers (its issue phase ~1500 cycles against
# ~550); the probe's sustained rates are the measure. (Its sanitizer steps were written out
# when it ran, and its test synthesis lines went to the summary twice; lib.sh's
# pa_fp8_sanitize and pa_check_summary alone run the same since.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s47_p2 'pa_hopper_fp8_kernelILi128ELi35298E' 1 test_fp8 fp8_timeline
pa_probe "${PROBE_CASES:-p2128s8k,p2128s16k,p2128c8k,p2128s2k}" 2 300
D128N=d128_b2_gqa_s300_nolse,d128_varlen_causal_gqa_nolse,d128_softcap_s256_nolse
step test-default 90 env POLYATTN_TEST_CASES="$D128N" test_fp8 --verbose --jobs 8
step test-p2 90 env POLYATTN_CUDA_FP8_VARIANT=pingpong-gs-k192-t-r-p2 \
  POLYATTN_TEST_CASES="$D128N" test_fp8 --verbose --jobs 8
oracle() { grep -hE "vs oracle" "$1" | sed -E 's/^\[----\] //' | grep nolse | sort; }
oracle "$LOG/test-default.log" >"$LOG/oracle-default.txt"
oracle "$LOG/test-p2.log" >"$LOG/oracle-p2.txt"
echo "oracle lines: $(wc -l <"$LOG/oracle-default.txt") by default," \
  "$(wc -l <"$LOG/oracle-p2.txt") on -r-p2," \
  "$(diff "$LOG/oracle-default.txt" "$LOG/oracle-p2.txt" | grep -c '^>') differ" |
  tee -a "$SUMMARY"
pa_fp8_sanitize p2 pingpong-gs-k192-t-r-p2 d128_b2_gqa_s300_nolse,d128_varlen_causal_gqa_nolse
step_wait
pa_check_summary
for v in 2530 35298; do
  step "timeline-$v" 60 fp8_timeline 128 $v
  grep -E "^fp8_timeline|softmax|wait: P.V|pack P|one iteration" "$LOG/timeline-$v.log" |
    sed "s/^/$v: /" | tee -a "$SUMMARY"
done
pa_gpu_pack_keep probe.log oracle-default.txt oracle-p2.txt
pa_gpu_finish
