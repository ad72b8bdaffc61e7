#!/bin/bash
# Forty-eighth session (issue 9): the FP8 kernel's kept maximum decided after the
# exponentials ("-kp", PA_FP8_VOTEP; decision 140): no row maxima before step 3, the vote
# on each thread's largest p after the pack. One call on a module whose "-kp" forms and
# "pingpong-gs-k192-t-r-pn" are compiled by default:
#  1. a check that the module holds hd128's "-r-pn-kp" (76258);
#  2. test_fp8 forced onto the "-kp" forms (RUNS, below): hd128 "-r-pn-kp" on the no-LSE
#     cases (kp128n), "-pn-kp" on the LSE ones (kp128l); hd64 "-r-pn-kp" / "-pn-kp" likewise
#     (kp64n, kp64l; problems that are not plain run the form without "-pn", at hd64 not
#     compiled: the default); with DEFAULT=1 first by default over every case (the climb
#     cases new). LSE misses its bound by design (decision 78): the failures other than
#     "lse err" go to the summary;
#  3. memcheck / racecheck / synccheck (SAN, below) on "-r-pn-kp" (two cases, the climb one
#     included) and on hd64's "-r-pn-kp" (one climb case), in the background;
#  4. clock_probe's vp* / vl* cases (two rounds, sustained): the default beside "-r-pn" and
#     "-r-pn-kp" (hd128 without LSE), "-pn-kp" (with LSE), hd64's "-r-pn-kp", cuDNN;
#  5. ncu's source page of "-r-pn-kp" (NCU_V; fp8_timeline0, unstamped; B2 H16 S8192) for
#     scripts/ncu_source_classes.py, beside the forty-seventh session's of the default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s48.sh   (~3-5 min)
# Run three times in the forty-eighth session on H100s (bench/results/2026-12-07s48-kp/):
#  r1 (157 s) with DEFAULT=1 RUNS="kp128n kp128l kp64n kp64l" and the probe cases then
#     named kp* (PROBE_CASES=kp128s8k,kp128s16k,kp128c8k,kp128s2k,kp128s4k,kl128s8k,
#     kp64s8k,kp64c8k), on the first form of the kernel, whose lost-score path read K from
#     its shared-memory stage and so released the stage after the vote;
#  r2 (123 s) with the defaults below, on the form that reads K from global memory there;
#  r3 (96 s) with RUNS=kp128x SAN=kp128x NCU_V=92642
#     PROBE_CASES=vx128s8k,vx128s16k,vx128c8k,vx128s2k: "-r-pn-kp" with the exponentials
#     taking turns ("-r-pn-kp-x").
# r1's kp128l ran d128_climb_lse, since dropped from test_fp8 (decision 140). The runs'
# summaries list each failed expectation's location line too (LSE's included: that grep kept
# them); `fails` keeps only the messages since. Its ncu step was
# written out in all three runs (lib.sh's pa_fp8_ncu_source since, the same commands). In the
# committed tree the "-kp" forms are tuning variants: step rows finds none without
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s48 'pa_hopper_fp8_kernelILi128ELi76258E' 1 test_fp8
export POLYATTN_CUDA_FP8=1
fails() { # the messages of a test_fp8 log's failed expectations, LSE's aside
  grep -h -A2 "Assertion Failed" "$1" | grep -v -e "Assertion Failed" -e "^--$" -e "lse err" |
    grep -vE '^\[----\] +$' | sed "s/^/$2: /" | tee -a "$SUMMARY"
  echo "$2: $(grep -c 'vs oracle on fp8' "$1") cases ran" | tee -a "$SUMMARY"
}
if [ "${DEFAULT:-0}" = 1 ]; then
  step test-default 150 test_fp8 --verbose --jobs 8
  fails "$LOG/test-default.log" default
fi
N128=d128_b2_gqa_s300_nolse,d128_varlen_causal_gqa_nolse,d128_softcap_s256_nolse
N128=$N128,d128_climb_nolse,d128_sq17_sk1000_window
L128=d128_b2_gqa_s300_tensor,d128_causal_sq200_sk333_block,d128_s1024_nodescale
L128=$L128,d128_sq1000_sk113_causal,d128_varlen_causal_gqa_block,d128_seqused_k_b2
L128=$L128,d128_climb_lse,d128_softcap_s256
N64=d64_causal_s1000_nolse,d64_varlen_seqused_nolse,d64_climb_nolse
L64=d64_b2_gqa_s300_block,d64_causal_s1000_tensor,d64_sq1_sk255_mqa,d64_varlen_seqused
FX=pingpong-gs-k192-t
declare -A VAR=([kp128n]=$FX-r-pn-kp [kp128l]=$FX-pn-kp [kp64n]=pipe-gs-t-wg3-r-pn-kp
  [kp64l]=pipe-gs-t-wg3-pn-kp [kp128x]=$FX-r-pn-kp-x)
declare -A CS=([kp128n]=$N128 [kp128l]=$L128 [kp64n]=$N64 [kp64l]=$L64 [kp128x]=$N128)
declare -A SC=([kp128n]=d128_climb_nolse,d128_b2_gqa_s300_nolse [kp64n]=d64_climb_nolse
  [kp128x]=d128_climb_nolse,d128_b2_gqa_s300_nolse)
for r in ${RUNS:-kp128n kp64n}; do
  step "test-$r" 120 env POLYATTN_CUDA_FP8_VARIANT="${VAR[$r]}" POLYATTN_TEST_CASES="${CS[$r]}" \
    test_fp8 --verbose --jobs 8
  fails "$LOG/test-$r.log" "$r"
done
grep -hE "vs oracle on fp8" "$LOG"/test-*.log | sed -E 's/^\[----\] //' | sort >"$LOG/oracle.txt"
for r in ${SAN:-kp128n kp64n}; do pa_fp8_sanitize "$r" "${VAR[$r]}" "${SC[$r]}"; done
step_wait
pa_check_summary
pa_probe "${PROBE_CASES:-vp128s8k,vp128s16k,vp128c8k,vp128s2k,vp128s4k,vp64s8k}" 2 400
keep=()
for v in ${NCU_V:-76258}; do
  command -v fp8_timeline0 >/dev/null || break
  pa_fp8_ncu_source "$v" 12
  keep+=("ncu-src-$v.csv.gz" "classes-$v.txt")
done
pa_gpu_pack_keep probe.log oracle.txt "${keep[@]}"
pa_gpu_finish
