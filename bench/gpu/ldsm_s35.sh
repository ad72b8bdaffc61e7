#!/bin/bash
# Thirty-fifth session (issue 3): the Ampere forward kernel with the lane's ldmatrix
# offsets as one register each (pa_ldsm_lane ONE, ampere_tile.cuh; dense kernels only)
# against the committed build. ptxas: hd64's m2k128tj spills 8 bytes instead of 16 (the
# ncu source page of the thirty-fourth session put 4 local loads in its key loop, ~2.5% of
# the loop's warp samples on the loads themselves). Two builds of the CUDA module, the
# committed one in .devkit/lib and the ONE build's libpolyattn-cuda.so in .devkitONE/
# (POLYATTN_BACKEND_PATH picks it, `polyattn devices` logs which module ran), timed in
# alternate processes, two rounds each: clock_probe's xa* cases (the Ampere default rows
# beside SDPA flash, sustained at the power cap); the measure is each process's ratio to
# flash. Then the ONE build's correctness: the suite forced onto the Ampere kernel with LSE
# as the cases ask and without LSE, memcheck / racecheck on it over hd64 and hd128 cases.
# ~5 min. Run: source .devkit/env; OUT=dir bash bench/gpu/ldsm_s35.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz .devkitONE/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ldsm_s35 python3 nvidia-smi test_forward polyattn
pa_gpu_state
ONE=$PWD/.devkitONE
[ -f "$ONE/libpolyattn-cuda.so" ] || { echo "no $ONE/libpolyattn-cuda.so"; exit 2; }
md5sum .devkit/lib/libpolyattn-cuda.so "$ONE/libpolyattn-cuda.so" | tee -a "$SUMMARY"
polyattn devices | grep -E "^cuda" | tee -a "$SUMMARY"
POLYATTN_BACKEND_PATH=$ONE polyattn devices | grep -E "^cuda" | tee -a "$SUMMARY"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
XCASES=xa64s2k,xa64s8k,xa64c8k,xa64s16k,xa128s8k,xa128c8k
for r in 0 1; do
  step "probe-base-$r" 180 python3 -u bench/gpu/clock_probe.py --rounds 1 --cases "$XCASES"
  step "probe-one-$r" 180 env POLYATTN_BACKEND_PATH="$ONE" \
    python3 -u bench/gpu/clock_probe.py --rounds 1 --cases "$XCASES"
done
ACASES=s1000_causal_d128,s4352_d128,auto_clustered_causal_gqa,block_dense1_sparse,d128_s128_b2
HCASES=d64_b2_gqa_s300_block,d64_causal_s1000_nolse,s1500_causal_d64,s2500_causal_softcap_d64,d64_varlen_seqused
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_BACKEND_PATH=$ONE POLYATTN_CUDA_KERNEL=ampere
step_bg sweep-ampere 240 test_forward --verbose --filter 'forward/sweep' --jobs 6
step_bg sweep-ampere-nolse 240 env POLYATTN_TEST_NO_LSE=1 \
  test_forward --verbose --filter 'forward/sweep' --jobs 6
for tool in memcheck racecheck; do
  step_bg "$tool-ampere" 240 env POLYATTN_TEST_NO_LSE=1 POLYATTN_TEST_CASES="$ACASES,$HCASES" \
    "$CS" --tool "$tool" --error-exitcode 99 --print-limit 20 \
    test_forward --filter 'forward/sweep' --jobs 2
done
step_wait
pa_check_summary
grep -hE "^xa" "$LOG"/probe-*.log | tee -a "$SUMMARY" >/dev/null
pa_gpu_pack_keep probe-base-0.log probe-one-0.log probe-base-1.log probe-one-1.log
pa_gpu_finish
