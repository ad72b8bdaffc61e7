#!/bin/bash
# Thirty-seventh session (issue 9), written for a later session and NOT run: no device was
# lent in the thirty-seventh. One call on a tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON,
# -DPOLYATTN_CUDA_ARCHS=90; the devkit's library gzipped):
#   - hd64's 192-key serial kernel peeled ("serial-rel-wg3-k192-km1-pl", PA_HV_PEEL: a
#     query tile's first key tile before the key loop; key loop 1256 SASS instructions
#     against the default "-km1"'s 1687, no spills): the forward sweep forced onto it and
#     memcheck / racecheck / synccheck over hd64 cases;
#   - hd256's "pingpong-rel-os-km1" (the kept maximum without the first key tile's vote):
#     the sweep forced onto it (its bf16 hd256 cases run it; fp16 and the other head dims
#     run their defaults) and the three sanitizers over hd256 cases;
#   - then, if all passed, clock_probe (two rounds, sustained): pl64s8k, pl64c8k, pl64s16k
#     (the default "-km1" beside "-km1-pl", "-km" and cuDNN; adopt the peel as the default
#     if it leads "-km1" in every row on two cards), ke256s8k, ke256c8k, ke256s16k (hd256's
#     default "-km" beside "-km1" and cuDNN) and be128s4k (hd128 S4096, the persistent
#     bound: the persistent default beside the grid default's "-km1" form, "pa:g").
# Run: source .devkit/env; OUT=dir bash bench/gpu/s37.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup s37 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
# a tuning build: hd64's peeled 192-key kernel (V 1605656) and hd256's "-km1" (V 540682)
pa_require_kernels 'pa_hopper_fwd_kernelI13__nv_bfloat16Li(64ELi1605656|256ELi540682)E' 2
[ "$FAILED" = 0 ] || pa_gpu_finish
G64=s8400_d64,s2500_causal_d64,s1500_d64
G256=d256_s255,d256_varlen_causal_gqa,d256_alibi_softcap_window,s2048_causal_d256
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg k192-pl serial-rel-wg3-k192-km1-pl
pa_hopper_variant_sweep_bg d256-km1 pingpong-rel-os-km1
pa_hopper_sanitizers_bg k192-pl 300 "$G64" POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-wg3-k192-km1-pl
pa_hopper_sanitizers_bg d256-km1 300 "$G256" POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-km1
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
P=pl64s8k,pl64c8k,pl64s16k,ke256s8k,ke256c8k,ke256s16k,be128s4k
if [ "$FAILED" = 0 ]; then
  step probe 420 python3 -u bench/gpu/clock_probe.py --rounds 2 --cases "$P"
  grep -hE "^(${P//,/|}) " "$LOG/probe.log" | tee -a "$SUMMARY" >/dev/null
fi
pa_gpu_pack_keep probe.log
pa_gpu_finish
