#!/bin/bash
# Eighteenth session, the check after the final review (bind_workspace binds the ticket
# words after part_o; a comment reflowed): the decode sweep (default and 12 splits), graph
# capture, 20-run identity, memcheck on two decode cases.
# Run: source .devkit/env; OUT=dir bash bench/gpu/final3_s18.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final3_s18 test_forward test_cuda
STEP_TAIL=0
export POLYATTN_TEST_BACKENDS=cuda
pa_decode_sweeps splits12:POLYATTN_CUDA_DECODE_SPLITS=12
pa_decode_sanitizer memcheck memcheck decode_varlen_seqused_gqa,many_splits
pa_gpu_finish
