#!/bin/bash
# Twentieth session, R1 (issue 9): hd64's three-consumer grid kernel on 192-key tiles
# ("serial-s3-rel-wg3-k192", "serial-rel-wg3-k192": FlashAttention-3's hd64 non-causal
# tile; bf16 only in this build) against the default's 128-key tiles, sustained with the
# clock and power beside each (clock_probe.py, two rounds), S 2048-16384, causal 8192 and
# 16384. Also the nineteenth session's unrun check (final3_s19.sh): the forward suite by
# default choice (with its new cases s4352_d128, s1500_d64, s1500_causal_d64), the
# 176-key kernel forced; the new variants forced on every Hopper case; compute-sanitizer
# memcheck / racecheck / synccheck with the three-stage one forced on hd64 cases.
# Its tree (not committed): fc46d93's defaults plus the K192 bit and two bf16-only
# variants, X("serial-s3-rel-wg3-k192", PA_HOPPER_SERIAL | PA_HV_STAGES3 | PA_HV_RELEASE
# | PA_HV_WG3 | PA_HV_K192, 0) and serial-rel-wg3-k192 (full 0 then). In later trees the
# first name is not listed and runs the default; since decision 112 bf16-only variants
# need -DPOLYATTN_CUDA_TUNING_VARIANTS=ON.
# Run: source .devkit/env; OUT=dir bash bench/gpu/k192_s20_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup k192_s20_r1 python3 nvidia-smi test_forward
STEP_TAIL=0
# registers and spills of the hd64 Hopper kernels (the 192-key ones: V = 32796 / 32792)
pa_hopper_resources "3279[26]"
step probe 360 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases s20d64,s20d64s2k,s20d64s4k,s20d64s16k,s20d64c8k,s20d64c16k
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 200 test_forward --verbose --jobs 8
pa_hopper_sweep k176os $V=pingpong-rel-k176-os
pa_hopper_sweep k192 $V=serial-s3-rel-wg3-k192
pa_hopper_sweep k192s2 $V=serial-rel-wg3-k192
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
grep -hE "s4352|s1500" "$LOG"/sweep-default.log | head -12 | tee -a "$SUMMARY"
pa_hopper_sanitizers gqa_8_2,causal_sq17_sk256,s1500_d64,s1500_causal_d64 $V=serial-s3-rel-wg3-k192
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
