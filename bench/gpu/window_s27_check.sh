#!/bin/bash
# Twenty-seventh session: the Ampere kernel's hd64 default m2k128tj now also under
# sliding windows (decision 118; window_s27.sh timed it against m2j): the forward suite's
# hd64 window cases forced onto the Ampere kernel with the default variant, and memcheck
# and racecheck on them (R3 sanitized the row on unwindowed cases).
# Run: source .devkit/env; OUT=dir bash bench/gpu/window_s27_check.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup window_s27_check test_forward
STEP_TAIL=0
CASES='window_left16,window_right8,window_32_16_sq<sk,window_causal_left20,alibi_softcap_window_gqa,nm24_sk113_window'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_CASES=$CASES
step_bg sweep-windows 60 test_forward --verbose --jobs 4 --filter 'forward/sweep'
for tool in memcheck racecheck; do
  step_bg $tool-windows 100 "$SAN" --tool $tool --error-exitcode 99 --print-limit 20 \
    test_forward --filter 'forward/sweep' --jobs 4
done
step_wait
grep -hE "Synthesis" "$LOG/sweep-windows.log" | tee -a "$SUMMARY"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck-windows.log "$LOG"/racecheck-windows.log |
  sort | uniq -c | tee -a "$SUMMARY"
pa_gpu_pack_keep sweep-windows.log
pa_gpu_finish
