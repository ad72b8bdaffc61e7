#!/bin/bash
# The check after the review commit (sixth session): the shared tensor-map entry point (fp8 and
# bf16 Hopper forward), the Hopper backward default and its statistics option. Run from a devkit.
gzip -d lib/*.gz 2>/dev/null
export POLYATTN_TEST_BACKENDS=cuda
st() { local n=$1 t=$2; shift 2; timeout "$t" "$@" > "$OUT/$n.log" 2>&1; echo "== $n rc=$?"; grep -hE "Synthesis" "$OUT/$n.log" | head -2; }
st test-fp8 30 test_fp8 --jobs 8
grep -E "lse err .* >|max err .* >|nmse .* >" $OUT/test-fp8.log | wc -l
st fwd-hopper 45 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 16
st bwd-default 30 test_backward --jobs 12
st bwd-stats 30 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_STATS=async test_backward --jobs 12
