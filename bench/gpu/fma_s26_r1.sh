#!/bin/bash
# Twenty-sixth session, R1 (issue 9): a share of hd64's softmax exponentials on the FMA
# pipe (pa_exp2_fma, FlashAttention-4's split; bf16 tuning variants "-x4": the last pair
# of every 4 on the FMA pipe, "-x8": of every 8) on the three kernels hd64's default runs:
# the persistent one (pingpong-rel-p-q2-os), the three-consumer grid one on 128-key tiles
# (serial-s3-rel-wg3) and on 192-key tiles (serial-rel-wg3-k192). Registers and local
# memory, SASS counts (MUFU.EX2, STL/LDL) of the hd64 kernels, clock_probe's e* cases in
# two rounds (sustained, beside cuDNN), the forward suite by default and with each -x4
# variant and the persistent -x8 forced (also on 3 blocks: many tiles per block), test_cuda,
# and compute-sanitizer on the persistent -x4 kernel.
# The -x4/-x8 variants were removed after R1-R4 (bench/RESULTS.md, twenty-sixth session:
# -x4 slower everywhere, -x8 within -1.6% to +1.7%): to run this again, apply
# bench/gpu/fma_s26_r1.patch (on 1a75a0e) and build with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON;
# without, their names run the default. (As run, the SASS step ran cuobjdump on the whole
# module twice per kernel, ~7 of the 10 minutes the run tool allows, which cut the run during
# the first forced sweep; R2 ran the sweeps. The step now dumps the module once, and lists
# 131100, the 128-key -x8 kernel, which the run skipped.)
# Run: source .devkit/env; OUT=dir bash bench/gpu/fma_s26_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_hopper_round fma_s26_r1 "Li64ELi(28682|94218|159754|28|65564|131100|32792|98328|163864)E" 300 \
  e512,e1k,ec2k,e2k,e4k,e8k,ec8k
cuobj=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
"$cuobj" -sass .devkit/lib/libpolyattn-cuda.so >/tmp/fma_s26_all.sass 2>&1
for v in 28682 94218 159754 28 65564 131100 32792 98328 163864; do
  # one kernel's listing: from its "Function :" line to the next one
  awk -v k="pa_hopper_fwd_kernelI13__nv_bfloat16Li64ELi${v}E" \
    '/Function : /{on = index($0, k) > 0} on' /tmp/fma_s26_all.sass >"$LOG/sass-$v.txt"
  echo "sass $v: $(grep -c HGMMA "$LOG/sass-$v.txt") HGMMA, $(grep -c 'MUFU.EX2' "$LOG/sass-$v.txt") MUFU.EX2, $(grep -c 'STL' "$LOG/sass-$v.txt") STL, $(grep -c 'LDL' "$LOG/sass-$v.txt") LDL, $(grep -cE '^ +/\*[0-9a-f]+\*/' "$LOG/sass-$v.txt") instructions" | tee -a "$SUMMARY"
done
pa_hopper_sweep x4p $V=pingpong-rel-p-q2-os-x4
pa_hopper_sweep x4p-b3 $V=pingpong-rel-p-q2-os-x4 POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sweep x8p $V=pingpong-rel-p-q2-os-x8
pa_hopper_sweep x4g $V=serial-s3-rel-wg3-x4
pa_hopper_sweep x4k $V=serial-rel-wg3-k192-x4
pa_fwd_checks_tail "d64"
pa_hopper_sanitizers gqa_8_2,causal_sq17_sk256,s1500_d64,window_d64 $V=pingpong-rel-p-q2-os-x4 POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
