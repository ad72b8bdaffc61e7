#!/bin/bash
# Forty-seventh session (issue 9): the FP8 kernel with the exponentials taking turns
# ("-x", PA_FP8_XTURN: consumer cw waits on named barrier EXP0 + cw before its step 3 and
# lets the next go after it). One call on a module holding hd128's "pingpong-gs-k192-t-x"
# and "pingpong-gs-k192-t-r-x" and hd64's "pipe-gs-t-wg3-r-pn-x":
#  1. a check that the module holds the three kernels;
#  2. clock_probe's xt* / xl* cases (two rounds, sustained): the default beside "-x";
#  3. test_fp8 by default, and forced onto each "-x" form over the cases its default runs
#     (hd128 with LSE / without, hd64 without); their oracle lines compared with the
#     default's (the same arithmetic in the same order: they should match to the last
#     digit);
#  4. memcheck / racecheck / synccheck on two cases with each "-x" form;
#  5. the phase timelines of hd128's "-r" default (2530) and its "-x" form (18914), and
#     of hd64's (11105, 27489): bench/gpu/fp8_timeline.cu built here beside the module,
#       nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DPA_CUDA_HOPPER_BUILT=1 \
#         -Ibackends/cuda -Icommon -Iapi/include -Ibackends bench/gpu/fp8_timeline.cu \
#         -o build-def/bin/fp8_timeline -lcuda
#     (the "-x" numbers compiled by default in that tree).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s47.sh   (~2 min)
# Run in the forty-seventh session on an H100 (91 s; bench/results/2026-12-07s47-xturn/),
# on a module whose "-x" names were compiled by default; in the committed tree they are
# tuning variants (decision 138), which without -DPOLYATTN_CUDA_TUNING_VARIANTS=ON run the
# defaults, and step rows finds none. Reading step 3: POLYATTN_TEST_CASES matches by
# substring (d128_softcap_s256 also runs on the "-r" form, whose LSE is decision 108's),
# and d128_sq17_sk1000_window asks for no LSE, so the default runs it with ROWSUM and the
# forced "-x" form without: those two lines differ for that reason; every case that ran
# the same arithmetic matched to the last digit. (Its sanitizer steps and summaries were
# written out when it ran; lib.sh's pa_fp8_sanitize and pa_check_summary run the same since.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s47 'pa_hopper_fp8_kernelILi(128ELi(16866|18914)|64ELi27489)E' 3 test_fp8 fp8_timeline
pa_probe "${PROBE_CASES:-xt128s8k,xl128s8k,xt64s8k,xt128c8k,xt128s16k}" 2 300
step test-default 90 test_fp8 --verbose --jobs 8
D128=d128_b2_gqa_s300_tensor,d128_causal_sq200_sk333_block,d128_s1024_nodescale
D128=$D128,d128_sq17_sk1000_window,d128_softcap_s256,d128_sq1000_sk113_causal
D128=$D128,d128_varlen_causal_gqa_block,d128_seqused_k_b2
D128N=d128_b2_gqa_s300_nolse,d128_varlen_causal_gqa_nolse,d128_softcap_s256_nolse
D64N=d64_causal_s1000_nolse,d64_varlen_seqused_nolse
for x in "pingpong-gs-k192-t-x:$D128" "pingpong-gs-k192-t-r-x:$D128N" \
  "pipe-gs-t-wg3-r-pn-x:$D64N"; do
  step "test-${x%%:*}" 90 env POLYATTN_CUDA_FP8_VARIANT="${x%%:*}" POLYATTN_TEST_CASES="${x#*:}" \
    test_fp8 --verbose --jobs 8
done
oracle() {
  grep -hE "vs oracle" "$@" | sed -E 's/^\[----\] //' |
    grep -E "d128|d64_causal_s1000_nolse|d64_varlen_seqused_nolse" | sort
}
oracle "$LOG/test-default.log" >"$LOG/oracle-default.txt"
oracle "$LOG"/test-p*.log >"$LOG/oracle-x.txt"
echo "oracle lines: $(wc -l <"$LOG/oracle-default.txt") by default (d128, d64 no-LSE)," \
  "$(wc -l <"$LOG/oracle-x.txt") on -x," \
  "$(diff "$LOG/oracle-default.txt" "$LOG/oracle-x.txt" | grep -c '^>') of -x's differ" |
  tee -a "$SUMMARY"
diff "$LOG/oracle-default.txt" "$LOG/oracle-x.txt" | head -20 | tee -a "$SUMMARY"
pa_fp8_sanitize x pingpong-gs-k192-t-x d128_b2_gqa_s300_tensor,d128_sq1000_sk113_causal
pa_fp8_sanitize rx pingpong-gs-k192-t-r-x d128_b2_gqa_s300_nolse,d128_varlen_causal_gqa_nolse
pa_fp8_sanitize 64x pipe-gs-t-wg3-r-pn-x "$D64N"
step_wait
pa_check_summary
for x in "128 2530" "128 18914" "64 11105" "64 27489"; do
  step "timeline-${x// /-}" 60 fp8_timeline $x
  grep -E "^fp8_timeline|softmax|one iteration|start to end|SM clock" \
    "$LOG/timeline-${x// /-}.log" |
    sed "s/^/$x: /" | tee -a "$SUMMARY"
done
pa_gpu_pack_keep probe.log oracle-default.txt oracle-x.txt
pa_gpu_finish
