#!/bin/bash
# Fourteenth session, the last check of the committed code (the Ampere whole-tile copies
# and the decode kernel's swizzled ring): the whole forward suite with the default
# kernel choice, test_cuda, the backward suite, and the decode timing once more.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final_s14.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s14 polyattn test_forward test_cuda test_backward
export POLYATTN_TEST_BACKENDS=cuda
step sweep-default 200 test_forward --verbose --jobs 8
step test-cuda 120 test_cuda --verbose
step backward 120 test_backward --verbose --jobs 8
step decode 100 python3 bench/gpu/decode_variants.py --timers graph --variants "default:;default-again:" --json "$LOG/decode.jsonl"
grep -hE "Synthesis" "$LOG"/sweep-default.log "$LOG"/test-cuda.log "$LOG"/backward.log | tee -a "$SUMMARY"
grep -vh "^#" "$LOG/decode.log" | grep -E "^ +[0-9]" | cut -c1-100 | tee -a "$SUMMARY"
cp "$LOG/decode.jsonl" /tmp/decode.jsonl
pa_gpu_pack_logs
cp /tmp/decode.jsonl "$LOG/"
pa_gpu_finish
