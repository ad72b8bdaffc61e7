#!/bin/bash
# Final check of merged main on the H200 (sixth session): default choices, forced
# Hopper sweep (hd 64/128/256), backward, test_cuda, the fp8 suite (opt-in kernel),
# sanitizers on small cases, same-process PyTorch figures. Run from a devkit with
# compare_torch.py and bindings/python beside it:
#   cd KIT && source ./env && OUT=dir bash final_s6.sh
# Logs: bench/results/2026-11-30s6-h200-final/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|\[FAIL\]|^backward|^forward|ERROR SUMMARY|passed|failed" "$R/$n.log" | head -6 | cut -c1-200; }
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st fwd-default 60 test_forward --jobs 16
st bwd-default 30 test_backward --jobs 12
st test-cuda 25 test_cuda --jobs 8
st test-fp8 30 test_fp8 --jobs 8
st fwd-hopper 45 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 16
st memcheck-bwd 45 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_causal_sq,bw_window_16_4 $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 4
st memcheck-fwd 45 env POLYATTN_TEST_CASES=decode_s1,d256_s3,auto_t0.9 $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
timeout 35 python3 bench/compare_torch.py --dtypes bf16 --dims 128,64,256 --seqlens 8192 --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-fwd.jsonl" > "$R/torch-fwd.txt" 2>&1; echo "== torch-fwd rc=$?"; grep -E "^bf16|geomean" "$R/torch-fwd.txt" | cut -c1-170
timeout 25 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128,64 --seqlens 8192 --lib "$PWD/lib/libpolyattn.so" --json "$R/torch-bwd.jsonl" > "$R/torch-bwd.txt" 2>&1; echo "== torch-bwd rc=$?"; grep -E "^bf16|geomean" "$R/torch-bwd.txt" | cut -c1-170
POLYATTN_LIB=$PWD/lib timeout 30 python3 -m pytest -q bindings/python/tests/test_training.py > "$R/pytest-training.log" 2>&1; echo "== pytest-training rc=$?"; tail -2 "$R/pytest-training.log"
echo "total $((SECONDS-T0))s"
