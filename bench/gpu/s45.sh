#!/bin/bash
# Forty-fifth session (issue 9): hd256's kernel with the kept maximum decided on the row sums
# and the plain-only score pass ("pingpong-rel-os-km-pn-ks"; decision 134's vote, whose
# hd256 form with the general score path spilled 148 bytes and ran 4% slower in the
# forty-third session), one call on a module for sm_90 (see below for the build). In order:
#  1. a check that the module holds the form (bf16);
#  2. clock_probe's kh256* cases (two rounds, sustained at the power cap): the default beside
#     the form by name and cuDNN, S 2048 / 8192 / 16384, causal 8192, fp16 8192;
#  3. in parallel: test_cuda (its ks_climb_d256 cases take the form's slow steps: the
#     reference moved by powers of two, and overflowed exponentials recomputed by mma.sync)
#     and compute-sanitizer memcheck / racecheck / synccheck on the ks_climb_d256 cases; then
#     the forward sweep forced onto the form (its hd256 plain cases; the others run their
#     defaults; hd256's kernel is a grid kernel, so no capped-block run).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s45.sh   (~4 min)
# Run in the forty-fifth session on an H100 (203 s; bench/results/2026-12-06s45-ks256/) on a
# module whose variant list compiled the form in every build (fp16 and bf16); it is a bf16
# tuning variant since (decision 136: level with the default), so a rerun needs a build with
# -DPOLYATTN_CUDA_TUNING_VARIANTS=ON, and checks for the bf16 kernel only.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_start s45 'pa_hopper_fwd_kernelI13__nv_bfloat16Li256ELi10764298E' 1 \
  test_forward test_cuda
pa_probe "${PROBE_CASES:-kh256s8k,kh256s16k,kh256s2k,kh256c8k,kh256h8k}" 2 200
export POLYATTN_TEST_BACKENDS=cuda
pa_cuda_checks 'cuda/ks_climb_d256*'
step_bg sweep-ks256 300 env POLYATTN_CUDA_KERNEL=hopper \
  POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-os-km-pn-ks \
  test_forward --verbose --filter 'forward/sweep' --jobs 2
pa_ks_climb_tail
