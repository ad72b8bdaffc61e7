#!/bin/bash
# Twenty-fifth session, R1 (issue 9): S = Q.K^T with Q's A fragments in registers
# (wgmma's RS form, PA_HV_QRS; bf16-only tuning variants "pingpong-rel-p-q2-os-qrs" on
# the persistent kernel and "pingpong-rel-os-qrs" on the 128-key grid kernel). Registers
# and local memory of the kernels, the SASS of the hd128 persistent ones (where the local
# loads/stores sit against the HGMMAs), clock_probe's q* cases in two rounds (sustained,
# beside cuDNN), the forward suite by default and with each new variant forced (also the
# persistent one on 3 blocks: many query tiles per block, Q reloaded per tile), test_cuda,
# and compute-sanitizer with the persistent QRS kernel forced.
# The two variants were removed after this round (bench/RESULTS.md, twenty-fifth session:
# slower than the defaults; the 128-key grid one +0.8-0.9% over its base kernel, still
# behind the 176-key default): to run it again, apply bench/gpu/qrs_s25_r1.patch (on e395431)
# and build with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON; without, their names run the default.
# Run: source .devkit/env; OUT=dir bash bench/gpu/qrs_s25_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup qrs_s25_r1 python3 nvidia-smi test_forward test_cuda
STEP_TAIL=0
pa_hopper_resources "Li(28682|94218|16394|81930)E"
cuobj=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
for v in 28682 94218; do
  fn=$("$cuobj" -sass .devkit/lib/libpolyattn-cuda.so |
    grep -oE "Function : [^ ]*pa_hopper_fwd_kernelI13__nv_bfloat16Li128ELi${v}E[^ ]*" | head -n 1 | cut -d' ' -f3)
  "$cuobj" -sass -fun "$fn" .devkit/lib/libpolyattn-cuda.so >"$LOG/sass-$v.txt" 2>&1
  echo "sass $v: $(grep -c HGMMA "$LOG/sass-$v.txt") HGMMA, $(grep -c 'STL' "$LOG/sass-$v.txt") STL, $(grep -c 'LDL' "$LOG/sass-$v.txt") LDL, $(grep -c LDSM "$LOG/sass-$v.txt") LDSM" | tee -a "$SUMMARY"
  grep -nE "HGMMA|STL|LDL|LDSM|SETMAXNREG|BAR.SYNC|EXIT" "$LOG/sass-$v.txt" | sed -E 's@/\*[0-9a-f]+\*/@@; s/ +/ /g' | cut -c1-90 >"$LOG/sass-$v-marks.txt"
done
step probe 300 python3 bench/gpu/clock_probe.py --rounds 2 --cases q512,q2k,qc4k,q64s512,q64s1k,q64c2k,q8k,qc16k
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 200 test_forward --verbose --jobs 8
pa_hopper_sweep qrs $V=pingpong-rel-p-q2-os-qrs
pa_hopper_sweep qrs-b3 $V=pingpong-rel-p-q2-os-qrs POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sweep qrsg $V=pingpong-rel-os-qrs
pa_fwd_checks_tail "s1000_causal_d128|s2048_d128"
pa_hopper_sanitizers gqa_8_2,causal_sq17_sk256,s1500_d64,s1000_causal_d128 $V=pingpong-rel-p-q2-os-qrs POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log sass-28682-marks.txt sass-94218-marks.txt
pa_gpu_finish
