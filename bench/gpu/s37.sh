#!/bin/bash
# Thirty-seventh session (issue 9), written for a later session and NOT run: no device was
# lent in the thirty-seventh. A tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON,
# -DPOLYATTN_CUDA_ARCHS=90; the devkit's library gzipped) holds five bf16 tuning variants:
#   - "serial-rel-wg3-k192-km1-pl" (PA_HV_PEEL): hd64's 192-key serial kernel with a query
#     tile's first key tile before the key loop (key loop 1256 SASS instructions against
#     the default "-km1"'s 1687; no spills);
#   - hd256's "pingpong-rel-os-km1" (the kept maximum without the first key tile's vote);
#   - "-pn" (PA_HV_PLAIN: the score pass without the softcap / ALiBi / block-mask paths,
#     plain problems only; the others run the default) on hd256's default
#     ("pingpong-rel-os-km-pn": key loop 955 instructions against 4524) and on the
#     persistent defaults ("pingpong-rel-p-q2-os-km1-pn" hd128, "...-lag-km1-pn" hd64).
# PART=check: the forward sweep forced onto each (the persistent ones on 3 blocks, so that
# each block walks many tiles), then memcheck / racecheck / synccheck on each over cases
# of its head dim that it runs; PART=probe: clock_probe, two rounds, sustained: pl64* (the
# default beside "-pl", "-km" and cuDNN: adopt the peel if it leads in every row on two
# cards), ke256* (hd256's default beside "-km1", "-km-pn" and cuDNN), pn* (the persistent
# defaults beside "-pn" and cuDNN at S512-2048) and be128s4k (the hd128 S4096 bound: the
# persistent default beside the grid default's "-km1" form). PART=all (the default) runs
# both in one call (~8 min); the probe only if every check passed.
# Run: source .devkit/env; OUT=dir [PART=check|probe|all] bash bench/gpu/s37.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PART=${PART:-all}
pa_gpu_setup "s37_$PART" python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
# a tuning build: the five variants' bf16 kernels (V 1605656 at hd64; 540682, 2375690 at
# hd256; 2650122 at hd128; 2846730 at hd64)
pa_require_kernels 'pa_hopper_fwd_kernelI13__nv_bfloat16Li(64ELi1605656|256ELi540682|256ELi2375690|128ELi2650122|64ELi2846730)E' 5
[ "$FAILED" = 0 ] || pa_gpu_finish
V=POLYATTN_CUDA_HOPPER_VARIANT
if [ "$PART" != probe ]; then
  export POLYATTN_TEST_BACKENDS=cuda
  pa_hopper_variant_sweep_bg k192-pl serial-rel-wg3-k192-km1-pl
  pa_hopper_variant_sweep_bg d256-km1 pingpong-rel-os-km1
  pa_hopper_variant_sweep_bg d256-pn pingpong-rel-os-km-pn
  pa_hopper_variant_sweep_bg p-pn pingpong-rel-p-q2-os-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
  pa_hopper_variant_sweep_bg lag-pn pingpong-rel-p-q2-os-lag-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
  pa_hopper_sanitizers_bg k192-pl 300 s8400_d64,s2500_causal_d64,s1500_d64 \
    $V=serial-rel-wg3-k192-km1-pl
  step_wait
  G256=d256_s255,d256_varlen_causal_gqa,d256_seqused_k_no_lse,s2048_causal_d256
  pa_hopper_sanitizers_bg d256-km1 300 "$G256" $V=pingpong-rel-os-km1
  pa_hopper_sanitizers_bg d256-pn 300 "$G256" $V=pingpong-rel-os-km-pn
  pa_hopper_sanitizers_bg lag-pn 300 s1500_d64,s1500_causal_d64,causal_sq113_sk64_emptyrows \
    $V=pingpong-rel-p-q2-os-lag-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
  pa_hopper_sanitizers_bg p-pn 300 s1000_causal_d128,d128_s128_b2,s4352_d128 \
    $V=pingpong-rel-p-q2-os-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
  step_wait
  unset POLYATTN_TEST_BACKENDS
  pa_check_summary
fi
P=pl64s8k,pl64c8k,pl64s16k,ke256s8k,ke256c8k,ke256s16k,pn128s512,pn128s2k,pn64s512,pn64s1k,be128s4k
[ "$PART" != check ] && [ "$FAILED" = 0 ] && pa_probe "$P" 2 420
pa_gpu_pack_keep probe.log
pa_gpu_finish
