#!/bin/bash
# Written in the thirty-sixth session (issue 9) for a later one, NOT run (no device time
# left): the serial wide-tile Hopper kernel with "-km1" (hd64's 192-key
# "serial-rel-wg3-k192-km1", a default since decision 127) takes a query tile's first key
# tile before its loop (bench/gpu/peel_s36.patch, which applies to a841583), so the loop
# keeps only the kept maximum's steps. The SASS without it
# (bench/results/2026-12-05s36-km1/sass-km1.txt): that kernel has a 1687-instruction key
# loop against "-km"'s 1263, both softmax forms inside it behind visit == 1; measured +0.5-1.1% over "-km" anyway (km1c_s36.sh, an H100). Peeled
# (tuning cubin, nvdisasm 11.8): its loop 1256 instructions, no spills. The three-consumer
# "serial-s3-rel-wg3-km1" (level with "-km" unpeeled) spilled when peeled, so the patch
# leaves the kernels with the general score passes alone. The other kernels' PTX: see
# bench/results/2026-12-05s36-km1/peel-ptx.txt.
# Build: git apply bench/gpu/peel_s36.patch; a tuning build
# (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON, -DPOLYATTN_CUDA_ARCHS=90); devkit. Then:
#   1. correctness, in parallel: the forward sweep forced onto the peeled kernel (both
#      dtypes: it is a default), memcheck / racecheck / synccheck on it over hd64 cases;
#   2. clock_probe kq64s8k, kq64c8k (two rounds): the default (the peeled "-km1"), "-km",
#      "-km1" (the default again) and cuDNN. Adopt the patch if the peeled "-km1" gains
#      over "-km" more than the thirty-sixth session's unpeeled one did (+0.5% / +1.1% at
#      S8192, +0.6% / +0.6% causal, on another card) over two calls.
# Run: source .devkit/env; OUT=dir bash bench/gpu/peel_s36.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup peel_s36 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
# a tuning build: the 192-key kernel's "-km" (V 294936 = PA_HV_K192_BITS | KEEPM)
pa_require_kernels 'pa_hopper_fwd_kernelI13__nv_bfloat16Li64ELi294936E' 1
[ "$FAILED" = 0 ] || pa_gpu_finish
GRID=s8400_d64,s2500_causal_d64,s1500_d64,s1500_causal_d64
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_variant_sweep_bg k192-km1 serial-rel-wg3-k192-km1
pa_hopper_sanitizers_bg k192-km1 240 "$GRID" POLYATTN_CUDA_HOPPER_VARIANT=serial-rel-wg3-k192-km1
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
[ "$FAILED" = 0 ] && pa_probe kq64s8k,kq64c8k
pa_gpu_pack_keep probe.log
pa_gpu_finish
