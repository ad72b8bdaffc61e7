#!/bin/bash
# Forty-ninth session (issue 3): two orders of the Ampere kernel's tile loop, each as a pair of
# rows (hd128, hd64), one call per form on a module whose fwd_ampere.cu compiles them (a
# tuning build, or the form's switch on that file):
#   FORM=x (default): step 3 in P.V's k16 steps, m2k64-km-rs-x / m2k128tj-x (decision 142;
#     PA_CUDA_AMPERE_XPV=1; probe cases xq*);
#   FORM=lk: the next tile's copies after Q.K^T, m2k64-km-rs-lk / m2k128tj-lk (decision 143;
#     PA_CUDA_AMPERE_LK=1; probe cases lq*).
# In order:
#  1. a check that the module holds the form's four kernels (two rows, two dtypes);
#  2. in parallel: the forward sweep forced onto each row (POLYATTN_CUDA_KERNEL=ampere; the
#     hd128 row without LSE, POLYATTN_TEST_NO_LSE=1, since calls with LSE run m2k64-km), and
#     memcheck / racecheck on each row over five cases of its head dim (hd128 without LSE);
#  3. clock_probe's cases (two rounds, sustained): the default row beside the form's row and
#     SDPA flash.
# Run in the forty-ninth session on H100s: FORM=x 198 s (bench/results/2026-12-07s49-x/), 3-6%
# slower than the default rows; FORM=lk 206 s (bench/results/2026-12-07s49-lk/; run as
# s49_lk.sh, the same commands, folded in here since), 1-5% slower. Neither kept.
# Run: source .devkit/env; OUT=dir [FORM=lk] bash bench/gpu/s49_x.sh   (~5 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case ${FORM:=x} in
  x) V128=14 V64=15 P=xq ;;
  lk) V128=16 V64=17 P=lq ;;
  *) echo "FORM: x or lk" >&2; exit 2 ;;
esac
pa_gpu_start "s49_$FORM" \
  "pa_ampere_fwd_kernelI(13__nv_bfloat16|6__half)Li(128ELi$V128|64ELi$V64)ELb0E" 4 test_forward
X128="POLYATTN_CUDA_AMPERE_VARIANT=m2k64-km-rs-$FORM POLYATTN_TEST_NO_LSE=1"
X64=POLYATTN_CUDA_AMPERE_VARIANT=m2k128tj-$FORM
pa_ampere_row_sweep "${FORM}128-nolse" $X128
pa_ampere_row_sweep "${FORM}64" $X64
C128=s1000_causal_d128,s4352_d128,auto_clustered_causal_gqa,block_dense1_sparse,d128_s128_b2
C64=d64_s64_h4,dv32_d64,s1500_d64,s1500_causal_d64,s2500_causal_softcap_d64
for tool in memcheck racecheck; do
  pa_ampere_row_sanitize $tool "${FORM}128" "$C128" $X128
  pa_ampere_row_sanitize $tool "${FORM}64" "$C64" $X64
done
step_wait
pa_check_summary
CASES=${P}128s8k,${P}128s2k,${P}128s16k,${P}128c8k,${P}128h8k,${P}64s8k,${P}64s2k,${P}64c8k
pa_probe "${PROBE_CASES:-$CASES}" 2 330
pa_gpu_pack_keep probe.log
pa_gpu_finish
