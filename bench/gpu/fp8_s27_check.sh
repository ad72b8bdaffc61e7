#!/bin/bash
# Twenty-seventh session: the FP8 forward after d39772a (the library's compiled-variant
# switch moved into pa_fp8_run(v, ...), host code only, PTX identical; not run on a GPU in
# the twenty-sixth session): test_fp8's cases with the defaults (it exits 1 on its LSE
# cases by design, decision 78: the synthesis and oracle lines are the result) and the
# FP8 hd128 S8192 forward sustained beside cuDNN (clock_probe.py ffp8).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s27_check.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s27_check python3 nvidia-smi test_fp8
STEP_TAIL=0
pa_fp8_test ""
step probe 60 python3 bench/gpu/clock_probe.py --rounds 2 --cases ffp8
grep -E "Tested|FAIL" "$LOG/test-default.log" | head -20 >>"$SUMMARY"
pa_gpu_pack_keep probe.log oracle-lines.txt test-default.log
pa_gpu_finish
