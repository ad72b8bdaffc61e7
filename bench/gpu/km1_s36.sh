#!/bin/bash
# Thirty-sixth session (issues 3 and 9), one call on a tuning build
# (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON):
#   1. the Ampere path's hd64 tuning rows since decision 126 (one ldmatrix offset register
#      per lane on every dense hd64 row): "m2k128tj-km" (ak64*) and "m2k128tj-rs" (rs64*,
#      run without LSE) beside the default row m2k128tj and SDPA flash, sustained
#      (clock_probe, two rounds); before decision 126 they measured 1.9-2.6% and 0.5-1.4%
#      behind the default;
#   2. the persistent Hopper kernels' kept maximum without the vote on a query tile's
#      first key tile ("-km1", PA_HV_KEEPM1; written in the thirty-first session, never
#      run) beside "-km" and the default (the running maximum) and cuDNN (kq* cases);
#      the thirty-first session measured "-km" there +3% at hd64 S1024 / causal 2048 but
#      -3% at S256, the cost put on a query tile's first key tile;
#   3. correctness of "-km1" on both persistent kernels: the forward sweep forced onto each
#      (3 blocks, as their reach needs), memcheck / racecheck / synccheck on hd64's over
#      short cases.
# Run in the thirty-sixth session on an H200 (every step passed; bench/results/2026-12-05s36-km1/km1/).
# Run: source .devkit/env; OUT=dir bash bench/gpu/km1_s36.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup km1_s36 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
# a tuning build: hd64's "-km" and "-rs" Ampere rows (V 9, 10) in both dtypes
pa_require_kernels 'pa_ampere_fwd_kernelI[0-9_a-z]+Li64ELi(9|10)ELb0' 4
[ "$FAILED" = 0 ] || { pa_gpu_finish; exit 1; }
step probe-amp 200 python3 -u bench/gpu/clock_probe.py --rounds 2 \
  --cases ak64s8k,ak64c8k,rs64s2k,rs64s8k
step probe-km1 260 python3 -u bench/gpu/clock_probe.py --rounds 2 \
  --cases kq64s256,kq64s512,kq64s1k,kq64c2k,kq128s1k,kq128s2k
SHORT=s1500_d64,s1500_causal_d64,s2500_causal_softcap_d64,alibi_softcap_window_gqa,causal_sq113_sk64_emptyrows,s1000_causal_d128
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg lag-km1 pingpong-rel-p-q2-os-lag-km1 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg p-km1 pingpong-rel-p-q2-os-km1 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sanitizers_bg lag-km1 240 "$SHORT" POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os-lag-km1 \
  POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
grep -hE "^(ak|rs|kq)[0-9]" "$LOG"/probe-*.log | tee -a "$SUMMARY" >/dev/null
pa_gpu_pack_keep probe-amp.log probe-km1.log
pa_gpu_finish
