#!/bin/bash
# Thirty-third session, call 2 (issues 3 and 9; after keep_s33_probe.sh): correctness of the kept-maximum tuning
# variants in one call, all in parallel -- keep_s32.sh PART=a (the Ampere rows m2k64-km and
# m2k128tj-km: forward suite forced onto each, memcheck / racecheck per head dim; hd256's
# Hopper pingpong-rel-os-km: suite forced, memcheck / racecheck), and keep_s31_r2.sh's
# sanitizers on the grid kernels' "-km" forms (the candidates keep_default_s31.patch makes
# default). keep_s31_r2.sh's "-km1" sweeps are left out (decision 124: "-km1"
# saves one vote per query tile, not measured).
# Needs a tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON).
# Run: source .devkit/env; OUT=dir bash bench/gpu/keep_s33_a.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup keep_s33_a python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
A128=s1000_causal_d128,s4352_d128,nm24_d128_gqa_causal,det_prefill,block_dense1_sparse
A64=s1500_d64,s1500_causal_d64,s8400_alibi_d64,alibi_softcap_window_gqa,nm24_d64_s1000
pa_ampere_rows m2k64-km km128 "$A128" m2k64-km m2k128tj-km &
pa_ampere_rows m2k128tj-km km64 "$A64" &
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg os-km pingpong-rel-os-km
H=d256_varlen_causal_gqa,s1000_causal_d128,det_prefill,alibi_softcap_window_gqa
pa_hopper_sanitizer step_bg memcheck-os-km 300 2 memcheck "$H" POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-km
pa_hopper_sanitizer step_bg racecheck-os-km 300 2 racecheck "$H" POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-km
GRID=s1500_d64,s8400_d64,s4352_d128,s2500_causal_d64,s8400_alibi_d64,s1500_causal_d64
for v in pingpong-rel-k176-os-km serial-s3-rel-wg3-km serial-rel-wg3-k192-km; do
  pa_hopper_sanitizer step_bg "memcheck-$v" 300 2 memcheck "$GRID" POLYATTN_CUDA_HOPPER_VARIANT=$v
  pa_hopper_sanitizer step_bg "racecheck-$v" 300 2 racecheck "$GRID" POLYATTN_CUDA_HOPPER_VARIANT=$v
done
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
pa_gpu_pack_logs
pa_gpu_finish
