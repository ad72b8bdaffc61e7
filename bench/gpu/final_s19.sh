#!/bin/bash
# Nineteenth session, the committed code's check (issue 9, decision 110): hd128 plain
# problems with more than 2048 keys on the 176-key grid kernel with O through shared
# memory, FP8 hd128 without LSE on its row sums by the tensor cores. The forward suite
# (default choice), the 176-key kernel forced on every Hopper case (also with O's
# register-store fallback), test_cuda, the backward suite, test_fp8 with the defaults;
# then clock_probe.py (one round; sustained with the SM clock and board power, and
# compare_torch's timer) on the standard sweep's hd128 lengths beside the previous
# default and SDPA flash / cuDNN, hd64, FP8. The test_fp8 step reads FAIL (exit 1) by
# design (its 11 LSE cases, decision 78): its summary line is the result.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s19.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s19 python3 nvidia-smi test_forward test_cuda test_backward test_fp8
STEP_TAIL=0
pa_cuda_suites
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-k176os 200 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-k176-os test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-k176os-otma0 200 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-k176-os POLYATTN_CUDA_HOPPER_O_TMA=0 test_forward --verbose --filter 'forward/sweep' --jobs 8
grep -hE "Synthesis" "$LOG"/sweep-k176os*.log | tee -a "$SUMMARY"
pa_fp8_test ""
step probe 300 python3 bench/gpu/clock_probe.py --rounds 1 --cases f2048,f4096,f8192,f16384,fc16k,fd64,ffp8
pa_gpu_pack_keep probe.log
pa_gpu_finish
