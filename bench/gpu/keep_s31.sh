#!/bin/bash
# Thirty-first session (issue 9): the kept maximum. A row's softmax reference m moves only
# where a score exceeds it by more than 8 (log2 units; FlashAttention-4's conditional
# rescaling), decided by a warp vote on each thread's own row maxima, so most key tiles
# skip the quad shuffles, alpha's exponentials and O's rescale ("-km", PA_HV_KEEPM); "-sp"
# (PA_HV_SPEC) also computes the exponentials against the kept m beside the vote (hd64's
# persistent kernel: S is kept until the vote). bf16 tuning variants on each kernel the
# defaults run. PART=a: correctness (the forward suite by default and forced onto each
# new variant, the persistent ones on 3 blocks; sanitizers on "-lag-sp" and "-lag-km"),
# then the hd64 persistent timings (clock_probe, two rounds, sustained); PART=b: the
# other kernels' timings.
# (Its forced sweeps moved to lib.sh's pa_hopper_variant_sweep_bg after the run: the same
# commands.)
# Run: source .devkit/env; OUT=dir PART=a bash bench/gpu/keep_s31.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup keep_s31_${PART:-a} python3 nvidia-smi test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
V=POLYATTN_CUDA_HOPPER_VARIANT
if [ "${PART:-a}" = a ]; then
  CASES=d64_s64_h4,s1500_causal_d64,varlen_empty,varlen_causal_gqa,varlen_block,block64_bcast_diag,causal_sq113_sk64_emptyrows,softcap5,alibi_softcap_window_gqa,s1000_causal_d128
  export POLYATTN_TEST_BACKENDS=cuda
  step_bg sweep-default 300 test_forward --jobs 2
  pa_hopper_variant_sweep_bg lag-sp pingpong-rel-p-q2-os-lag-sp POLYATTN_CUDA_HOPPER_BLOCKS=3
  pa_hopper_variant_sweep_bg lag-km pingpong-rel-p-q2-os-lag-km POLYATTN_CUDA_HOPPER_BLOCKS=3
  pa_hopper_variant_sweep_bg p-km pingpong-rel-p-q2-os-km POLYATTN_CUDA_HOPPER_BLOCKS=3
  pa_hopper_variant_sweep_bg k176-km pingpong-rel-k176-os-km
  pa_hopper_variant_sweep_bg wg3-km serial-s3-rel-wg3-km
  pa_hopper_variant_sweep_bg k192-km serial-rel-wg3-k192-km
  pa_hopper_sanitizers_bg sp 300 "$CASES" POLYATTN_CUDA_HOPPER_BLOCKS=3 $V=pingpong-rel-p-q2-os-lag-sp
  step_wait
  pa_hopper_sanitizer step memcheck-km 200 4 memcheck "$CASES" POLYATTN_CUDA_HOPPER_BLOCKS=3 $V=pingpong-rel-p-q2-os-lag-km
  unset POLYATTN_TEST_BACKENDS
  pa_check_summary
  [ "$FAILED" = 0 ] && step probe 260 python3 bench/gpu/clock_probe.py --rounds 2 \
    --cases kp64s512,kp64s1k,kp64c1k,kp64c2k,kp64s256
else
  step probe 480 python3 bench/gpu/clock_probe.py --rounds 2 \
    --cases kp128s512,kp128s1k,kp128s2k,kp128c2k,kp128s8k,kp128s16k,kp64s2k,kp64s4k,kp64s8k,kp64c8k
fi
pa_gpu_pack_keep probe.log
pa_gpu_finish
